/**
 * Debounces reboot notices for one pool (instance `signal:<cluster>:<pool>`): absorbs notices until
 * the pool has been quiet for `quietPeriod` and `minimumReadyTime` has passed since the last one,
 * then runs auto mode for the pool ONCE as its singleton refresh (`refresh:<cluster>:<pool>`).
 *
 * Notices arrive at the reboot (Health Resources, kured), a minute or so before the node is Ready again,
 * so that refresh can find the rebooted node Ready a little too briefly. Then the debounce re-arms for the
 * shortfall (domain/reboot-rearm.ts, bounded) and plans again once the node is old enough: a reboot becomes
 * a refresh within quiet period + minimumReadyTime + the refresh itself, not at the next timer tick.
 */
import type { OrchestrationContext, Task, TimerTask } from 'durable-functions';
import type { z } from 'zod';

import { EVENT, ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult, RefreshPoolInput } from '../../shared/application/refresh-contracts.js';
import { rearmAt } from '../../shared/domain/reboot-rearm.js';
import { defineOrchestration } from '../orchestration.js';
import { activeInstanceStatus } from './call.js';
import { callChild, CHILD_ALREADY_RUNNING, failureText } from './children.js';
import { PoolSignalInputSchema } from './inputs.js';
import { EventWatch } from './races.js';
import { refreshPoolOrchestration } from './refresh-pool.orchestration.js';
import { failedStepOf } from './step-failure.js';
import { POOL_SIGNAL } from './timing.js';

/** What the reboot-notice triggers start (or signal) per pool: the notice and the debounce's clocks. */
export type PoolSignalInput = z.output<typeof PoolSignalInputSchema>;

export interface PoolSignalRun {
  readonly instanceId: string;
  readonly outcome: PoolRefreshResult['outcome'] | 'gave-up';
  readonly reason: string;
}

export interface PoolSignalResult {
  readonly cluster: string;
  readonly pool: string;
  readonly notices: number;
  readonly runs: readonly PoolSignalRun[];
}

export interface PoolSignalStatus {
  readonly cluster: string;
  readonly pool: string;
  readonly step:
    'waiting-quiet-period' | 'refreshing' | 'waiting-for-running-refresh' | 'waiting-for-ready-time' | 'done';
  readonly notices: number;
  readonly refreshAt?: string;
  readonly refreshInstanceId?: string;
}

/** A pool's reboot-notice debounce (`signal:<cluster>:<pool>`). */
export const poolSignalOrchestration = defineOrchestration(
  ORCHESTRATION.poolSignal,
  PoolSignalInputSchema,
  runPoolSignal,
);

function* runPoolSignal(
  context: OrchestrationContext,
  input: PoolSignalInput,
): Generator<Task, PoolSignalResult, unknown> {
  const { cluster, pool } = input;
  const waitMs = Math.max(input.quietPeriodSeconds, input.minimumReadySeconds, 0) * 1000;
  let notices = 1;
  const runs: PoolSignalRun[] = [];
  // A new wait for each race, never one sent twice (races.ts EventWatch); a notice that
  // arrived while nothing waited (during a refresh) is found and wins at once.
  const rebootNotices = new EventWatch(context, EVENT.rebootNotice);
  /** True when a notice arrives before `timer` fires (the timer is then cancelled). */
  function* noticeBefore(timer: TimerTask): Generator<Task, boolean, unknown> {
    return (yield* rebootNotices.race(timer)) !== undefined;
  }
  const status = (step: PoolSignalStatus['step'], extra?: Partial<PoolSignalStatus>): void => {
    const value: PoolSignalStatus = { cluster, pool, step, notices, ...extra };
    context.df.setCustomStatus(value);
  };

  let refreshAt = context.df.currentUtcDateTime.getTime() + waitMs;
  let waiting: PoolSignalStatus['step'] = 'waiting-quiet-period';
  let cycles = 1;
  let rearms = 0;
  for (;;) {
    // Quiet period: every notice restarts both clocks (quiet period and minimum ready time).
    for (let absorbed = 0; absorbed < POOL_SIGNAL.maxNoticesPerCycle; absorbed++) {
      status(waiting, { refreshAt: new Date(refreshAt).toISOString() });
      if (!(yield* noticeBefore(context.df.createTimer(new Date(refreshAt))))) break;
      notices += 1;
      waiting = 'waiting-quiet-period';
      refreshAt = context.df.currentUtcDateTime.getTime() + waitMs;
    }

    const { run, result } = yield* refreshOnce(context, input, runs.length, (step, extra) =>
      status(step, extra),
    );
    runs.push(run);

    // Notices buffered while the refresh ran are in the history before this timer fires: one of
    // them wins, and the pool gets one more cycle (the rebooted node may hold newer patches).
    const now = context.df.currentUtcDateTime;
    if (yield* noticeBefore(context.df.createTimer(new Date(now.getTime())))) {
      notices += 1;
      if (++cycles > POOL_SIGNAL.maxCycles) break;
      waiting = 'waiting-quiet-period';
      refreshAt = context.df.currentUtcDateTime.getTime() + waitMs;
      continue;
    }
    // The rebooted node was Ready too briefly for this plan: plan again once it is old enough.
    const again =
      rearms < POOL_SIGNAL.maxRearms && result?.plan !== undefined
        ? rearmAt(result.plan.verdicts, now, {
            marginSeconds: POOL_SIGNAL.rearmMarginSeconds,
            maxWaitSeconds: POOL_SIGNAL.maxRearmSeconds,
          })
        : undefined;
    if (again === undefined) break;
    rearms += 1;
    waiting = 'waiting-for-ready-time';
    refreshAt = again.getTime();
  }
  status('done');
  return { cluster, pool, notices, runs };
}

/**
 * Runs refreshPool as the pool's singleton id. When another trigger's refresh holds the id, waits for
 * it and tries again: that run chose its donor before this reboot, so only a run after it can pick up
 * newer patches (auto mode answers "up to date" cheaply when there are none).
 */
function* refreshOnce(
  context: OrchestrationContext,
  input: PoolSignalInput,
  sequence: number,
  status: (step: PoolSignalStatus['step'], extra?: Partial<PoolSignalStatus>) => void,
): Generator<Task, { run: PoolSignalRun; result?: PoolRefreshResult }, unknown> {
  const instanceId = poolInstanceId(input.cluster, input.pool);
  for (let attempt = 1; ; attempt++) {
    status('refreshing', { refreshInstanceId: instanceId });
    const refreshInput: RefreshPoolInput = {
      cluster: input.cluster,
      pool: input.pool,
      trigger: 'reboot-notice',
      runSeed: context.df.newGuid(`${input.runSeed ?? ''}|${sequence}|${attempt}`),
    };
    let busy: string;
    // A backend starts a second execution over a running id instead of refusing it: look first.
    const running = yield* runningRefresh(context, instanceId);
    if (running.failed !== undefined) {
      return { run: { instanceId, outcome: 'failed', reason: running.failed } };
    }
    if (running.status !== undefined) {
      busy = `refresh ${instanceId} was still ${running.status}`;
    } else {
      const started = yield* startRefresh(context, refreshInput, instanceId);
      if (started.done !== undefined) return started.done;
      busy = started.busy;
    }
    if (attempt >= POOL_SIGNAL.maxBusyWaits) {
      return { run: { instanceId, outcome: 'gave-up', reason: `${busy} after ${attempt} checks` } };
    }
    const retryAt = new Date(context.df.currentUtcDateTime.getTime() + POOL_SIGNAL.busyRetrySeconds * 1000);
    status('waiting-for-running-refresh', {
      refreshInstanceId: instanceId,
      refreshAt: retryAt.toISOString(),
    });
    yield context.df.createTimer(retryAt);
  }
}

/** Runs the refresh as the pool's singleton: its outcome, or why the pool is busy (to wait and retry). */
function* startRefresh(
  context: OrchestrationContext,
  refreshInput: RefreshPoolInput,
  instanceId: string,
): Generator<Task, { done?: { run: PoolSignalRun; result?: PoolRefreshResult }; busy: string }, unknown> {
  const ended = yield* callChild(context, refreshPoolOrchestration, refreshInput, instanceId);
  if (!ended.ok) {
    if (ended.failure.code === CHILD_ALREADY_RUNNING)
      return { busy: `refresh ${instanceId} was still running` };
    return { done: { run: { instanceId, outcome: 'failed', reason: failureText(ended.failure) } }, busy: '' };
  }
  const result = ended.output;
  // Another runner (the CLI, another task hub) holds the pool: wait for it as for a running refresh.
  if (result.outcome === 'busy') return { busy: `pool held by another runner: ${result.reason}` };
  return { done: { run: { instanceId, outcome: result.outcome, reason: result.reason }, result }, busy: '' };
}

/** The status of a refresh that still owns the pool's id, or the failure to read it. */
function* runningRefresh(
  context: OrchestrationContext,
  instanceId: string,
): Generator<Task, { status?: string; failed?: string }, unknown> {
  try {
    const status = yield* activeInstanceStatus(context, instanceId);
    return status === undefined ? {} : { status };
  } catch (error) {
    return { failed: failureText(failedStepOf(error, 'refreshing')) };
  }
}
