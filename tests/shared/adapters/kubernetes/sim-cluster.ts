/**
 * Test harness: the simulator's Kubernetes API server (sim/kube) over HTTPS on 127.0.0.1 with a
 * throwaway CA, bearer-token authentication and RBAC from the product's own manifests in infra/kubernetes.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import {
  KAMINO_OBSERVED,
  type KubeObject,
  type KubeResource,
  type KubeStore,
} from '../../../../sim/contracts.js';
import { createKubeHandler, type KubeHandler } from '../../../../sim/kube/handler.js';
import {
  createRbacAuthorizer,
  createTokenAuthenticator,
  serviceAccountUser,
} from '../../../../sim/kube/rbac.js';
import { createInMemoryKubeStore } from '../../../../sim/kube/store.js';
import { createClock, type WorldClock } from '../../../../sim/world/clock.js';
import { createFaultInjector, type WorldFaults } from '../../../../sim/world/faults.js';
import { createRequestLog, type WorldRequestLog } from '../../../../sim/world/request-log.js';
import { generateSimTls, type SimTls } from '../../../../sim/world/tls.js';

/** The product's service account, bound by infra/kubernetes/{cluster-role,role}.yaml. */
export const SA_TOKEN = 'sa-token-7f3c9d';
/** Authenticates, but no binding names it: every request is forbidden. */
export const STRANGER_TOKEN = 'stranger-token-1b2e';

const REPO_ROOT = new URL('../../../../../', import.meta.url);
const RBAC_MANIFESTS = ['infra/kubernetes/cluster-role.yaml', 'infra/kubernetes/role.yaml'].map(
  (path) => new URL(path, REPO_ROOT).pathname,
);

export interface SimCluster {
  readonly server: string;
  readonly tls: SimTls;
  readonly store: KubeStore;
  readonly clock: WorldClock;
  readonly faults: WorldFaults;
  readonly log: WorldRequestLog;
  /** TLS connections the server has accepted so far. */
  connections(): number;
  /** Creates objects straight in the store (as if another client had), skipping the API. */
  seed(resource: KubeResource, ...objects: KubeObject[]): void;
  close(): Promise<void>;
}

export async function startSimCluster(): Promise<SimCluster> {
  // Certificates are checked against the real clock, whatever simulated time says.
  const tls = generateSimTls(new Date());
  const clock = createClock({ mode: 'manual', startMs: Date.UTC(2026, 10, 22, 9, 0, 0) });
  const store = createInMemoryKubeStore({ clock });
  const faults = createFaultInjector({ clock });
  const log = createRequestLog();
  const handler: KubeHandler = createKubeHandler({
    store,
    clock,
    scheduler: clock,
    faults,
    log,
    authenticator: createTokenAuthenticator({
      [SA_TOKEN]: serviceAccountUser('vmss-prototype', 'vmss-prototype'),
      [STRANGER_TOKEN]: { name: 'someone-else', groups: [] },
    }),
    authorizer: createRbacAuthorizer(RBAC_MANIFESTS),
    latency: KAMINO_OBSERVED,
  });
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, handler);
  let connections = 0;
  server.on('secureConnection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server: `https://127.0.0.1:${port}`,
    tls,
    store,
    clock,
    faults,
    log,
    connections: () => connections,
    seed(resource, ...objects) {
      for (const object of objects) store.create(resource, object);
    },
    async close() {
      handler.close();
      clock.stop();
      // Keep-alive connections of gateways a test did not close would hold close() open.
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

export function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function readyNode(name: string, extra: { annotations?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' },
      ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
    },
    spec: {
      providerID: `azure:///subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/${parseInt(name.slice(-6), 36)}`,
    },
    status: {
      addresses: [{ type: 'InternalIP', address: '10.1.0.4' }],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: '2026-11-22T08:59:00Z',
          lastTransitionTime: '2026-11-20T03:22:05Z',
          reason: 'KubeletReady',
        },
      ],
    },
  };
}

/** A Running, Ready pod bound to `nodeName`, controlled by a ReplicaSet unless `owner` says otherwise. */
export function runningPod(
  namespaceName: string,
  name: string,
  nodeName: string,
  options: { labels?: Record<string, string>; owner?: 'ReplicaSet' | 'none' } = {},
): KubeObject {
  const owner = options.owner ?? 'ReplicaSet';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: namespaceName,
      labels: options.labels ?? { app: name },
      ...(owner === 'none'
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: owner,
                name: `${name}-rs`,
                uid: `uid-${name}-rs`,
                controller: true,
              },
            ],
          }),
    },
    spec: { nodeName, containers: [{ name: 'main', image: 'nginx:1.27' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

export function disruptionBudget(
  namespaceName: string,
  name: string,
  matchLabels: Record<string, string>,
  minAvailable: number,
): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: namespaceName },
    spec: { minAvailable, selector: { matchLabels } },
  };
}
