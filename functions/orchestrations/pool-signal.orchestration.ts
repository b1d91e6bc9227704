/**
 * Debounces reboot notices for one pool (instance `signal:<cluster>:<pool>`): absorbs notices until
 * the pool has been quiet for `quietPeriod` and `minimumReadyTime` has passed since the last one,
 * then runs auto mode for the pool ONCE as its singleton refresh (`refresh:<cluster>:<pool>`).
 */
import type { OrchestrationContext, Task, TimerTask } from 'durable-functions';

import { EVENT, ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { RebootNotice } from '../../shared/application/reboot-notices.js';
import type { PoolRefreshResult, RefreshPoolInput } from '../../shared/application/refresh-contracts.js';
import { childFailureMessage, isAlreadyRunning } from './call.js';
import { POOL_SIGNAL } from './timing.js';

export interface PoolSignalInput {
  readonly cluster: string;
  readonly pool: string;
  readonly quietPeriodSeconds: number;
  readonly minimumReadySeconds: number;
  /** The notice that started the debounce. */
  readonly notice: RebootNotice;
}

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
  readonly step: 'waiting-quiet-period' | 'refreshing' | 'waiting-for-running-refresh' | 'done';
  readonly notices: number;
  readonly refreshAt?: string;
  readonly refreshInstanceId?: string;
}

export function* poolSignalOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolSignalResult, unknown> {
  const input = context.df.getInput<PoolSignalInput>();
  const { cluster, pool } = input;
  const waitMs = Math.max(input.quietPeriodSeconds, input.minimumReadySeconds, 0) * 1000;
  let notices = 1;
  const runs: PoolSignalRun[] = [];
  // One outstanding wait at a time: a wait that lost a Task.any stays open in the SDK and would take
  // the next notice, so it is reused until it has delivered one (even one that arrived during a refresh).
  let noticeTask: Task | undefined;
  /**
   * True when a notice arrives before `timer` fires (the timer is then cancelled: un-fired timers keep
   * the instance alive). A notice that already arrived wins at once: Task.any never hears from a
   * child that completed before it was built.
   */
  function* noticeBefore(timer: TimerTask): Generator<Task, boolean, unknown> {
    noticeTask ??= context.df.waitForExternalEvent(EVENT.rebootNotice);
    const winner = noticeTask.isCompleted
      ? noticeTask
      : ((yield context.df.Task.any([timer, noticeTask])) as Task);
    if (winner === timer) return false;
    timer.cancel();
    noticeTask = undefined;
    return true;
  }
  const status = (step: PoolSignalStatus['step'], extra?: Partial<PoolSignalStatus>): void => {
    const value: PoolSignalStatus = { cluster, pool, step, notices, ...extra };
    context.df.setCustomStatus(value);
  };

  for (let cycle = 0; cycle < POOL_SIGNAL.maxCycles; cycle++) {
    // Quiet period: every notice restarts both clocks (quiet period and minimum ready time).
    let last = context.df.currentUtcDateTime.getTime();
    for (let absorbed = 0; absorbed < POOL_SIGNAL.maxNoticesPerCycle; absorbed++) {
      const refreshAt = new Date(last + waitMs);
      status('waiting-quiet-period', { refreshAt: refreshAt.toISOString() });
      if (!(yield* noticeBefore(context.df.createTimer(refreshAt)))) break;
      notices += 1;
      last = context.df.currentUtcDateTime.getTime();
    }

    runs.push(yield* refreshOnce(context, input, (step, extra) => status(step, extra)));

    // Notices buffered while the refresh ran are in the history before this timer fires: one of
    // them wins, and the pool gets one more cycle (the rebooted node may hold newer patches).
    if (!(yield* noticeBefore(context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime())))))
      break;
    notices += 1;
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
  status: (step: PoolSignalStatus['step'], extra?: Partial<PoolSignalStatus>) => void,
): Generator<Task, PoolSignalRun, unknown> {
  const instanceId = poolInstanceId(input.cluster, input.pool);
  const refreshInput: RefreshPoolInput = {
    cluster: input.cluster,
    pool: input.pool,
    trigger: 'reboot-notice',
  };
  for (let attempt = 1; ; attempt++) {
    status('refreshing', { refreshInstanceId: instanceId });
    try {
      const result = (yield context.df.callSubOrchestrator(
        ORCHESTRATION.refreshPool,
        refreshInput,
        instanceId,
      )) as PoolRefreshResult | undefined;
      return {
        instanceId,
        outcome: result?.outcome ?? 'failed',
        reason: result?.reason ?? 'the refresh returned nothing',
      };
    } catch (error) {
      if (!isAlreadyRunning(error))
        return { instanceId, outcome: 'failed', reason: childFailureMessage(error) };
      if (attempt >= POOL_SIGNAL.maxBusyWaits) {
        return {
          instanceId,
          outcome: 'gave-up',
          reason: `refresh ${instanceId} was still running after ${attempt} checks`,
        };
      }
      const retryAt = new Date(context.df.currentUtcDateTime.getTime() + POOL_SIGNAL.busyRetrySeconds * 1000);
      status('waiting-for-running-refresh', {
        refreshInstanceId: instanceId,
        refreshAt: retryAt.toISOString(),
      });
      yield context.df.createTimer(retryAt);
    }
  }
}
