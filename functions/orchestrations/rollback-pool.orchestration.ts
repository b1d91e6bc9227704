/**
 * Rolls a pool back to a retained earlier version: plan (the domain's planRollback: the
 * previous usable version, or the operator's `to`, refused when it is not Succeeded, was rejected or is
 * gone, or a canary is running), then — unless it is a dry run — put the target back in `latest` if an
 * earlier rollback hid it, point a pinned model at it (If-Match on the planned read), hide the newer
 * versions from `latest` and mark them rejected (so neither `latest` nor auto mode brings them back), and
 * verify by reading everything back. No capture: seconds of ARM time. Every step is idempotent: a crash
 * resumes to the same end state. Like a refresh, the rollback holds the pool's lease (ownership.ts) while
 * it changes anything, and plans again under it: a refresh or canary of another runner is never raced.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRollbackResult, RollbackPoolInput } from '../../shared/application/refresh-contracts.js';
import type { PoolRollbackPlan } from '../../shared/application/rollback.js';
import { versionRolledBack } from '../../shared/application/run-events.js';
import { definedOnly } from '../../shared/domain/optional.js';
import { sameResourceId } from '../../shared/domain/resource-id.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call } from './call.js';
import { RollbackPoolInputSchema } from './inputs.js';
import type { PoolHold } from './ownership.js';
import { acquirePool, fenceOf, leaseLost, releasePool, runIdOf } from './ownership.js';
import { withPolicyStatus } from './policy-status.js';
import { capzImageOf } from './refresh-pool/capz.phase.js';
import { generationsPhase } from './refresh-pool/generations.phase.js';
import { isoNow, setStatus } from './refresh-pool/run.js';
import { eventTime, reportRunEvents } from './run-events.js';
import { StepFailure } from './step-failure.js';
import { POLL } from './timing.js';
import { pollUntil } from './waits.js';

/** A pool's rollback to a retained earlier version (`rollback:<cluster>:<pool>`). */
export const rollbackPoolOrchestration = defineOrchestration(
  ORCHESTRATION.rollbackPool,
  RollbackPoolInputSchema,
  runRollbackPool,
);

function* runRollbackPool(
  context: OrchestrationContext,
  input: RollbackPoolInput,
): Generator<Task, PoolRollbackResult, unknown> {
  // Whatever the end, the pool's PoolImagePolicy says how the run ended (docs/pool-policy.md).
  return yield* withPolicyStatus(context, input, 'rollback', runRollbackPoolBody(context, input));
}

function* runRollbackPoolBody(
  context: OrchestrationContext,
  input: RollbackPoolInput,
): Generator<Task, PoolRollbackResult, unknown> {
  const { cluster, pool } = input;
  const run = { context, input };

  setStatus(run, 'planning-rollback', input.to === undefined ? 'to the previous version' : `to ${input.to}`);
  const first = yield* planOnce(context, input);
  if (first.plan.kind === 'refused' || input.dryRun === true) {
    const result = resultOfPlan(input, first);
    setStatus(run, 'done', `${result.outcome}: ${result.reason}`);
    return result;
  }

  const runId = runIdOf(context, input.runSeed);
  setStatus(run, 'acquiring-lease');
  const acquired = yield* acquirePool(context, {
    cluster,
    pool,
    lease: first.lease,
    runId,
    purpose: 'rollback',
  });
  if (acquired.kind === 'busy') {
    const reason =
      `pool ${pool} is held by ${acquired.holder.description}: roll back once that run has finished (or stop ` +
      `it with \`vmss-prototype cancel --pool ${pool}\`)`;
    setStatus(run, 'done', `busy: ${reason}`);
    return { cluster, pool, outcome: 'busy', reason, hidden: [], rejected: [] };
  }
  const hold = acquired.hold;
  let result: PoolRollbackResult;
  try {
    result = yield* rollBackHeldPool(context, input, hold);
  } catch (error) {
    if (hold.lost !== undefined) throw leaseLost(hold);
    setStatus({ ...run, runId }, 'releasing-lease');
    yield* releasePool(context, hold);
    throw error;
  }
  setStatus({ ...run, runId }, 'releasing-lease');
  yield* releasePool(context, hold);
  if (result.outcome === 'rolled-back') {
    const time = eventTime(context);
    yield* reportRunEvents(context, [
      versionRolledBack({ cluster: input.cluster, pool: input.pool, key: runId, time }, result),
    ]);
  }
  setStatus({ ...run, runId }, 'done', `${result.outcome}: ${result.reason}`);
  return result;
}

function planOnce(
  context: OrchestrationContext,
  input: RollbackPoolInput,
): Generator<Task, PoolRollbackPlanView, unknown> {
  return call(
    context,
    activities.planRollback,
    { cluster: input.cluster, pool: input.pool, ...definedOnly({ to: input.to }) },
    { step: 'planning-rollback' },
  );
}

type PoolRollbackPlanView = PoolRollbackPlan;

/** The result of a plan that changes nothing: refused, or a dry run. */
function resultOfPlan(input: RollbackPoolInput, planned: PoolRollbackPlanView): PoolRollbackResult {
  const { cluster, pool } = input;
  const plan = planned.plan;
  if (plan.kind === 'refused') {
    return {
      cluster,
      pool,
      outcome: 'refused',
      reason: plan.reason,
      ...definedOnly({ modelImageId: planned.modelImageId, alreadyAt: plan.alreadyAt }),
      hidden: [],
      rejected: [],
    };
  }
  return {
    cluster,
    pool,
    outcome: 'planned',
    reason: `would roll back from ${plan.from} to ${plan.to}${describeChanges(plan.hide, plan.reject)}`,
    from: plan.from,
    to: plan.to,
    modelImageId: plan.modelImageId,
    hidden: plan.hide,
    rejected: plan.reject,
  };
}

/** The rollback proper, while the run holds the pool: planned again, since the pool may have changed. */
function* rollBackHeldPool(
  context: OrchestrationContext,
  input: RollbackPoolInput,
  hold: PoolHold,
): Generator<Task, PoolRollbackResult, unknown> {
  const { cluster, pool } = input;
  const run = { context, input, runId: hold.runId };
  const planned = yield* planOnce(context, input);
  const plan = planned.plan;
  if (plan.kind === 'refused') return resultOfPlan(input, planned);
  const planView = {
    from: plan.from,
    to: plan.to,
    modelImageId: plan.modelImageId,
    hidden: plan.hide,
    rejected: plan.reject,
  };
  const step = 'rolling-back';
  setStatus(run, step, `${plan.from} → ${plan.to}`);
  const versionRef = (versionName: string) => ({ ...planned.definition, versionName });
  // The target first: a model on the definition must never find `latest` empty.
  if (plan.unhideTarget) {
    yield* call(
      context,
      activities.requestImageVersionExclusion,
      { cluster, ref: versionRef(plan.to), excludeFromLatest: false, fence: fenceOf(hold) },
      { step },
    );
  }
  if (planned.capz !== undefined) {
    // A CAPZ pool: the template names the target version; CAPZ writes the model and replaces the machines.
    const capz = planned.capz;
    const written = yield* call(
      context,
      activities.setCapzTemplateImage,
      {
        cluster,
        namespace: capz.namespace,
        azureMachinePool: capz.azureMachinePool,
        image: capzImageOf(versionRef(plan.to)),
        expectedImages: [capz.currentImage === null ? null : { ...capz.currentImage }],
        fence: fenceOf(hold),
      },
      { step },
    );
    if (written.kind === 'changed-elsewhere') {
      throw StepFailure.terminal(
        step,
        'AzureMachinePoolChangedElsewhere',
        `AzureMachinePool ${capz.namespace}/${capz.azureMachinePool} was changed by another tool after the ` +
          `rollback was planned (now ${written.image}); nothing was overwritten`,
        'check the AzureMachinePool, then run the rollback again',
      );
    }
  } else if (!sameResourceId(planned.modelImageId, plan.modelImageId)) {
    const pointed = yield* call(
      context,
      activities.pointModelAt,
      {
        cluster,
        scaleSet: planned.scaleSet,
        imageId: plan.modelImageId,
        ...definedOnly({ etag: planned.etag }),
      },
      { step },
    );
    if (pointed === 'changed-elsewhere') {
      throw StepFailure.terminal(
        step,
        'ScaleSetChangedElsewhere',
        `scale set ${planned.scaleSet.name} was changed by another tool after the rollback was planned; nothing was overwritten`,
        'check the scale set, then run the rollback again',
      );
    }
  }
  // Hidden before marked: new instances stop getting the newer versions first.
  for (const name of plan.hide) {
    yield* call(
      context,
      activities.requestImageVersionExclusion,
      { cluster, ref: versionRef(name), excludeFromLatest: true, fence: fenceOf(hold) },
      { step },
    );
  }
  for (const name of plan.reject) {
    yield* call(
      context,
      activities.markImageVersion,
      {
        cluster,
        ref: versionRef(name),
        kind: 'rejected',
        reason: `rolled back to ${plan.to} (${input.trigger})`,
        at: isoNow(run),
      },
      { step },
    );
  }

  setStatus(run, 'verifying-rollback');
  yield* pollUntil(context, {
    step: 'verifying-rollback',
    intervalSeconds: POLL.publication.interval,
    timeoutSeconds: POLL.publication.timeout,
    read: () =>
      call(
        context,
        activities.verifyRollback,
        {
          cluster,
          scaleSet: planned.scaleSet,
          definition: planned.definition,
          modelImageId: plan.modelImageId,
          to: plan.to,
          hide: [...plan.hide],
        },
        { step: 'verifying-rollback' },
      ),
    done: (check) => check.done,
    describe: (check) => check.detail,
  });

  const after = yield* generationsPhase(run, {}, fenceOf(hold));
  return {
    cluster,
    pool,
    outcome: 'rolled-back',
    reason: `rolled back from ${plan.from} to ${plan.to}${describeChanges(plan.hide, plan.reject)}`,
    ...planView,
    ...after,
  };
}

function describeChanges(hide: readonly string[], reject: readonly string[]): string {
  const parts = [
    ...(hide.length === 0 ? [] : [`hidden from latest: ${hide.join(', ')}`]),
    ...(reject.length === 0 ? [] : [`marked rejected: ${reject.join(', ')}`]),
  ];
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}
