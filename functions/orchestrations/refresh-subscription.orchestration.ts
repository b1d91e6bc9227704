/**
 * The schedule's run of one Azure subscription's clusters (`refresh-subscription:<subscriptionId>`,
 * issue 32): Compute's throttling limits are per subscription and region, so a night when hundreds of
 * pools are due admits them per subscription. The clusters run as their own `refresh:<cluster>` runs,
 * at most `clustersAtOnce` at a time, each with at most `poolsPerCluster` pools at once
 * (shared/domain/admission.ts): never more than VMSSP_MAX_POOLS_PER_SUBSCRIPTION pools of the
 * subscription refresh at the same time. Each cluster's first start waits a deterministic jitter. A
 * cluster whose run is still active (an HTTP or CLI run) is skipped; one cluster failing does not stop
 * the others.
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
import { admissionJitterSeconds, admissionShape } from '../../shared/domain/admission.js';
import { defineOrchestration } from '../orchestration.js';
import { activeInstanceStatus } from './call.js';
import type { ChildResult, ChildTask } from './children.js';
import { CHILD_ALREADY_RUNNING, childResult, failureText, isFinished, startChild } from './children.js';
import { RefreshSubscriptionInputSchema } from './inputs.js';
import { durableTimer } from './races.js';
import { refreshClusterOrchestration } from './refresh-cluster.orchestration.js';
import { failedStepOf } from './step-failure.js';
import { ADMISSION_JITTER_SECONDS, CLUSTER_WINDOW_CHECK_SECONDS } from './timing.js';

export const refreshSubscriptionOrchestration = defineOrchestration(
  ORCHESTRATION.refreshSubscription,
  RefreshSubscriptionInputSchema,
  runRefreshSubscription,
);

function* runRefreshSubscription(
  context: OrchestrationContext,
  input: RefreshSubscriptionInput,
): Generator<Task, SubscriptionRefreshResult, unknown> {
  const { subscriptionId } = input;
  const admitted = admissionShape(input.maxPoolsPerSubscription, input.maxParallelPools);
  const startMs = context.df.currentUtcDateTime.getTime();
  // Each cluster's earliest start: the run's start plus a delay hashed from the instance id and the
  // cluster (never Math.random(): a replay must compute the same).
  const queue = [...new Set(input.clusters)]
    .map((cluster) => ({
      cluster,
      notBeforeMs:
        startMs +
        admissionJitterSeconds(`${context.df.instanceId}|${cluster}`, ADMISSION_JITTER_SECONDS) * 1000,
    }))
    .sort((a, b) => a.notBeforeMs - b.notBeforeMs || a.cluster.localeCompare(b.cluster));
  context.df.setCustomStatus({ subscriptionId, step: 'admitting', admitted });

  const results: SubscriptionClusterResult[] = [];
  // The window of cluster runs, as refresh-cluster's window of pools: each child is sent once; the
  // children started in a round race only a new timer, and earlier ones are waited for on their own.
  const inFlight: { cluster: string; child: ChildTask<ClusterRefreshResult> }[] = [];
  let next = 0;
  while (next < queue.length || inFlight.length > 0) {
    const started: Task[] = [];
    const nowMs = context.df.currentUtcDateTime.getTime();
    while (inFlight.length < admitted.clustersAtOnce) {
      const entry = queue[next];
      if (entry === undefined || entry.notBeforeMs > nowMs) break;
      next++;
      const { cluster } = entry;
      const instanceId = clusterInstanceId(cluster);
      let running: string | undefined;
      try {
        running = yield* activeInstanceStatus(context, instanceId);
      } catch (error) {
        // Never started unchecked: the cluster is reported, the next tick tries again.
        results.push({ cluster, outcome: 'failed', reason: failureText(failedStepOf(error, 'refreshing')) });
        continue;
      }
      if (running !== undefined) {
        results.push({ cluster, outcome: 'skipped', reason: alreadyRunning(instanceId, running) });
        continue;
      }
      const child = startChild(
        context,
        refreshClusterOrchestration,
        {
          cluster,
          trigger: input.trigger,
          runSeed: context.df.newGuid(`${input.runSeed ?? ''}|${cluster}`),
          maxParallelPools: admitted.poolsPerCluster,
        },
        instanceId,
      );
      inFlight.push({ cluster, child });
      started.push(child.task);
      context.df.setCustomStatus({
        subscriptionId,
        step: 'refreshing',
        admitted,
        clusters: inFlight.map((f) => f.cluster),
      });
    }
    const waiting = queue[next];
    if (waiting !== undefined) {
      // Wake when a child just started ends, at the next check, or when the next cluster's jitter ends
      // while a slot is free.
      const slotFree = inFlight.length < admitted.clustersAtOnce;
      const wakeMs = Math.min(
        nowMs + CLUSTER_WINDOW_CHECK_SECONDS * 1000,
        slotFree ? Math.max(waiting.notBeforeMs, nowMs + 1000) : Infinity,
      );
      const check = durableTimer(context, new Date(wakeMs));
      yield started.length === 0 ? check : context.df.Task.any([...started, check]);
    } else if (started.length > 0) {
      try {
        yield context.df.Task.any(started);
      } catch {
        // Read from the task below.
      }
    } else {
      const first = inFlight[0];
      if (first !== undefined && !isFinished(first.child)) {
        try {
          yield first.child.task;
        } catch {
          // Read from the task below.
        }
      }
    }
    for (const finished of inFlight.filter((f) => isFinished(f.child))) {
      inFlight.splice(inFlight.indexOf(finished), 1);
      results.push(resultOfCluster(finished.cluster, yield* childResult(context, finished.child)));
    }
  }
  results.sort((a, b) => a.cluster.localeCompare(b.cluster));
  context.df.setCustomStatus({ subscriptionId, step: 'done', admitted });
  return { subscriptionId, admitted, clusters: results };
}

function alreadyRunning(instanceId: string, status: string): string {
  return `already refreshing (instance ${instanceId} is ${status}, started by another trigger)`;
}

/** A finished cluster run as the subscription's result reports it: counts, and the failed pools. */
function resultOfCluster(
  cluster: string,
  ended: ChildResult<ClusterRefreshResult>,
): SubscriptionClusterResult {
  if (!ended.ok) {
    if (ended.failure.code === CHILD_ALREADY_RUNNING) {
      return { cluster, outcome: 'skipped', reason: alreadyRunning(clusterInstanceId(cluster), 'running') };
    }
    return { cluster, outcome: 'failed', reason: failureText(ended.failure) };
  }
  const pools: Partial<Record<PoolRefreshResult['outcome'], number>> = {};
  for (const pool of ended.output.pools) pools[pool.outcome] = (pools[pool.outcome] ?? 0) + 1;
  return {
    cluster,
    outcome: 'ran',
    pools,
    failed: ended.output.pools
      .filter((pool) => pool.outcome === 'failed')
      .map((pool) => ({ pool: pool.pool, reason: pool.reason })),
  };
}
