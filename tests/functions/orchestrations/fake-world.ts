/**
 * A cluster made of the in-memory port fakes, run by the local durable runner on a virtual clock: the
 * real orchestrators and the real catalogue activities, no simulator, no network. Each pool is a Uniform
 * scale set with three kured-patched nodes; the prep pod powers its host off through the compute fake.
 */
import { createHttpHeaders, createPipelineRequest, RestError } from '@azure/core-rest-pipeline';

import {
  createDurableRunner,
  createVirtualClock,
  type DurableRunner,
  type OrchestrationStatus,
  type RunnerOptions,
  type VirtualClock,
} from '../../../cli/runner/index.js';
import { durableRegistry } from '../../../functions/durable-registry.js';
import { orchestrations } from '../../../functions/orchestrations/index.js';
import { toRefreshError } from '../../../shared/adapters/azure/errors.js';
import type { BoundActivity } from '../../../shared/application/activities/catalogue.js';
import { poolInstanceId } from '../../../shared/application/orchestration-ids.js';
import type { RefreshStatus } from '../../../shared/application/refresh-contracts.js';
import type {
  ClusterConfiguration,
  ClusterHandle,
  ConfiguredPool,
  PoolRunSettings,
  RefreshDependencies,
} from '../../../shared/application/refresh-dependencies.js';
import { DEFAULT_CANARY_POLICY } from '../../../shared/domain/canary.js';
import type { ImageDefinitionRef, ScaleSetExtension } from '../../../shared/domain/compute.js';
import type { PodOnNode } from '../../../shared/domain/drain.js';
import type { RefreshError } from '../../../shared/domain/errors.js';
import { NotFoundError } from '../../../shared/domain/errors.js';
import { imageDefinitionNameFor } from '../../../shared/domain/gallery-naming.js';
import { DEFAULT_GENERATION_POLICY } from '../../../shared/domain/generations.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import type { ScaleSet } from '../../../shared/domain/scale-set.js';
import { DEFAULT_SELECTION_POLICY } from '../../../shared/domain/selection-policy.js';
import { FakeCompute, type FakeComputeOptions } from '../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes, type FakeKubernetesOptions } from '../../../shared/ports/fake/kubernetes/index.js';
import { aNode, NOW } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

export const CLUSTER = 'prod';
export const SUBSCRIPTION = '6b1f9c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
export const RESOURCE_GROUP = 'rg-k8s-prod';
/** The virtual clock starts an hour after the builders' NOW (nodes are Ready for days by then). */
export const START = NOW.getTime() + 3_600_000;

export function poolRef(pool: string): ScaleSetRef {
  return { subscriptionId: SUBSCRIPTION, resourceGroup: RESOURCE_GROUP, name: pool };
}

/** Node `n` (0, 1, 2) of a pool; node 0 has been Ready longest, so auto mode picks it. */
export function nodeName(pool: string, n: number): string {
  return `${pool}-vmss${n.toString(36).padStart(6, '0')}`;
}

export const RUN_SETTINGS: PoolRunSettings = {
  drainGracePeriodSeconds: 30,
  drainTimeoutSeconds: 600,
  captureMode: 'drain-and-stop',
  prepNamespace: 'vmss-prototype',
  prepImage: 'busybox:1.37',
  runCommandTimeoutSeconds: 600,
  liveRootPartition: 1,
  liveMaxFreezeSeconds: 10,
  waitForSnapshotCompletion: 'auto',
  keepExtensionTypes: ['AzureMonitorLinuxAgent'],
  history: 3,
  storageAccountType: 'Standard_ZRS',
  extraRegions: [],
  pinVersion: false,
  deleteEmptyDirData: true,
  forceUnreplicated: false,
  // The canary has its own tests (canary.phase.test.ts); the refresh tests keep the phases they check.
  canary: { ...DEFAULT_CANARY_POLICY, enabled: false },
  generations: DEFAULT_GENERATION_POLICY,
  retirement: {
    enabled: false,
    policy: { budget: { nodes: 1 }, windows: [], surge: true },
    drainTimeoutSeconds: 900,
  },
};

export interface FakeWorldOptions {
  readonly pools?: readonly string[];
  /** Per pool: what differs from the eligible default scale set. */
  readonly scaleSets?: Readonly<Record<string, Partial<ScaleSet>>>;
  /** Per pool: the model's extensions (default: a bootstrap CustomScript and the monitoring agent). */
  readonly extensions?: Readonly<Record<string, readonly ScaleSetExtension[]>>;
  readonly run?: Partial<PoolRunSettings>;
  readonly compute?: Omit<FakeComputeOptions, 'now'>;
  readonly cluster?: Omit<FakeKubernetesOptions, 'now' | 'onPrepPodCreated'>;
  readonly maxParallelPools?: number;
  /** Labels every node gets on top of the builder's and aks-engine's (e.g. another flavour's). */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  /** Replaces registered activities (e.g. one that throws the way a host-level failure arrives). */
  readonly wrapActivity?: (name: string, activity: BoundActivity) => BoundActivity;
}

export interface FakeWorld {
  readonly clock: VirtualClock;
  readonly compute: FakeCompute;
  readonly kube: FakeKubernetes;
  /** The cluster's handle, as activities get it (for use cases called directly). */
  readonly handle: ClusterHandle;
  readonly runner: DurableRunner;
  readonly runnerOptions: RunnerOptions;
  /** Every custom status the runs published, in order. */
  readonly statuses: { readonly instanceId: string; readonly status: unknown }[];
  /** Called with each refresh status as it is published (to act at a given step). */
  onStep?: (step: RefreshStatus['step'], instanceId: string) => void;
  refreshPool(pool: string, extra?: { node?: string; dryRun?: boolean }): Promise<OrchestrationStatus>;
  refreshCluster(extra?: { dryRun?: boolean }): Promise<OrchestrationStatus>;
  /** The steps one refresh went through, without repeats. */
  stepsOf(instanceId: string): string[];
}

export function createFakeWorld(options: FakeWorldOptions = {}): FakeWorld {
  const pools = options.pools ?? ['pool1'];
  const clock = createVirtualClock({ startMs: START });
  const now = (): number => clock.now();
  const compute = new FakeCompute({ ...options.compute, now });
  const instanceOfNode = new Map<string, { pool: ScaleSetRef; instanceId: string }>();
  const kube = new FakeKubernetes({
    ...options.cluster,
    now,
    onPrepPodCreated: (spec, finishesAt) => {
      const instance = instanceOfNode.get(spec.nodeName);
      return instance === undefined
        ? undefined
        : compute.schedulePowerOff(instance.pool, instance.instanceId, finishesAt);
    },
  });
  for (const pool of pools) seedPool(pool);

  function seedPool(pool: string): void {
    const ref = poolRef(pool);
    compute.addScaleSet(
      aScaleSet({ ...ref, ...options.scaleSets?.[pool] }),
      options.extensions?.[pool] ?? [
        { name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
        { name: 'monitor', publisher: 'Microsoft.Azure.Monitor', type: 'AzureMonitorLinuxAgent' },
      ],
    );
    for (const n of [0, 1, 2]) {
      const name = nodeName(pool, n);
      const hours = 72 - n * 12;
      const node = aNode({
        name,
        pool: ref,
        instanceId: n,
        readySince: new Date(NOW.getTime() - hours * 3_600_000).toISOString(),
      });
      // aks-engine's labels: the plan detects the pool's bootstrap flavour from them.
      kube.nodes.add({
        ...node,
        labels: { ...node.labels, 'kubernetes.azure.com/role': 'agent', ...options.nodeLabels },
      });
      const instanceId = String(n);
      compute.addInstance(ref, instanceId);
      instanceOfNode.set(name, { pool: ref, instanceId });
      kube.pods.add(name, appPod(`web-${pool}-${n}`));
      kube.pods.add(name, daemonPod(`agent-${pool}-${n}`));
    }
  }
  kube.daemonSets.add('kube-system', 'node-agent');

  const configuration: ClusterConfiguration = {
    name: CLUSTER,
    subscriptionId: SUBSCRIPTION,
    resourceGroup: RESOURCE_GROUP,
    maxParallelPools: options.maxParallelPools ?? 2,
    pools: pools.map((pool): ConfiguredPool => ({ name: pool, scaleSet: poolRef(pool) })),
    poolConfiguration: (pool) => ({
      enabled: true,
      policy: DEFAULT_SELECTION_POLICY,
      run: { ...RUN_SETTINGS, ...options.run },
      gallery: {
        subscriptionId: SUBSCRIPTION,
        resourceGroup: RESOURCE_GROUP,
        galleryName: 'vmssp_gallery',
        imageDefinitionName: imageDefinitionNameFor(CLUSTER, pool.name),
      },
    }),
  };
  const handle: ClusterHandle = { configuration, compute, kube };
  const deps: RefreshDependencies = {
    clusterNames: [CLUSTER],
    cluster: (name) =>
      name === CLUSTER
        ? Promise.resolve(handle)
        : Promise.reject(
            new NotFoundError('ClusterNotConfigured', `finding cluster ${name}: it is not configured`),
          ),
    now: () => new Date(clock.now()),
    runner: { kind: 'test', host: 'fake-world' },
  };

  const statuses: { instanceId: string; status: unknown }[] = [];
  const registry = durableRegistry(deps);
  const wrap = options.wrapActivity;
  const runnerOptions: RunnerOptions = {
    orchestrators: registry.orchestrators,
    activities:
      wrap === undefined
        ? registry.activities
        : {
            ...registry.activities,
            ...Object.fromEntries(
              Object.entries(registry.catalogue).map(([name, activity]) => [name, wrap(name, activity)]),
            ),
          },
    clock,
    onStatus: (status) => {
      const last = statuses.findLast((entry) => entry.instanceId === status.instanceId);
      if (JSON.stringify(last?.status) === JSON.stringify(status.customStatus)) return;
      statuses.push({ instanceId: status.instanceId, status: status.customStatus });
      const step = (status.customStatus as { step?: RefreshStatus['step'] } | undefined)?.step;
      if (step !== undefined) world.onStep?.(step, status.instanceId);
    },
  };
  const runner = createDurableRunner(runnerOptions);
  const world: FakeWorld = {
    clock,
    compute,
    kube,
    handle,
    runner,
    runnerOptions,
    statuses,
    refreshPool: (pool, extra = {}) =>
      runner.startOrchestration(
        orchestrations.refreshPool,
        { cluster: CLUSTER, pool, trigger: 'test', ...extra },
        poolInstanceId(CLUSTER, pool),
      ),
    refreshCluster: (extra = {}) =>
      runner.startOrchestration(
        orchestrations.refreshCluster,
        { cluster: CLUSTER, trigger: 'test', ...extra },
        `refresh:${CLUSTER}`,
      ),
    stepsOf: (instanceId) =>
      statuses
        .filter((entry) => entry.instanceId === instanceId)
        .map((entry) => (entry.status as { step?: string } | undefined)?.step ?? '')
        .filter((step, index, all) => step !== '' && step !== all[index - 1]),
  };
  return world;
}

export function appPod(name: string, namespace = 'default'): PodOnNode {
  return {
    namespace,
    name,
    uid: `uid-${name}`,
    phase: 'Running',
    controller: { kind: 'ReplicaSet', name: `${name}-rs`, apiVersion: 'apps/v1' },
    mirror: false,
    usesEmptyDir: false,
    terminating: false,
  };
}

function daemonPod(name: string): PodOnNode {
  return {
    namespace: 'kube-system',
    name,
    uid: `uid-${name}`,
    phase: 'Running',
    controller: { kind: 'DaemonSet', name: 'node-agent', apiVersion: 'apps/v1' },
    mirror: false,
    usesEmptyDir: false,
    terminating: false,
  };
}

/**
 * What the ARM adapter throws for an HTTP answer: a RestError as @azure/core-rest-pipeline builds it,
 * through the adapter's own mapping (shared/adapters/azure/errors.ts), so these tests fail if it changes.
 */
export function armError(
  action: string,
  status: number,
  body: { code: string; message: string },
  headers: Record<string, string> = {},
): RefreshError {
  const error = new RestError(body.message, {
    statusCode: status,
    code: body.code,
    response: {
      status,
      headers: createHttpHeaders(headers),
      request: createPipelineRequest({ url: 'https://management.azure.com/' }),
    },
  });
  Object.assign(error, { details: { error: body } });
  return toRefreshError(error, action, START);
}

/** The pool's image definition in the fake gallery. */
export function definitionRef(pool: string): ImageDefinitionRef {
  return {
    subscriptionId: SUBSCRIPTION,
    resourceGroup: RESOURCE_GROUP,
    galleryName: 'vmssp_gallery',
    imageName: imageDefinitionNameFor(CLUSTER, pool),
  };
}

/** The failure message of a failed instance. */
export function failureOf(status: OrchestrationStatus): string {
  return status.failure?.ErrorMessage ?? '';
}
