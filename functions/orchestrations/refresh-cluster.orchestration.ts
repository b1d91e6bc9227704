/**
 * Refreshes a whole cluster (auto mode): plan every pool (one listing of the nodes for all), give back what dead runs left in the pools it
 * does not refresh (the timer tick's reaper; each pool run reaps its own pool), then refresh the pools
 * that need it as sub-orchestrations, at most `maxParallelPools` at a time. One pool failing does not
 * stop the others. Started by the schedule's subscription run with `handOverPools`, it ends after the
 * planning with the pools to refresh, which that run admits one by one (refresh-subscription).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import { outcomeOfPlan } from '../../shared/application/pool-plan.js';
import type {
  ClusterRefreshResult,
  PoolRefreshResult,
  RefreshClusterInput,
} from '../../shared/application/refresh-contracts.js';
import { refreshRefused } from '../../shared/application/run-events.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call, callEach } from './call.js';
import type { WindowEntry } from './child-window.js';
import { awaitWindowRound } from './child-window.js';
import { RefreshClusterInputSchema } from './inputs.js';
import { poolResultOf, startPoolRun } from './pool-runs.js';
import { releaseLeftovers } from './release-pool.orchestration.js';
import { eventTime, reportRunEvents } from './run-events.js';
import { StepFailure } from './step-failure.js';
import { CLUSTER_WINDOW_CHECK_SECONDS } from './timing.js';

/** A cluster's auto-mode run (`refresh:<cluster>`): the timer's, the HTTP API's and the CLI's. */
export const refreshClusterOrchestration = defineOrchestration(
  ORCHESTRATION.refreshCluster,
  RefreshClusterInputSchema,
  runRefreshCluster,
);

function* runRefreshCluster(
  context: OrchestrationContext,
  input: RefreshClusterInput,
): Generator<Task, ClusterRefreshResult, unknown> {
  const { cluster } = input;
  context.df.setCustomStatus({ cluster, step: 'planning' });
  // One activity plans every pool from ONE listing of the cluster's nodes (a 20 000-node cluster is
  // listed once per run, not once per pool). A pool that cannot be planned is reported on its own.
  let planned: { readonly maxParallelPools: number; readonly outcomes: PlanOutcome[] };
  try {
    const planning = yield* call(context, activities.planCluster, { cluster }, { step: 'planning' });
    planned = {
      maxParallelPools: planning.maxParallelPools,
      outcomes: planning.pools.map((entry) =>
        entry.ok
          ? entry
          : { pool: entry.pool, ok: false, failure: StepFailure.ofActivity('planning', entry.failure) },
      ),
    };
  } catch {
    // Still failing after its retries (one pool's reads keep failing): plan pool by pool as before, so
    // the other pools are planned and refreshed all the same.
    planned = yield* planPoolByPool(context, cluster);
  }
  // A starter may give this run fewer pools at once than the setting.
  const maxParallelPools = Math.min(planned.maxParallelPools, input.maxParallelPools ?? Infinity);
  if (planned.outcomes.length === 0) return { cluster, pools: [] };

  const results: PoolRefreshResult[] = [];
  const toRefresh: PoolPlan[] = [];
  for (const outcome of planned.outcomes) {
    if (!outcome.ok) {
      results.push({
        cluster,
        pool: outcome.pool,
        outcome: 'failed',
        reason: outcome.failure.message,
        failure: { step: 'planning', message: outcome.failure.reason, kind: outcome.failure.kind },
      });
      continue;
    }
    const plan = outcome.plan;
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
  // The reaper for the pools this run does not refresh (the refreshed ones reap their own pool first):
  // one survey of them (cluster-holdings.ts), a give-back only where it finds something to give back.
  const idle = results.flatMap((result) =>
    result.outcome === 'failed' || result.plan === undefined
      ? []
      : [
          {
            name: result.pool,
            scaleSet: {
              subscriptionId: result.plan.scaleSet.subscriptionId,
              resourceGroup: result.plan.scaleSet.resourceGroup,
              name: result.plan.scaleSet.name,
            },
          },
        ],
  );
  const toGiveBack = new Set<string>();
  if (input.dryRun !== true && idle.length > 0) {
    try {
      const survey = yield* call(
        context,
        activities.surveyClusterHoldings,
        { cluster, pools: idle },
        { step: 'giving-back-leftovers' },
      );
      for (const line of survey.pools) if (line.outcome === 'to-give-back') toGiveBack.add(line.pool);
    } catch {
      // The survey failed as a whole (the cluster is away): every idle pool's give-back reads for itself.
      for (const pool of idle) toGiveBack.add(pool.name);
    }
  }
  if (input.dryRun !== true) {
    for (const [index, result] of results.entries()) {
      if (!toGiveBack.has(result.pool)) continue;
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
  // Refusals decided at the cluster's planning (the refreshed pools report their own).
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
  if (input.handOverPools === true && input.dryRun !== true) {
    // The subscription's run starts these pools as its slots free up (refresh-subscription).
    results.sort((a, b) => a.pool.localeCompare(b.pool));
    context.df.setCustomStatus({ cluster, step: 'done' });
    return { cluster, pools: results, handedOver: toRefresh.map((plan) => plan.pool) };
  }

  // Window of sub-orchestrations: a finished pool makes room for the next one. Each child is sent once:
  // the children started in a round race only a new check timer, and children sent before are only ever
  // waited for on their own (a Task.any over them would send them again).
  const inFlight: WindowEntry<string, PoolRefreshResult>[] = [];
  let next = 0;
  while (next < toRefresh.length || inFlight.length > 0) {
    const started: Task[] = [];
    while (next < toRefresh.length && inFlight.length < Math.max(1, maxParallelPools)) {
      const plan = toRefresh[next++];
      if (plan === undefined) break;
      const start = yield* startPoolRun(context, {
        cluster,
        pool: plan.pool,
        trigger: input.trigger,
        runSeed: input.runSeed,
      });
      if (start.started === undefined) {
        results.push(start.result);
        continue;
      }
      const child = start.started;
      inFlight.push({ key: plan.pool, child });
      started.push(child.task);
      context.df.setCustomStatus({ cluster, step: 'refreshing', pools: inFlight.map((f) => f.key) });
    }
    if (inFlight.length === 0) continue;
    // Pools that wait for a slot wake the window at the next check.
    const wakeAtMs =
      next < toRefresh.length
        ? context.df.currentUtcDateTime.getTime() + CLUSTER_WINDOW_CHECK_SECONDS * 1000
        : undefined;
    for (const { key, ended } of yield* awaitWindowRound(context, inFlight, started, wakeAtMs)) {
      results.push(poolResultOf(cluster, key, ended));
    }
  }
  results.sort((a, b) => a.pool.localeCompare(b.pool));
  context.df.setCustomStatus({ cluster, step: 'done' });
  return { cluster, pools: results };
}

type PlanOutcome =
  | { readonly pool: string; readonly ok: true; readonly plan: PoolPlan }
  | { readonly pool: string; readonly ok: false; readonly failure: StepFailure };

/** The fallback: the pools listed, then one plan activity per pool, each retried on its own. */
function* planPoolByPool(
  context: OrchestrationContext,
  cluster: string,
): Generator<Task, { maxParallelPools: number; outcomes: PlanOutcome[] }, unknown> {
  const { pools, maxParallelPools } = yield* call(
    context,
    activities.listPools,
    { cluster },
    { step: 'listing-pools' },
  );
  const plans = yield* callEach(
    context,
    activities.planPool,
    pools.map((pool) => ({ cluster, pool })),
    { step: 'planning' },
  );
  return {
    maxParallelPools,
    outcomes: plans.map((outcome, index) =>
      outcome.ok
        ? { pool: outcome.value.pool, ok: true, plan: outcome.value }
        : { pool: pools[index] ?? '', ok: false, failure: outcome.failure },
    ),
  };
}
