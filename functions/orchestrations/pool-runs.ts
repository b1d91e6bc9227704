/**
 * Starting a pool's refresh as a sub-orchestration of a window (a cluster's run, a subscription's run)
 * and reading its end as the pool's result. The pool's singleton id is looked at first: a reboot
 * debounce or an HTTP request for the same pool sees the run and waits (or answers 409), and a backend
 * starts a second execution over a running id instead of refusing it (instance-status.activity.ts).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { activeInstanceStatus } from './call.js';
import type { ChildResult, ChildTask } from './children.js';
import { CHILD_ALREADY_RUNNING, failureText, startChild } from './children.js';
import { refreshPoolOrchestration } from './refresh-pool.orchestration.js';
import { failedStepOf } from './step-failure.js';

/** What starting a pool's run came to: the started child, or the pool's result at once. */
export type PoolStart =
  | { readonly started: ChildTask<PoolRefreshResult> }
  | { readonly started?: undefined; readonly result: PoolRefreshResult };

/** Starts `pool`'s refresh unless a run of it is active (skipped) or that cannot be read (failed). */
export function* startPoolRun(
  context: OrchestrationContext,
  target: {
    readonly cluster: string;
    readonly pool: string;
    readonly trigger: string;
    readonly runSeed: string | undefined;
  },
): Generator<Task, PoolStart, unknown> {
  const { cluster, pool } = target;
  const instanceId = poolInstanceId(cluster, pool);
  let running: string | undefined;
  try {
    running = yield* activeInstanceStatus(context, instanceId);
  } catch (error) {
    // Never started unchecked: the pool is reported, the next tick tries again.
    const failure = failedStepOf(error, 'refreshing');
    return {
      result: {
        cluster,
        pool,
        outcome: 'failed',
        reason: failureText(failure),
        failure: { step: failure.step, message: failure.message },
      },
    };
  }
  if (running !== undefined) {
    return {
      result: {
        cluster,
        pool,
        outcome: 'skipped',
        reason: `already refreshing (instance ${instanceId} is ${running}, started by another trigger)`,
      },
    };
  }
  const started = startChild(
    context,
    refreshPoolOrchestration,
    {
      cluster,
      pool,
      trigger: target.trigger,
      runSeed: context.df.newGuid(`${target.runSeed ?? ''}|${pool}`),
    },
    instanceId,
  );
  return { started };
}

/** A finished pool refresh as a window's result reports it. */
export function poolResultOf(
  cluster: string,
  pool: string,
  ended: ChildResult<PoolRefreshResult>,
): PoolRefreshResult {
  if (ended.ok) return ended.output;
  if (ended.failure.code === CHILD_ALREADY_RUNNING) {
    // A backend that refuses a running id (the check above lost a race): that run is the refresh.
    return {
      cluster,
      pool,
      outcome: 'skipped',
      reason: `already refreshing (instance ${poolInstanceId(cluster, pool)}, started by another trigger)`,
    };
  }
  return {
    cluster,
    pool,
    outcome: 'failed',
    reason: failureText(ended.failure),
    failure: { step: ended.failure.step, message: ended.failure.message },
  };
}
