/**
 * Refreshes a whole cluster (auto mode): plan every pool, then refresh the pools that need it as
 * sub-orchestrations, at most `maxParallelPools` at a time. One pool failing does not stop the others.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type {
  PoolPlan,
  PoolRefreshResult,
  RefreshPoolInput,
} from '../../shared/application/refresh-contracts.js';
import { ACTIVITY, ORCHESTRATION, outcomeOfPlan } from '../../shared/application/refresh-contracts.js';
import { ALREADY_RUNNING, callStep, retryOptions, stepFailureMessage } from './orchestration-steps.js';

export interface RefreshClusterInput {
  readonly cluster: string;
  readonly dryRun?: boolean;
  readonly trigger: string;
}

export interface ClusterPools {
  readonly pools: readonly string[];
  readonly maxParallelPools: number;
}

export interface ClusterRefreshResult {
  readonly cluster: string;
  readonly pools: readonly PoolRefreshResult[];
}

/** Deterministic id of a pool's refresh: the singleton key, whatever starts it. */
export function poolInstanceId(cluster: string, pool: string): string {
  return `refresh:${cluster}:${pool}`;
}

export function* refreshClusterOrchestration(
  context: OrchestrationContext,
): Generator<Task, ClusterRefreshResult, unknown> {
  const input = context.df.getInput<RefreshClusterInput>();
  const { cluster } = input;
  context.df.setCustomStatus({ cluster, step: 'planning' });
  const { pools, maxParallelPools } = yield* callStep<ClusterPools>(
    context,
    'listing-pools',
    ACTIVITY.listPools,
    {
      cluster,
    },
  );
  if (pools.length === 0) return { cluster, pools: [] };

  // Plans are read-only and cheap: all in parallel, each retried like every other step. Collected one
  // by one (Task.any) so that a pool whose plan still fails is reported on its own, not the whole run.
  const results: PoolRefreshResult[] = [];
  const toRefresh: PoolPlan[] = [];
  const planning = pools.map((pool) => ({
    pool,
    task: context.df.callActivityWithRetry(ACTIVITY.planPool, retryOptions(), { cluster, pool }),
  }));
  while (planning.length > 0) {
    const winner = (yield context.df.Task.any(planning.map((entry) => entry.task))) as Task;
    const index = planning.findIndex((entry) => entry.task === winner);
    const [done] = planning.splice(index, 1);
    if (done === undefined) continue;
    if (winner.isFaulted) {
      const message = stepFailureMessage(winner.result);
      results.push({
        cluster,
        pool: done.pool,
        outcome: 'failed',
        reason: message,
        failure: { step: 'planning', message },
      });
      continue;
    }
    const plan = winner.result as PoolPlan;
    if (plan.decision.kind === 'refresh' && input.dryRun !== true) {
      toRefresh.push(plan);
    } else {
      results.push({
        cluster,
        pool: plan.pool,
        outcome: outcomeOfPlan(plan.decision),
        reason: plan.decision.reason,
        plan,
      });
    }
  }
  // Pools in name order, whatever order their plans finished in: deterministic and readable.
  toRefresh.sort((a, b) => a.pool.localeCompare(b.pool));

  // Sliding window of sub-orchestrations: a finished pool makes room for the next one.
  const inFlight: { pool: string; task: Task }[] = [];
  let next = 0;
  while (next < toRefresh.length || inFlight.length > 0) {
    while (next < toRefresh.length && inFlight.length < Math.max(1, maxParallelPools)) {
      const plan = toRefresh[next++];
      if (plan === undefined) break;
      const childInput: RefreshPoolInput = { cluster, pool: plan.pool, trigger: input.trigger };
      inFlight.push({
        pool: plan.pool,
        // The pool's singleton id: a reboot debounce or an HTTP request for the same pool sees this
        // run and waits (or answers 409) instead of refreshing the pool a second time.
        task: context.df.callSubOrchestrator(
          ORCHESTRATION.refreshPool,
          childInput,
          poolInstanceId(cluster, plan.pool),
        ),
      });
      context.df.setCustomStatus({ cluster, step: 'refreshing', pools: inFlight.map((f) => f.pool) });
    }
    const winner = (yield context.df.Task.any(inFlight.map((f) => f.task))) as Task;
    const index = inFlight.findIndex((f) => f.task === winner);
    const finished = inFlight.splice(index, 1)[0];
    if (finished === undefined) continue;
    if (winner.isFaulted && ALREADY_RUNNING.test(stepFailureMessage(winner.result))) {
      // Another trigger (HTTP, a reboot notice) is refreshing this pool right now: that run is the refresh.
      results.push({
        cluster,
        pool: finished.pool,
        outcome: 'skipped',
        reason: `already refreshing (instance ${poolInstanceId(cluster, finished.pool)}, started by another trigger)`,
      });
    } else if (winner.isFaulted) {
      // The child's message reads "<step>: <cause>" (a StepFailure): keep the step it failed in.
      const message = stepFailureMessage(winner.result);
      const separator = message.indexOf(': ');
      const step =
        separator > 0 && !message.slice(0, separator).includes(' ')
          ? message.slice(0, separator)
          : 'refreshing';
      results.push({
        cluster,
        pool: finished.pool,
        outcome: 'failed',
        reason: message,
        failure: { step, message: step === 'refreshing' ? message : message.slice(separator + 2) },
      });
    } else {
      results.push(winner.result as PoolRefreshResult);
    }
  }
  results.sort((a, b) => a.pool.localeCompare(b.pool));
  context.df.setCustomStatus({ cluster, step: 'done' });
  return { cluster, pools: results };
}
