/**
 * The timer tick's work on the pools' PoolImagePolicy objects (docs/pool-policy.md), run by the
 * retirement timer's cluster run every quarter hour: the one-shot actions the specs ask for — a rollback
 * (`spec.rollbackTo`), a generation's retirement (`spec.retire`) — each started as the pool's own
 * rollback or retirement run (the same instance ids as the CLI's and HTTP's, so they never run twice at
 * once), recorded in the object's status before it starts and when it ends, exactly once per value the
 * spec asks for; then every policy's status. A crash resumes the tick from its history: a started run is
 * not started again. A tick that died leaves a Running record, which the next tick continues (it finds
 * a rollback done, or does the rest; every step of those runs is idempotent).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { retireInstanceId, rollbackInstanceId } from '../../shared/application/orchestration-ids.js';
import type { TickAction } from '../../shared/application/pool-policy-sync.js';
import type { PoolRollbackResult } from '../../shared/application/refresh-contracts.js';
import type { PoolRetirementResult } from '../../shared/application/retirement-contracts.js';
import type { PolicyActionRecord } from '../../shared/domain/pool-policy.js';
import { activities } from '../activities.js';
import { activeInstanceStatus, call, callOnce } from './call.js';
import type { ChildResult } from './children.js';
import { CHILD_ALREADY_RUNNING, childResult, startChild } from './children.js';
import { writePolicyStatusAfter } from './policy-status.js';
import { retirePoolOrchestration } from './retire-pool.orchestration.js';
import { rollbackPoolOrchestration } from './rollback-pool.orchestration.js';
import { failedStepOf } from './step-failure.js';

/** What the tick did with one action. */
export interface PolicyActionOutcome {
  readonly pool: string;
  readonly kind: TickAction['kind'];
  readonly target: string;
  /** Done, Failed, Running (more ticks to go), or waiting (another run holds the instance: next tick). */
  readonly state: PolicyActionRecord['state'] | 'waiting';
  readonly message: string;
}

export interface PolicyTickResult {
  readonly actions: readonly PolicyActionOutcome[];
  /** The pools whose policy status the tick writes once the cluster's retirements are done. */
  readonly pools: readonly string[];
  /** The objects could not be read: nothing was acted on (the next tick tries again). */
  readonly failure?: string;
}

/** Reads the cluster's policies and acts on what their specs ask for, one action after another. */
export function* actOnPoolPolicies(
  context: OrchestrationContext,
  input: { readonly cluster: string; readonly trigger: string; readonly runSeed?: string },
): Generator<Task, PolicyTickResult, unknown> {
  let plan;
  try {
    plan = yield* call(
      context,
      activities.planPolicyTick,
      { cluster: input.cluster },
      { step: 'reading-pool-policies' },
    );
  } catch (error) {
    return { actions: [], pools: [], failure: failedStepOf(error, 'reading-pool-policies').message };
  }
  const actions: PolicyActionOutcome[] = [];
  for (const action of plan.actions) {
    context.df.setCustomStatus({ cluster: input.cluster, pool: action.pool, step: 'acting-on-policy' });
    actions.push(yield* actOn(context, input, action));
  }
  return { actions, pools: plan.pools };
}

/** Writes the status of every pool that has a policy (after the tick's runs). */
export function* writePolicyStatuses(
  context: OrchestrationContext,
  cluster: string,
  pools: readonly string[],
): Generator<Task, void, unknown> {
  for (const pool of pools) yield* writePolicyStatusAfter(context, { cluster, pool });
}

function* actOn(
  context: OrchestrationContext,
  input: { readonly cluster: string; readonly trigger: string; readonly runSeed?: string },
  action: TickAction,
): Generator<Task, PolicyActionOutcome, unknown> {
  const { cluster } = input;
  const { pool, kind, target } = action;
  const now = (): string => context.df.currentUtcDateTime.toISOString();
  const startedAt = action.startedAt ?? now();
  const record = (state: PolicyActionRecord['state'], message: string): PolicyActionRecord => ({
    target,
    observedGeneration: action.observedGeneration,
    state,
    startedAt,
    ...(state === 'Running' ? {} : { finishedAt: now() }),
    message: message.slice(0, 2000),
  });
  /** The record this tick read or last wrote: each write replaces only that one (null: none). */
  let replaces = action.replaces;
  const write = function* (state: PolicyActionRecord['state'], message: string) {
    const written = record(state, message);
    const result = yield* callOnce(context, activities.recordPolicyAction, {
      cluster,
      pool,
      kind,
      record: written,
      replaces,
    });
    if (result.ok && result.value.kind === 'superseded') return superseded(result.value.found);
    replaces = { target, state, startedAt };
    return { pool, kind, target, state, message };
  };
  const superseded = (found: string | undefined): PolicyActionOutcome => ({
    pool,
    kind,
    target,
    state: 'waiting',
    message: `another tick acted on it meanwhile (its record: ${found ?? 'changed'}); this one leaves it`,
  });
  if (action.alreadyDone !== undefined) return yield* write('Done', action.alreadyDone);

  const instanceId =
    kind === 'rollback' ? rollbackInstanceId(cluster, pool) : retireInstanceId(cluster, pool);
  let active: string | undefined;
  try {
    active = yield* activeInstanceStatus(context, instanceId);
  } catch {
    active = 'unknown';
  }
  if (active !== undefined) {
    // Another run of the pool (the CLI's, the HTTP API's, the timer's) holds the instance: next tick.
    return { pool, kind, target, state: 'waiting', message: `instance ${instanceId} is ${active}` };
  }
  const started = yield* write(
    'Running',
    `${kind === 'rollback' ? 'rolling back to' : 'retiring generation'} ${target}`,
  );
  if (started.state !== 'Running') return started;
  const runSeed = context.df.newGuid(`${input.runSeed ?? ''}|policy|${kind}|${pool}|${target}`);
  if (kind === 'rollback') {
    const child = startChild(
      context,
      rollbackPoolOrchestration,
      { cluster, pool, to: target, trigger: 'pool-policy', runSeed },
      instanceId,
    );
    yield child.task;
    const [state, message] = rollbackVerdict(target, yield* childResult(context, child));
    return yield* write(state, message);
  }
  const child = startChild(
    context,
    retirePoolOrchestration,
    { cluster, pool, generation: target, trigger: 'pool-policy', runSeed },
    instanceId,
  );
  yield child.task;
  const [state, message] = retireVerdict(target, yield* childResult(context, child));
  return yield* write(state, message);
}

/**
 * A rollback that another run kept from starting is tried again next tick; a refusal is final, but for
 * one: the pool is at the target already (another tick or the CLI rolled it back), which is what was asked.
 */
function rollbackVerdict(
  target: string,
  ended: ChildResult<PoolRollbackResult>,
): [PolicyActionRecord['state'], string] {
  if (!ended.ok) {
    return [ended.failure.code === CHILD_ALREADY_RUNNING ? 'Running' : 'Failed', ended.failure.message];
  }
  switch (ended.output.outcome) {
    case 'rolled-back':
      return ['Done', ended.output.reason];
    case 'busy':
      return ['Running', `${ended.output.reason}; the next tick tries again`];
    case 'refused':
      return ended.output.alreadyAt === target
        ? ['Done', `new instances get ${target} already (${ended.output.reason})`]
        : ['Failed', ended.output.reason];
    case 'planned':
      return ['Failed', ended.output.reason];
  }
}

/**
 * A generation's retirement goes on, tick after tick, while nodes of it wait for the budget; it is done
 * when none is left to take (nodes a mark keeps, or whose drain was given back, are named).
 */
function retireVerdict(
  generation: string,
  ended: ChildResult<PoolRetirementResult>,
): [PolicyActionRecord['state'], string] {
  if (!ended.ok) {
    return [ended.failure.code === CHILD_ALREADY_RUNNING ? 'Running' : 'Failed', ended.failure.message];
  }
  const result = ended.output;
  if (result.outcome === 'refused') return ['Failed', result.reason];
  if (result.outcome === 'busy') return ['Running', `${result.reason}; the next tick tries again`];
  const nodes = result.nodes.filter((node) => node.generation === generation);
  const count = (outcome: string): string[] =>
    nodes.filter((node) => node.outcome === outcome).map((node) => node.node);
  const retired = count('retired');
  const waiting = count('waiting');
  const kept = [...count('kept'), ...count('given-back')];
  const summary =
    `${retired.length === 0 ? 'no node retired this tick' : `retired ${retired.join(', ')}`}` +
    `${waiting.length === 0 ? '' : `; ${waiting.length} waiting for the budget (${waiting.join(', ')})`}` +
    `${kept.length === 0 ? '' : `; kept or given back: ${kept.join(', ')} (see status and docs/retirement.md)`}`;
  return waiting.length > 0 ? ['Running', summary] : ['Done', summary];
}
