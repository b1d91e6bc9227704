/**
 * Refreshes a whole cluster (auto mode): plan every pool (one listing of the nodes for all), give back what dead runs left in the pools it
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
} from '../../shared/application/refresh-contracts.js';
import { refreshRefused } from '../../shared/application/run-events.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { activeInstanceStatus, call, callEach } from './call.js';
import type { ChildResult, ChildTask } from './children.js';
import { CHILD_ALREADY_RUNNING, childResult, failureText, isFinished, startChild } from './children.js';
import { RefreshClusterInputSchema } from './inputs.js';
import { durableTimer } from './races.js';
import { refreshPoolOrchestration } from './refresh-pool.orchestration.js';
import { releaseLeftovers } from './release-pool.orchestration.js';
import { eventTime, reportRunEvents } from './run-events.js';
import { failedStepOf, StepFailure } from './step-failure.js';
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
  // A subscription's admission may give this run fewer pools at once than the setting (issue 32).
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
        failure: { step: 'planning', message: outcome.failure.reason },
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

  // Window of sub-orchestrations: a finished pool makes room for the next one. Each child is sent once:
  // the children started in a round race only a new check timer, and children sent before are only ever
  // waited for on their own (a Task.any over them would send them again, issue 26).
  const inFlight: { pool: string; child: ChildTask<PoolRefreshResult> }[] = [];
  let next = 0;
  while (next < toRefresh.length || inFlight.length > 0) {
    const started: Task[] = [];
    while (next < toRefresh.length && inFlight.length < Math.max(1, maxParallelPools)) {
      const plan = toRefresh[next++];
      if (plan === undefined) break;
      // The pool's singleton id: a reboot debounce or an HTTP request for the same pool sees this run
      // and waits (or answers 409). A backend starts a second execution over a running id instead of
      // refusing it, so a running one is looked for first (instance-status.activity.ts).
      const instanceId = poolInstanceId(cluster, plan.pool);
      let running: string | undefined;
      try {
        running = yield* activeInstanceStatus(context, instanceId);
      } catch (error) {
        // Never started unchecked: the pool is reported, the next tick tries again.
        const failure = failedStepOf(error, 'refreshing');
        results.push({
          cluster,
          pool: plan.pool,
          outcome: 'failed',
          reason: failureText(failure),
          failure: { step: failure.step, message: failure.message },
        });
        continue;
      }
      if (running !== undefined) {
        results.push({
          cluster,
          pool: plan.pool,
          outcome: 'skipped',
          reason: `already refreshing (instance ${instanceId} is ${running}, started by another trigger)`,
        });
        continue;
      }
      const child = startChild(
        context,
        refreshPoolOrchestration,
        {
          cluster,
          pool: plan.pool,
          trigger: input.trigger,
          runSeed: context.df.newGuid(`${input.runSeed ?? ''}|${plan.pool}`),
        },
        instanceId,
      );
      inFlight.push({ pool: plan.pool, child });
      started.push(child.task);
      context.df.setCustomStatus({ cluster, step: 'refreshing', pools: inFlight.map((f) => f.pool) });
    }
    if (inFlight.length === 0) continue;
    if (next < toRefresh.length) {
      // Pools wait for a slot: wake when a child just started ends or at the next check.
      const check = durableTimer(
        context,
        new Date(context.df.currentUtcDateTime.getTime() + CLUSTER_WINDOW_CHECK_SECONDS * 1000),
      );
      yield started.length === 0 ? check : context.df.Task.any([...started, check]);
    } else if (started.length > 0) {
      // Every pool has started: the children of this round are sent together (they run at once).
      try {
        yield context.df.Task.any(started);
      } catch {
        // Read from the task below.
      }
    } else {
      // The results are read in start order, each child sent before waited for on its own.
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
      results.push(resultOfChild(cluster, finished.pool, yield* childResult(context, finished.child)));
    }
  }
  results.sort((a, b) => a.pool.localeCompare(b.pool));
  context.df.setCustomStatus({ cluster, step: 'done' });
  return { cluster, pools: results };
}

/** A finished pool refresh as the cluster's result reports it. */
function resultOfChild(
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
