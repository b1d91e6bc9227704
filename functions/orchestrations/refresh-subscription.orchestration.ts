/**
 * The schedule's run of one Azure subscription's clusters (`refresh-subscription:<subscriptionId>`): Compute's throttling limits are per subscription and region, so a night when hundreds of
 * pools are due admits them per pool, per subscription (shared/domain/admission.ts). Each cluster is
 * planned by its own `refresh:<cluster>` run with `handOverPools` (plan, give back leftovers, report
 * refusals), a cluster or two ahead of the slots; the pools it hands over wait in one queue and start as
 * `refresh:<cluster>:<pool>` runs while fewer than VMSSP_MAX_POOLS_PER_SUBSCRIPTION pools of the
 * subscription, and fewer than VMSSP_MAX_PARALLEL_POOLS of their cluster, are refreshing. Each pool's
 * first start waits a deterministic jitter. A cluster whose run is still active (an HTTP or CLI run) is
 * skipped, a pool whose run is active likewise; one cluster or pool failing does not stop the others.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { clusterInstanceId, ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type {
  ClusterRefreshResult,
  PoolRefreshResult,
  RefreshSubscriptionInput,
  SubscriptionClusterResult,
  SubscriptionRefreshResult,
} from '../../shared/application/refresh-contracts.js';
import type { QueuedPool } from '../../shared/domain/admission.js';
import {
  admissionJitterSeconds,
  admissionShape,
  nextAdmissionCheckMs,
  nextAdmittedPool,
} from '../../shared/domain/admission.js';
import { defineOrchestration } from '../orchestration.js';
import { activeInstanceStatus } from './call.js';
import type { WindowEntry } from './child-window.js';
import { awaitWindowRound } from './child-window.js';
import type { ChildResult } from './children.js';
import { CHILD_ALREADY_RUNNING, failureText, startChild } from './children.js';
import { RefreshSubscriptionInputSchema } from './inputs.js';
import { poolResultOf, startPoolRun } from './pool-runs.js';
import { refreshClusterOrchestration } from './refresh-cluster.orchestration.js';
import { failedStepOf } from './step-failure.js';
import { ADMISSION_JITTER_SECONDS, CLUSTER_WINDOW_CHECK_SECONDS } from './timing.js';

export const refreshSubscriptionOrchestration = defineOrchestration(
  ORCHESTRATION.refreshSubscription,
  RefreshSubscriptionInputSchema,
  runRefreshSubscription,
);

/** Clusters being planned at once: enough to keep the queue ahead of the slots, few enough to be light. */
const PLANS_AT_ONCE = 2;

/** A child of the window: a cluster's planning, or a pool's refresh. */
type Running =
  | { readonly kind: 'plan'; readonly cluster: string }
  | { readonly kind: 'pool'; readonly cluster: string; readonly pool: string };

function* runRefreshSubscription(
  context: OrchestrationContext,
  input: RefreshSubscriptionInput,
): Generator<Task, SubscriptionRefreshResult, unknown> {
  const { subscriptionId } = input;
  const admitted = admissionShape(input.maxPoolsPerSubscription, input.maxParallelPools);
  const startMs = context.df.currentUtcDateTime.getTime();
  const clusters = [...new Set(input.clusters)].sort((a, b) => a.localeCompare(b));
  const tally = new ClusterTally();
  const queue: QueuedPool[] = [];
  // One window: each child sent once, its end read by kind (child-window.ts).
  const inFlight: WindowEntry<Running, unknown>[] = [];
  const count = (kind: Running['kind']): number => inFlight.filter((entry) => entry.key.kind === kind).length;
  const runningPerCluster = new Map<string, number>();
  let nextCluster = 0;
  context.df.setCustomStatus({ subscriptionId, step: 'admitting', admitted });

  while (nextCluster < clusters.length || queue.length > 0 || inFlight.length > 0) {
    const started: Task[] = [];
    const nowMs = context.df.currentUtcDateTime.getTime();
    // Plan the next clusters while fewer pools wait than the subscription admits at once.
    while (
      nextCluster < clusters.length &&
      count('plan') < PLANS_AT_ONCE &&
      queue.length < admitted.poolsAtOnce
    ) {
      const cluster = clusters[nextCluster++] ?? '';
      const instanceId = clusterInstanceId(cluster);
      let running: string | undefined;
      try {
        running = yield* activeInstanceStatus(context, instanceId);
      } catch (error) {
        // Never started unchecked: the cluster is reported, the next night tries again.
        tally.end(cluster, { outcome: 'failed', reason: failureText(failedStepOf(error, 'refreshing')) });
        continue;
      }
      if (running !== undefined) {
        tally.end(cluster, { outcome: 'skipped', reason: alreadyRunning(instanceId, running) });
        continue;
      }
      const child = startChild(
        context,
        refreshClusterOrchestration,
        {
          cluster,
          trigger: input.trigger,
          runSeed: tally.seed(cluster, context.df.newGuid(`${input.runSeed ?? ''}|${cluster}`)),
          handOverPools: true,
        },
        instanceId,
      );
      inFlight.push({ key: { kind: 'plan', cluster }, child });
      started.push(child.task);
    }
    // Start queued pools while the subscription and their cluster have a slot.
    for (;;) {
      const index = nextAdmittedPool(queue, runningPerCluster, admitted, nowMs);
      const entry = queue[index];
      if (entry === undefined) break;
      queue.splice(index, 1);
      const { cluster, pool } = entry;
      const start = yield* startPoolRun(context, {
        cluster,
        pool,
        trigger: input.trigger,
        runSeed: tally.seedOf(cluster),
      });
      if (start.started === undefined) {
        tally.add(cluster, start.result);
        continue;
      }
      inFlight.push({ key: { kind: 'pool', cluster, pool }, child: start.started });
      runningPerCluster.set(cluster, (runningPerCluster.get(cluster) ?? 0) + 1);
      started.push(start.started.task);
    }
    context.df.setCustomStatus({
      subscriptionId,
      step: 'refreshing',
      admitted,
      refreshing: inFlight.flatMap(({ key }) => (key.kind === 'pool' ? [`${key.cluster}/${key.pool}`] : [])),
      waiting: queue.length,
      clustersLeft: clusters.length - nextCluster,
    });
    // Wake for a pool's jitter, a free slot, or (clusters left to plan) at the next check.
    const checkMs = CLUSTER_WINDOW_CHECK_SECONDS * 1000;
    const wakeAtMs =
      nextCluster < clusters.length || queue.length > 0
        ? (nextAdmissionCheckMs(queue, count('pool') < admitted.poolsAtOnce, nowMs, checkMs) ??
          nowMs + checkMs)
        : undefined;
    for (const { key, ended } of yield* awaitWindowRound(context, inFlight, started, wakeAtMs)) {
      if (key.kind === 'plan') {
        const planned = tally.planned(key.cluster, ended as ChildResult<ClusterRefreshResult>);
        queue.push(
          ...planned.map((pool) => ({
            cluster: key.cluster,
            pool,
            notBeforeMs:
              startMs +
              admissionJitterSeconds(
                `${context.df.instanceId}|${key.cluster}|${pool}`,
                ADMISSION_JITTER_SECONDS,
              ) *
                1000,
          })),
        );
      } else {
        runningPerCluster.set(key.cluster, (runningPerCluster.get(key.cluster) ?? 1) - 1);
        tally.add(key.cluster, poolResultOf(key.cluster, key.pool, ended as ChildResult<PoolRefreshResult>));
      }
    }
  }
  context.df.setCustomStatus({ subscriptionId, step: 'done', admitted });
  return { subscriptionId, admitted, clusters: tally.results() };
}

function alreadyRunning(instanceId: string, status: string): string {
  return `already refreshing (instance ${instanceId} is ${status}, started by another trigger)`;
}

/** Each cluster's result as the subscription's output reports it: counts, and the failed pools. */
class ClusterTally {
  private readonly ended = new Map<string, SubscriptionClusterResult>();
  private readonly ran = new Map<
    string,
    {
      pools: Partial<Record<PoolRefreshResult['outcome'], number>>;
      failed: { pool: string; reason: string }[];
    }
  >();
  private readonly seeds = new Map<string, string>();

  /** Keeps the cluster's run seed (its pool runs mix it into their run ids, as under its own run). */
  seed(cluster: string, seed: string): string {
    this.seeds.set(cluster, seed);
    return seed;
  }

  end(cluster: string, result: { outcome: 'skipped' | 'failed'; reason: string }): void {
    this.ended.set(cluster, { cluster, ...result });
  }

  /** A cluster's planning ended: counts its pools not handed over, returns those handed over. */
  planned(cluster: string, ended: ChildResult<ClusterRefreshResult>): readonly string[] {
    if (!ended.ok) {
      if (ended.failure.code === CHILD_ALREADY_RUNNING) {
        this.end(cluster, {
          outcome: 'skipped',
          reason: alreadyRunning(clusterInstanceId(cluster), 'running'),
        });
      } else this.end(cluster, { outcome: 'failed', reason: failureText(ended.failure) });
      return [];
    }
    this.ran.set(cluster, { pools: {}, failed: [] });
    for (const pool of ended.output.pools) this.add(cluster, pool);
    return ended.output.handedOver ?? [];
  }

  add(cluster: string, pool: PoolRefreshResult): void {
    const entry = this.ran.get(cluster) ?? { pools: {}, failed: [] };
    this.ran.set(cluster, entry);
    entry.pools[pool.outcome] = (entry.pools[pool.outcome] ?? 0) + 1;
    if (pool.outcome === 'failed') entry.failed.push({ pool: pool.pool, reason: pool.reason });
  }

  seedOf(cluster: string): string | undefined {
    return this.seeds.get(cluster);
  }

  results(): SubscriptionClusterResult[] {
    const all: SubscriptionClusterResult[] = [...this.ended.values()];
    for (const [cluster, entry] of this.ran) {
      all.push({ cluster, outcome: 'ran', pools: entry.pools, failed: entry.failed });
    }
    return all.sort((a, b) => a.cluster.localeCompare(b.cluster));
  }
}
