/**
 * What the trigger handlers need, bound once per worker: the validated settings, read-only use cases
 * (pools, status, plan) over the composition's dependencies, node lookups for kured notices, and the
 * reboot queue. Handlers take it as an argument, so tests pass a simulator-backed one.
 */
import { planPoolForCluster, planPoolsOfCluster } from '../../shared/application/plan-cluster.js';
import { listPoolsOfCluster } from '../../shared/application/pool-lookup.js';
import { scaleSetOfVirtualMachine } from '../../shared/application/pool-membership.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import { planSummaryOf } from '../../shared/application/pool-plan.js';
import type {
  ClusterStatusRead,
  PoolOwnership,
  PoolStatus,
  UnreadablePool,
} from '../../shared/application/pool-status.js';
import { readPoolOwnership, readPoolStatus } from '../../shared/application/pool-status.js';
import type {
  FlexibleMembership,
  NoticeClusterScope,
  RebootNotice,
} from '../../shared/application/reboot-notices.js';
import { resourceIdOfProviderId } from '../../shared/application/reboot-notices.js';
import type { Composition } from '../../shared/composition-root.js';
import { workerComposition } from '../../shared/composition-root.js';
import { selectionPolicyFor } from '../../shared/config/settings.js';
import { ignoreNotFound, messageOf } from '../../shared/domain/errors.js';
import type { RebootNoticeSender } from '../../shared/ports/reboot-notice-queue.js';

export interface TriggerDependencies {
  readonly clusters: readonly NoticeClusterScope[];
  readonly quietPeriodSeconds: number;
  /** The schedule's admission per subscription (VMSSP_MAX_POOLS_PER_SUBSCRIPTION, VMSSP_MAX_PARALLEL_POOLS). */
  readonly admission: { readonly maxPoolsPerSubscription: number; readonly maxParallelPools: number };
  readonly notices: RebootNoticeSender<RebootNotice>;
  /** Pool names of a configured cluster (pools `all` are discovered from its nodes). */
  listPools(cluster: string): Promise<string[]>;
  readPoolStatus(cluster: string, pool: string): Promise<PoolStatus>;
  /**
   * Every pool's status with what `plan` decides for it (the cluster planned once, as the status
   * orchestration does), so the page served by the app says what `plan` and `status --json` say.
   */
  readClusterStatus(cluster: string): Promise<ClusterStatusRead>;
  /** Who holds the pool and what `release` would give back now (from the cluster and Azure). */
  readPoolOwnership(cluster: string, pool: string): Promise<PoolOwnership>;
  planPool(cluster: string, pool: string): Promise<PoolPlan>;
  minimumReadySeconds(cluster: string, pool: string): number;
  /** The ARM id of a node's VM; undefined when the node does not exist or has no Azure providerID. */
  nodeResourceId(cluster: string, node: string): Promise<string | undefined>;
  /** The scale set ARM records a Flexible member VM in, asked with `cluster`'s compute ports. */
  scaleSetOfVirtualMachine: FlexibleMembership;
  now(): Date;
}

export function createTriggerDependencies(
  composition: Composition,
  notices: RebootNoticeSender,
): TriggerDependencies {
  const { settings, dependencies } = composition;
  const clusterSettings = (name: string) => {
    const cluster = settings.clusters.find((candidate) => candidate.name === name);
    if (cluster === undefined) throw new Error(`finding cluster ${name}: it is not configured`);
    return cluster;
  };
  return {
    clusters: settings.clusters,
    quietPeriodSeconds: settings.quietPeriod,
    admission: {
      maxPoolsPerSubscription: settings.maxPoolsPerSubscription,
      maxParallelPools: settings.maxParallelPools,
    },
    notices,
    async listPools(cluster) {
      const pools = await listPoolsOfCluster(await dependencies.cluster(cluster));
      return pools.map((pool) => pool.name);
    },
    async readPoolStatus(cluster, pool) {
      return readPoolStatus(await dependencies.cluster(cluster), pool, dependencies.now());
    },
    async readClusterStatus(cluster) {
      const handle = await dependencies.cluster(cluster);
      const now = dependencies.now();
      const pools = await listPoolsOfCluster(handle);
      const reads = await Promise.allSettled(
        pools.map((pool) => readPoolStatus(handle, pool.name, now, pool)),
      );
      // As the clusterStatus orchestration: a pool that cannot be read is named, the others reported.
      const statuses: PoolStatus[] = [];
      const unreadable: UnreadablePool[] = [];
      for (const [index, read] of reads.entries()) {
        if (read.status === 'fulfilled') statuses.push(read.value);
        else unreadable.push({ pool: pools[index]?.name ?? '?', reason: messageOf(read.reason) });
      }
      const planning = await planPoolsOfCluster(handle, now);
      const planned = statuses.map((status): PoolStatus => {
        const entry = planning.find((candidate) => candidate.pool === status.pool);
        if (entry === undefined) return status;
        return {
          ...status,
          plan: entry.ok
            ? planSummaryOf(entry.plan.decision)
            : { outcome: 'not-planned', reason: messageOf(entry.error) },
        };
      });
      return { pools: planned, unreadable };
    },
    async readPoolOwnership(cluster, pool) {
      return readPoolOwnership(await dependencies.cluster(cluster), pool, dependencies.now());
    },
    async planPool(cluster, pool) {
      return planPoolForCluster(await dependencies.cluster(cluster), pool, undefined, dependencies.now());
    },
    minimumReadySeconds(cluster, pool) {
      return selectionPolicyFor(clusterSettings(cluster), pool).minimumReadySeconds;
    },
    async nodeResourceId(cluster, node) {
      const handle = await dependencies.cluster(cluster);
      const found = await handle.kube.nodes.get(node).catch(ignoreNotFound);
      return found === undefined ? undefined : resourceIdOfProviderId(found.providerId);
    },
    async scaleSetOfVirtualMachine(cluster, vm) {
      return scaleSetOfVirtualMachine((await dependencies.cluster(cluster)).compute, vm);
    },
    now: () => dependencies.now(),
  };
}

let worker: TriggerDependencies | undefined;

/**
 * The function app's trigger dependencies, from the app settings. The queue lives in the host's own
 * storage account (`AzureWebJobsStorage`, the same connection the queue trigger listens on).
 */
export function workerTriggerDependencies(): TriggerDependencies {
  if (worker !== undefined) return worker;
  const composition = workerComposition();
  worker = createTriggerDependencies(composition, composition.rebootQueue());
  return worker;
}
