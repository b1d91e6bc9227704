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

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ReleasePoolInput, ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { nodeReleased } from '../../shared/application/run-events.js';
import { definedOnly } from '../../shared/domain/optional.js';
import { describeHolder, LEASE_ANNOTATIONS, leaseState } from '../../shared/domain/ownership.js';
import { describeReapAction, planReaping } from '../../shared/domain/reaper.js';
import { parseRetirementRecord } from '../../shared/domain/retirement-record.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call } from './call.js';
import { deadCapzCanaryPools, giveBackLeftovers } from './give-back-leftovers.js';
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
  const state = leaseState(view.lease, context.df.currentUtcDateTime);
  const live = state.kind === 'held' && state.live ? state : undefined;
  const holder =
    live === undefined
      ? undefined
      : describeHolder(live, view.lease?.annotations[LEASE_ANNOTATIONS.instanceId]);
  // The CLI saw the live holder's process gone (same host, pid no longer runs): that run is taken over.
  const gone =
    live !== undefined && request.holderGone?.runId === live.holder.runId ? request.holderGone : undefined;
  const force = request.force === true || gone !== undefined;
  const alive = force ? undefined : live?.holder.runId;
  const preview = planReaping(view.holdings, alive);
  // A dead run's canary: the model pinned to a version nobody tests any more, recorded on the scale set
  // (a run killed while testing left every scale-out booting the untested image).
  const record = view.canaryRecord;
  const deadCanary: string[] =
    record === undefined
      ? []
      : record === 'damaged'
        ? ['the canary record on the scale set (damaged): the model and capacity checked and put back']
        : record.run === alive
          ? []
          : [
              `the canary of run ${record.run}: the model back to its prior image, the canary instances ` +
                'deleted, the capacity as before',
            ];
  // A dead run's retirement (retire-pool/): its node, its surge, its record on the lease.
  const retirement = parseRetirementRecord(view.lease?.annotations[LEASE_ANNOTATIONS.retirement]);
  if (retirement === 'damaged') {
    deadCanary.push('the retirement record on the pool lease (damaged): removed');
  } else if (retirement !== undefined && retirement.run !== alive) {
    deadCanary.push(
      `the retirement of run ${retirement.run}: node ${retirement.node} given back, its surge instance ` +
        `drained and deleted unless node ${retirement.node}'s instance is gone (one instance less: what others added stays)`,
    );
  }
  // A CAPZ pool's canary pools of dead runs, in its management cluster.
  for (const name of deadCapzCanaryPools(view, alive)) {
    deadCanary.push(`the canary pool ${name} of a dead run, in the management cluster: deleted`);
  }
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
      actions: [...deadCanary, ...preview.actions.map(describeReapAction)],
      kept: preview.kept,
    };
  }
  // A gone holder's lease is taken and released even with nothing to give back: the pool is free at once.
  if (preview.actions.length === 0 && deadCanary.length === 0 && gone === undefined) {
    return {
      ...base,
      outcome: live === undefined ? 'nothing-left' : 'held',
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
