/**
 * Retires nodes of older generations (docs/retirement.md): plan (the pool's policy, or every
 * node of one generation on demand), and — unless it is a dry run or nothing is due — hold the pool's
 * lease, plan again under it, and retire the planned nodes one after another (retire-pool/retire-node.ts:
 * surge, hold, drain, delete), counting each against the open window's budget on the lease. A surge that
 * no retired node paid for goes at the end (retire-pool/surplus.ts), so the pool keeps its size. Then the
 * nodes' generation labels are brought up to date and the lease is released.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRetirementPlan } from '../../shared/application/pool-retirement.js';
import type {
  PoolRetirementResult,
  RetirementNodeLine,
  RetirePoolInput,
} from '../../shared/application/retirement-contracts.js';
import { definedOnly } from '../../shared/domain/optional.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call } from './call.js';
import { cancelReport, isCancel, watchCancel, watchLease } from './cancel.js';
import { giveBackLeftovers } from './give-back-leftovers.js';
import { RetirePoolInputSchema } from './inputs.js';
import type { PoolHold } from './ownership.js';
import { acquirePool, fenceOf, leaseLost, releasePool, runIdOf } from './ownership.js';
import { withPolicyStatus } from './policy-status.js';
import { generationsPhase } from './refresh-pool/generations.phase.js';
import { setStatus } from './refresh-pool/run.js';
import type { RetireRun } from './retire-pool/retire-node.js';
import { giveBackRetirement, retireNode, retireStatus } from './retire-pool/retire-node.js';
import { giveBackSurplus } from './retire-pool/surplus.js';

/** A pool's retirement (`retire:<cluster>:<pool>`). */
export const retirePoolOrchestration = defineOrchestration(
  ORCHESTRATION.retirePool,
  RetirePoolInputSchema,
  runRetirePool,
);

function* runRetirePool(
  context: OrchestrationContext,
  input: RetirePoolInput,
): Generator<Task, PoolRetirementResult, unknown> {
  // Whatever the end, the pool's PoolImagePolicy says how the run ended (docs/pool-policy.md).
  return yield* withPolicyStatus(context, input, 'retire', runRetirePoolBody(context, input));
}

function* runRetirePoolBody(
  context: OrchestrationContext,
  input: RetirePoolInput,
): Generator<Task, PoolRetirementResult, unknown> {
  const { cluster, pool } = input;
  const run = { context, input };
  setStatus(run, 'planning-retirement', input.generation === undefined ? 'by policy' : input.generation);
  const first = yield* planOnce(context, input);
  const early = resultWithoutChange(input, first);
  if (early !== undefined) {
    setStatus(run, 'done', `${early.outcome}: ${early.reason}`);
    return early;
  }

  const runId = runIdOf(context, input.runSeed);
  setStatus(run, 'acquiring-lease');
  // Ctrl-C, the cancel event and `vmss-prototype cancel` stop the run at its next boundary (cancel.ts).
  yield* watchCancel(context);
  let acquired;
  try {
    acquired = yield* acquirePool(context, {
      cluster,
      pool,
      lease: first.lease,
      runId,
      purpose: 'retirement',
    });
  } catch (error) {
    throw isCancel(error) ? cancelReport(context, error, { leaseReleased: false }) : error;
  }
  if (acquired.kind === 'busy') {
    const reason =
      `pool ${pool} is held by ${acquired.holder.description}: retire once that run has finished (or stop it ` +
      `with \`vmss-prototype cancel --pool ${pool}\`)`;
    setStatus(run, 'done', `busy: ${reason}`);
    return {
      cluster,
      pool,
      outcome: 'busy',
      reason,
      nodes: first.lines,
      ...definedOnly({ generation: input.generation }),
    };
  }
  const hold = acquired.hold;
  watchLease(context, { cluster, ...first.lease, runId });
  let result: PoolRetirementResult;
  try {
    result = yield* retireHeldPool(context, input, hold);
  } catch (error) {
    if (hold.lost !== undefined) throw leaseLost(hold);
    setStatus({ ...run, runId }, 'releasing-lease');
    const released = yield* releasePool(context, hold);
    throw isCancel(error) ? cancelReport(context, error, { leaseReleased: released }) : error;
  }
  setStatus({ ...run, runId }, 'releasing-lease');
  yield* releasePool(context, hold);
  setStatus({ ...run, runId }, 'done', `${result.outcome}: ${result.reason}`);
  return result;
}

function planOnce(
  context: OrchestrationContext,
  input: RetirePoolInput,
): Generator<Task, PoolRetirementPlan, unknown> {
  return call(
    context,
    activities.planRetirement,
    { cluster: input.cluster, pool: input.pool, ...definedOnly({ generation: input.generation }) },
    { step: 'planning-retirement' },
  );
}

function summaryOf(input: RetirePoolInput, plan: PoolRetirementPlan) {
  return {
    cluster: input.cluster,
    pool: input.pool,
    ...definedOnly({ generation: input.generation, newest: plan.newest }),
    capacity: plan.capacity,
    budget: plan.budget,
    ...definedOnly({ window: plan.window, nextWindowAt: plan.nextWindowAt }),
  };
}

/** The result when the plan changes nothing: refused, closed, nothing due, or a dry run. */
function resultWithoutChange(
  input: RetirePoolInput,
  plan: PoolRetirementPlan,
): PoolRetirementResult | undefined {
  const summary = summaryOf(input, plan);
  if (plan.refused !== undefined) {
    // A refused pool has no budget to speak of.
    const { budget: _budget, ...refusedSummary } = summary;
    return { ...refusedSummary, outcome: 'refused', reason: plan.refused, nodes: plan.lines };
  }
  if (plan.decision === 'closed') {
    const next = plan.nextWindowAt === undefined ? '' : `; the next opens at ${plan.nextWindowAt}`;
    return {
      ...summary,
      outcome: 'closed',
      reason: `${plan.closedReason ?? 'no window is open'}${next}`,
      nodes: plan.lines,
    };
  }
  if (input.dryRun === true) {
    const count = plan.retire.length;
    return {
      ...summary,
      outcome: 'planned',
      reason:
        count === 0
          ? describeNothingDue(input, plan)
          : `would retire ${count} node(s), one at a time${plan.surge ? ', each replaced by a new node first' : ''}`,
      nodes: plan.lines,
    };
  }
  if (plan.retire.length === 0) {
    return { ...summary, outcome: 'nothing-due', reason: describeNothingDue(input, plan), nodes: plan.lines };
  }
  return undefined;
}

function describeNothingDue(input: RetirePoolInput, plan: PoolRetirementPlan): string {
  const count = (outcome: RetirementNodeLine['outcome']) =>
    plan.lines.filter((line) => line.outcome === outcome).length;
  const what =
    input.generation === undefined
      ? 'no node is due'
      : `no node of generation ${input.generation} may go now`;
  return `${what} (${count('waiting')} waiting, ${count('kept')} kept, ${count('stays')} staying)`;
}

/** The retirement proper, while the run holds the pool: planned again, since the pool may have changed. */
function* retireHeldPool(
  context: OrchestrationContext,
  input: RetirePoolInput,
  hold: PoolHold,
): Generator<Task, PoolRetirementResult, unknown> {
  // What dead runs left first (a dead retirement's surge in particular): this run's record replaces theirs.
  setStatus({ context, input, runId: hold.runId }, 'giving-back-leftovers');
  const leftovers = yield* giveBackLeftovers(context, hold);
  const plan = yield* planOnce(context, input);
  const early = resultWithoutChange(input, plan);
  if (early !== undefined) return early;
  const run: RetireRun = {
    context,
    input,
    fence: fenceOf(hold),
    runId: hold.runId,
    plan,
    priorCapacity: plan.capacity,
  };
  const outcomes = new Map<string, RetirementNodeLine>();
  // A node given back (its drain refused) uses none of the budget: the next due node is tried in its
  // place, so that one blocked node does not keep the rest of the pool on older generations forever.
  let room = plan.retire.length;
  const notes: string[] = [];
  try {
    for (const retiree of [...plan.retire, ...plan.next]) {
      if (room === 0) break;
      const done = yield* retireNode(run, retiree);
      if (done.kind === 'retired') room -= 1;
      const line: RetirementNodeLine =
        done.kind === 'retired'
          ? {
              node: retiree.node,
              generation: retiree.generation,
              outcome: 'retired',
              detail: retiree.why,
              ...definedOnly({ replacement: done.replacement }),
            }
          : {
              node: retiree.node,
              generation: retiree.generation,
              outcome: 'given-back',
              detail: done.detail,
            };
      outcomes.set(retiree.node, line);
      if (done.kind === 'retired' && plan.window !== undefined) {
        yield* call(
          context,
          activities.countRetiredNode,
          {
            cluster: input.cluster,
            fence: fenceOf(hold),
            openedAt: plan.window.openedAt,
            node: retiree.node,
          },
          { step: 'deleting-retired-instance' },
        );
      }
    }
    const spare = run.spare;
    if (spare !== undefined) {
      retireStatus(run, 'giving-back-surge', spare.node);
      const given = yield* giveBackSurplus(
        context,
        {
          cluster: input.cluster,
          scaleSet: plan.scaleSet,
          fence: fenceOf(hold),
          instanceId: spare.instanceId,
          node: spare.node,
          drainTimeoutSeconds: plan.drainTimeoutSeconds,
          drainGracePeriodSeconds: plan.drainGracePeriodSeconds,
        },
        'giving-back-surge',
      );
      notes.push(given.detail);
      if (given.deleted) {
        delete run.spare;
        yield* call(
          context,
          activities.clearRetirement,
          { cluster: input.cluster, fence: fenceOf(hold) },
          {
            step: 'giving-back-surge',
          },
        );
      }
    }
  } catch (error) {
    // Failed or cancelled: the node being retired and the spare surge go back before the lease does (a
    // run that lost its lease touches nothing: the run that took the pool over gives back).
    if (hold.lost === undefined) yield* giveBackRetirement(run);
    throw error;
  }
  const after = yield* generationsPhase(run, {}, fenceOf(hold));
  const lines = plan.lines.map((line) => outcomes.get(line.node) ?? line);
  const retired = lines.filter((line) => line.outcome === 'retired').length;
  const givenBack = lines.filter((line) => line.outcome === 'given-back').length;
  const parts = [
    `retired ${retired} node(s)`,
    ...(givenBack === 0 ? [] : [`gave back ${givenBack} whose drain did not finish or could not start`]),
    ...notes,
    ...(leftovers.gaveBack.length === 0 ? [] : [`gave back first: ${leftovers.gaveBack.join('; ')}`]),
    ...leftovers.failures.map((failure) => `could not give back: ${failure}`),
    ...(after.warnings ?? []),
  ];
  return {
    ...summaryOf(input, plan),
    outcome: retired > 0 ? 'retired' : 'given-back',
    reason: parts.join('; '),
    nodes: lines,
  };
}
