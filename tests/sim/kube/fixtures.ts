/**
 * Test doubles and builders for the simulated Kubernetes API server: a manually advanced clock and
 * scheduler, recording faults and request log, object builders, and a server on 127.0.0.1.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

import { KubeConfig } from '@kubernetes/client-node';

import type {
  FaultInjector,
  InjectedFault,
  KubeObject,
  KubeStore,
  LatencyProfile,
  RequestLog,
  Scheduler,
  SimClock,
} from '../../../sim/contracts.js';
import { KAMINO_OBSERVED } from '../../../sim/contracts.js';
import type { KubeHandler } from '../../../sim/kube/handler.js';
import { createKubeHandler } from '../../../sim/kube/handler.js';
import type { KubeAuthorizer, KubeUser } from '../../../sim/kube/rbac.js';
import { ALLOW_ALL, createTokenAuthenticator, serviceAccountUser } from '../../../sim/kube/rbac.js';
import { createInMemoryKubeStore } from '../../../sim/kube/store.js';

export const START_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
export const ADMIN_TOKEN = 'admin-token';
export const SA_TOKEN = 'service-account-token';

export const TOKENS: Record<string, KubeUser> = {
  [ADMIN_TOKEN]: { name: 'kubernetes-admin', groups: ['system:masters'] },
  [SA_TOKEN]: serviceAccountUser('vmss-prototype', 'vmss-prototype'),
};

/** Discrete-event clock and scheduler; time only moves when the test says so. */
export class ManualTime implements SimClock, Scheduler {
  #now: number;
  #sequence = 0;
  #events: { at: number; sequence: number; label: string; action: () => void }[] = [];

  constructor(startMs = START_MS) {
    this.#now = startMs;
  }

  nowMs(): number {
    return this.#now;
  }

  now(): Date {
    return new Date(this.#now);
  }

  after(delaySeconds: number, label: string, action: () => void): () => void {
    const event = { at: this.#now + delaySeconds * 1000, sequence: this.#sequence++, label, action };
    this.#events.push(event);
    return () => {
      this.#events = this.#events.filter((candidate) => candidate !== event);
    };
  }

  runDue(): void {
    for (;;) {
      const due = this.#events
        .filter((event) => event.at <= this.#now)
        .sort((a, b) => a.at - b.at || a.sequence - b.sequence)[0];
      if (!due) return;
      this.#events = this.#events.filter((event) => event !== due);
      due.action();
    }
  }

  /** Moves time forward, running events at their due time in order. */
  advance(seconds: number): void {
    const target = this.#now + seconds * 1000;
    for (;;) {
      const next = this.#events
        .filter((event) => event.at <= target)
        .sort((a, b) => a.at - b.at || a.sequence - b.sequence)[0];
      if (!next) break;
      this.#now = Math.max(this.#now, next.at);
      this.runDue();
    }
    this.#now = target;
    this.runDue();
  }

  pending(): string[] {
    return this.#events.map((event) => event.label);
  }
}

export class SwitchableFaults implements FaultInjector {
  readonly faults = new Map<string, InjectedFault>();

  check(api: 'arm' | 'kube', operation: string): InjectedFault | undefined {
    if (api !== 'kube') return undefined;
    return this.faults.get(operation) ?? this.faults.get('*');
  }
}

export class MemoryLog implements RequestLog {
  readonly entries: { api: string; operation: string; status: number }[] = [];

  record(api: 'arm' | 'kube', operation: string, status: number): void {
    this.entries.push({ api, operation, status });
  }
}

export interface TestCluster {
  url: string;
  store: KubeStore;
  time: ManualTime;
  faults: SwitchableFaults;
  log: MemoryLog;
  handler: KubeHandler;
  server: Server;
  kubeConfig(token?: string): KubeConfig;
  close(): Promise<void>;
}

export interface TestClusterOptions {
  authorizer?: KubeAuthorizer;
  latency?: LatencyProfile;
  tls?: { key: string; cert: string; caPem: string };
  /** The server's Kubernetes version (`/version`); the machine's kubectl dispatcher picks its client by it. */
  kubernetesVersion?: string;
}

export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const time = new ManualTime();
  let uid = 0;
  const store = createInMemoryKubeStore({
    clock: time,
    newUid: () => `00000000-0000-4000-8000-${String(++uid).padStart(12, '0')}`,
  });
  const faults = new SwitchableFaults();
  const log = new MemoryLog();
  const handler = createKubeHandler({
    store,
    clock: time,
    scheduler: time,
    faults,
    log,
    authenticator: createTokenAuthenticator(TOKENS),
    authorizer: options.authorizer ?? ALLOW_ALL,
    latency: options.latency ?? KAMINO_OBSERVED,
    ...(options.kubernetesVersion === undefined ? {} : { kubernetesVersion: options.kubernetesVersion }),
  });
  const server = options.tls
    ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handler)
    : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url,
    store,
    time,
    faults,
    log,
    handler,
    server,
    kubeConfig(token = ADMIN_TOKEN) {
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [
          {
            name: 'sim',
            server: url,
            skipTLSVerify: !options.tls,
            ...(options.tls ? { caData: Buffer.from(options.tls.caPem).toString('base64') } : {}),
          },
        ],
        users: [{ name: 'user', token }],
        contexts: [{ name: 'sim', cluster: 'sim', user: 'user' }],
        currentContext: 'sim',
      });
      return config;
    },
    async close() {
      handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function readyCondition(
  status: 'True' | 'False' | 'Unknown',
  sinceMs = START_MS - 86_400_000,
): object {
  const at = new Date(sinceMs).toISOString().replace('.000Z', 'Z');
  return { type: 'Ready', status, lastHeartbeatTime: at, lastTransitionTime: at, reason: 'KubeletReady' };
}

export function nodeObject(name: string, labels: Record<string, string> = {}, ready = true): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.azure.com/agentpool': 'pool1', ...labels },
    },
    spec: {
      providerID: `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool1/virtualMachines/${name.slice(-1)}`,
    },
    status: {
      conditions: [readyCondition(ready ? 'True' : 'False')],
      addresses: [
        { type: 'InternalIP', address: `10.240.0.${name.length + (name.charCodeAt(name.length - 1) % 200)}` },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.32.4',
        osImage: 'Ubuntu 22.04.5 LTS',
        kernelVersion: '5.15.0-1079-azure',
        containerRuntimeVersion: 'containerd://1.7.27',
      },
    },
  };
}

export function runningPod(
  namespace: string,
  name: string,
  nodeName: string,
  extra: {
    labels?: Record<string, string>;
    owner?: KubeObject;
    annotations?: Record<string, string>;
    emptyDir?: boolean;
  } = {},
): KubeObject {
  const now = new Date(START_MS).toISOString().replace('.000Z', 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
      ...(extra.owner
        ? {
            ownerReferences: [
              {
                apiVersion: extra.owner.apiVersion,
                kind: extra.owner.kind,
                name: extra.owner.metadata.name,
                uid: extra.owner.metadata.uid ?? '',
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'main', image: 'nginx:1.27' }],
      ...(extra.emptyDir ? { volumes: [{ name: 'scratch', emptyDir: {} }] } : {}),
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: now },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: [
        { name: 'main', ready: true, restartCount: 0, image: 'nginx:1.27', state: { running: {} } },
      ],
    },
  };
}

export function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active' } };
}

export function replicaSetObject(
  namespace: string,
  name: string,
  replicas: number,
  labels: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'main', image: 'nginx:1.27' }] },
      },
    },
  };
}

export function pdbObject(namespace: string, name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace }, spec };
}

/** Parses the Status body an ApiException carries (client-node 2.x keeps the raw text for undeclared codes). */
export function statusBody(error: unknown): Record<string, unknown> {
  const body = (error as { body?: unknown }).body;
  if (typeof body === 'string') return JSON.parse(body) as Record<string, unknown>;
  return (body ?? {}) as Record<string, unknown>;
}
