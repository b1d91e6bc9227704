/**
 * The status a run leaves on its pool's PoolImagePolicy (docs/pool-policy.md): written once the run has
 * ended, whatever its end, with what it came to. One attempt of an activity that never fails: a status
 * that could not be written (no object, an API server away) changes nothing of the run, and the timer's
 * next tick writes it. Outside the run's cancel boundary: a cancelled run still says so.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { LastRun } from '../../shared/application/pool-policy-status.js';
import { activities } from '../activities.js';
import { callOnce } from './call.js';
import { failedStepOf } from './step-failure.js';

/** The run as the status records it, from its result or its failure. */
export function lastRunOf(
  context: OrchestrationContext,
  kind: 'refresh' | 'rollback' | 'retire',
  ended:
    | { readonly result: { readonly outcome: string; readonly reason?: string; readonly runId?: string } }
    | { readonly error: unknown },
): LastRun {
  const at = context.df.currentUtcDateTime.toISOString();
  if ('result' in ended) {
    return {
      runId: ended.result.runId ?? context.df.instanceId,
      kind,
      outcome: ended.result.outcome,
      at,
      ...(ended.result.reason === undefined ? {} : { reason: ended.result.reason.slice(0, 2000) }),
    };
  }
  const failure = failedStepOf(ended.error, 'unknown');
  return {
    runId: context.df.instanceId,
    kind,
    outcome: 'failed',
    step: failure.step,
    at,
    reason: failure.message.slice(0, 2000),
  };
}

/** Writes the pool's policy status after a run; never throws, never waits on a retry. */
export function* writePolicyStatusAfter(
  context: OrchestrationContext,
  target: { readonly cluster: string; readonly pool: string },
  lastRun?: LastRun,
): Generator<Task, void, unknown> {
  yield* callOnce(context, activities.writePolicyStatus, {
    cluster: target.cluster,
    pool: target.pool,
    ...(lastRun === undefined ? {} : { lastRun }),
  });
}

/**
 * Runs `body` and then writes the pool's policy status with how it ended (a dry run writes nothing);
 * the body's result or failure passes through unchanged.
 */
export function* withPolicyStatus<
  Result extends { readonly outcome: string; readonly reason?: string; readonly runId?: string },
>(
  context: OrchestrationContext,
  target: { readonly cluster: string; readonly pool: string; readonly dryRun?: boolean },
  kind: 'refresh' | 'rollback' | 'retire',
  body: Generator<Task, Result, unknown>,
): Generator<Task, Result, unknown> {
  let result: Result;
  try {
    result = yield* body;
  } catch (error) {
    if (target.dryRun !== true)
      yield* writePolicyStatusAfter(context, target, lastRunOf(context, kind, { error }));
    throw error;
  }
  if (target.dryRun !== true)
    yield* writePolicyStatusAfter(context, target, lastRunOf(context, kind, { result }));
  return result;
}
