/**
 * Refreshes a whole cluster (auto mode): plan every pool, give back what dead runs left in the pools it
 * does not refresh (the timer tick's reaper; each pool run reaps its own pool), then refresh the pools
 * that need it as sub-orchestrations, at most `maxParallelPools` at a time. One pool failing does not
 * stop the others.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import { outcomeOfPlan } from '../../shared/application/pool-plan.js';
import type {
  ClusterRefreshResult,
  PoolRefreshResult,
  RefreshClusterInput,
  RefreshPoolInput,
  RefreshStep,
} from '../../shared/application/refresh-contracts.js';
import { REFRESH_STEPS } from '../../shared/application/refresh-contracts.js';
import { refreshRefused } from '../../shared/application/run-events.js';
import { activities } from '../activities.js';
import { call, callEach, childFailureMessage, isAlreadyRunning } from './call.js';
import { releaseLeftovers } from './release-pool.orchestration.js';
import { eventTime, reportRunEvents } from './run-events.js';

export function* refreshClusterOrchestration(
  context: OrchestrationContext,
): Generator<Task, ClusterRefreshResult, unknown> {
  const input = context.df.getInput<RefreshClusterInput>();
  const { cluster } = input;
  context.df.setCustomStatus({ cluster, step: 'planning' });
  const { pools, maxParallelPools } = yield* call(
    context,
    activities.listPools,
    { cluster },
    { step: 'listing-pools' },
  );
  if (pools.length === 0) return { cluster, pools: [] };

  // Plans are read-only and cheap: all in parallel, each retried like every other step. A pool whose
  // plan still fails is reported on its own, not the whole run.
  const results: PoolRefreshResult[] = [];
  const toRefresh: PoolPlan[] = [];
  const plans = yield* callEach(
    context,
    activities.planPool,
    pools.map((pool) => ({ cluster, pool })),
    { step: 'planning' },
  );
  for (const [index, outcome] of plans.entries()) {
    const pool = pools[index] ?? '';
    if (!outcome.ok) {
      results.push({
        cluster,
        pool,
        outcome: 'failed',
        reason: outcome.failure.message,
        failure: { step: 'planning', message: outcome.failure.reason },
      });
      continue;
    }
    const plan = outcome.value;
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
  // The reaper for the pools this run does not refresh (the refreshed ones reap their own pool first).
  if (input.dryRun !== true) {
    for (const [index, result] of results.entries()) {
      if (result.outcome === 'failed') continue;
      try {
        const released = yield* releaseLeftovers(context, {
          cluster,
          pool: result.pool,
          trigger: input.trigger,
          runSeed: context.df.newGuid(`${input.runSeed ?? ''}|reap|${result.pool}`),
          purpose: 'reap',
        });
        if (released.actions.length > 0 && released.outcome !== 'planned') {
          results[index] = { ...result, gaveBack: released.actions };
        }
      } catch {
        // Giving back is retried by the next tick (and by the pool's next run); the pool's result stands.
      }
    }
  }
  // Refusals decided at the cluster's planning (the refreshed pools report their own, issue 16).
  if (input.dryRun !== true) {
    const time = eventTime(context);
    const key = `${context.df.instanceId}@${time}`;
    yield* reportRunEvents(
      context,
      results
        .filter((result) => result.outcome === 'refused')
        .map((result) =>
          refreshRefused({ cluster, pool: result.pool, key, time }, result.reason, input.trigger),
        ),
    );
  }
  // Pools in name order: deterministic and readable.
  toRefresh.sort((a, b) => a.pool.localeCompare(b.pool));

  // Sliding window of sub-orchestrations: a finished pool makes room for the next one.
  const inFlight: { pool: string; task: Task }[] = [];
  let next = 0;
  while (next < toRefresh.length || inFlight.length > 0) {
    while (next < toRefresh.length && inFlight.length < Math.max(1, maxParallelPools)) {
      const plan = toRefresh[next++];
      if (plan === undefined) break;
      const childInput: RefreshPoolInput = {
        cluster,
        pool: plan.pool,
        trigger: input.trigger,
        runSeed: context.df.newGuid(`${input.runSeed ?? ''}|${plan.pool}`),
      };
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
    if (winner.isFaulted && isAlreadyRunning(winner.result)) {
      // Another trigger (HTTP, a reboot notice) is refreshing this pool right now: that run is the refresh.
      results.push({
        cluster,
        pool: finished.pool,
        outcome: 'skipped',
        reason: `already refreshing (instance ${poolInstanceId(cluster, finished.pool)}, started by another trigger)`,
      });
    } else if (winner.isFaulted) {
      const message = childFailureMessage(winner.result);
      const step = stepOf(message);
      results.push({
        cluster,
        pool: finished.pool,
        outcome: 'failed',
        reason: message,
        failure: {
          step: step ?? 'refreshing',
          message: step === undefined ? message : message.slice(step.length + 2),
        },
      });
    } else {
      results.push(winner.result as PoolRefreshResult);
    }
  }
  results.sort((a, b) => a.pool.localeCompare(b.pool));
  context.df.setCustomStatus({ cluster, step: 'done' });
  return { cluster, pools: results };
}

/**
 * The step a failed refresh names: its failure reads `<step>: <cause>` (StepFailure) and the steps are a
 * known vocabulary, so this is a lookup, not a parse; undefined when the host reworded the message.
 */
function stepOf(message: string): RefreshStep | undefined {
  return REFRESH_STEPS.find((step) => message.startsWith(`${step}: `));
}
