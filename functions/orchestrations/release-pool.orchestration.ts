/**
 * Gives back what a pool's dead or stuck runs hold (`vmss-prototype release`, `POST …/pools/{pool}/release`,
 * and every timer tick for the pools it does not refresh): reads what the cluster and Azure show, decides
 * with the reaper's rule (domain/reaper.ts), and only when something is to be given back takes the pool's
 * lease, reads again under it, gives back, and releases the lease. A live run holding the pool is left
 * alone (`held`, saying who) unless `force` (the operator knows that runner is gone: its lease is taken
 * over, and it stops at its next renewal) or `holderGone` names it (the CLI saw its process gone on this
 * machine: the same, from that run only). A dry run changes nothing and takes no lease.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { decideLeftovers, nothingToGiveBack } from '../../shared/application/leftovers.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ReleasePoolInput, ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { nodeReleased } from '../../shared/application/run-events.js';
import { definedOnly } from '../../shared/domain/optional.js';
import { describeReapAction } from '../../shared/domain/reaper.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call } from './call.js';
import { giveBackLeftovers } from './give-back-leftovers.js';
import { ReleasePoolInputSchema } from './inputs.js';
import { acquirePool, leaseLost, releasePool, runIdOf } from './ownership.js';
import { eventTime, reportRunEvents } from './run-events.js';

/** `release`: give back what a pool's dead or stuck runs hold (`release:<cluster>:<pool>`). */
export const releasePoolOrchestration = defineOrchestration(
  ORCHESTRATION.releasePool,
  ReleasePoolInputSchema,
  runReleasePool,
);

function* runReleasePool(
  context: OrchestrationContext,
  input: ReleasePoolInput,
): Generator<Task, ReleasePoolResult, unknown> {
  context.df.setCustomStatus({ cluster: input.cluster, pool: input.pool, step: 'giving-back-leftovers' });
  const result = yield* releaseLeftovers(context, { ...input, purpose: 'release' });
  context.df.setCustomStatus({
    cluster: input.cluster,
    pool: input.pool,
    step: 'done',
    detail: result.outcome,
  });
  return result;
}

/** The release of one pool, also run by the cluster orchestration for its idle pools. */
export function* releaseLeftovers(
  context: OrchestrationContext,
  request: ReleasePoolInput & { readonly purpose: string },
): Generator<Task, ReleasePoolResult, unknown> {
  const { cluster, pool } = request;
  const step = 'giving-back-leftovers';
  const view = yield* call(context, activities.readPoolHoldings, { cluster, pool }, { step });
  const decision = decideLeftovers(view, context.df.currentUtcDateTime, request);
  const { holder, gone, force, preview } = decision;
  const base = {
    cluster,
    pool,
    ...definedOnly({ holder, holderGone: gone }),
    failures: [],
  };
  if (request.dryRun === true) {
    return {
      ...base,
      outcome: 'planned',
      actions: [...decision.deadRecords, ...preview.actions.map(describeReapAction)],
      kept: preview.kept,
    };
  }
  // A gone holder's lease is taken and released even with nothing to give back: the pool is free at once.
  if (nothingToGiveBack(decision)) {
    return {
      ...base,
      outcome: holder === undefined ? 'nothing-left' : 'held',
      actions: [],
      kept: preview.kept,
    };
  }
  const acquired = yield* acquirePool(context, {
    cluster,
    pool,
    lease: view.scope.lease,
    runId: runIdOf(context, request.runSeed),
    purpose: request.purpose,
    ...(force ? { force: true } : {}),
  });
  if (acquired.kind === 'busy') {
    return { ...base, holder: acquired.holder.description, outcome: 'held', actions: [], kept: preview.kept };
  }
  const hold = acquired.hold;
  try {
    const done = yield* giveBackLeftovers(context, hold);
    yield* releasePool(context, hold);
    const time = eventTime(context);
    yield* reportRunEvents(
      context,
      done.gaveBack.map((action, index) =>
        nodeReleased({ cluster, pool, key: hold.runId, time }, action, index),
      ),
    );
    return {
      ...base,
      outcome: done.failures.length > 0 ? 'failed' : done.gaveBack.length > 0 ? 'released' : 'nothing-left',
      actions: done.gaveBack,
      kept: done.kept,
      failures: done.failures,
    };
  } catch (error) {
    // Also for a lost lease (not released then, not ours): its renewals stop, so that the caller's next
    // pool (the cluster run's, the reaper's) does not fail on them.
    yield* releasePool(context, hold);
    if (hold.lost !== undefined) throw leaseLost(hold);
    throw error;
  }
}
