/**
 * Refreshes one node pool (docs/design.md#one-refresh-step-by-step): plan, hold the pool, then the phases — prepare the image
 * definition, capture the donor's OS disk (capture.phase.ts: drain-and-stop and run-command;
 * live-capture.phase.ts: live), build and publish a gallery image version (image.phase.ts), test it on
 * canary instances before it is published (canary.phase.ts), point the scale set at it and clean
 * up (model.phase.ts), label the pool's nodes with their generation (generations.phase.ts). A
 * deterministic generator:
 * every effect is an activity, every wait a durable timer, every decision a pure domain function. Each
 * phase takes a small typed input and returns a small typed output, so a phase can be swapped or one
 * inserted.
 *
 * Ownership (ownership.ts): a plan that decides to refresh takes the pool's lease before the first write
 * (another runner holding it answers `busy`, saying who and what to do), gives back what dead runs of the
 * pool left (give-back-leftovers.ts; then plans again, the world changed), and releases the lease at the
 * end, on success and on failure. A run whose lease was taken over stops without touching the pool.
 *
 * Cancel (cancel.ts): from the plan's decision on, the cancel event and a cancel asked on the lease stop
 * the run at its next activity boundary, whatever the step; it gives back what it holds and ends failed,
 * saying what it gave back — or, once its version is published (model.phase.ts), where the pool stands.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { leaseRefOf } from '../../shared/application/pool-holdings.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import { outcomeOfPlan } from '../../shared/application/pool-plan.js';
import type { PoolRefreshResult, RefreshPoolInput } from '../../shared/application/refresh-contracts.js';
import {
  refreshFailed,
  refreshRefused,
  refreshStarted,
  refreshSucceeded,
  versionPublished,
  versionRejected,
} from '../../shared/application/run-events.js';
import { messageOf } from '../../shared/domain/errors.js';
import { definedOnly } from '../../shared/domain/optional.js';
import type { RunEvent } from '../../shared/ports/run-events.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call } from './call.js';
import { cancelReport, isCancel, pastReturn, shielded, watchCancel, watchLease } from './cancel.js';
import { giveBackLeftovers } from './give-back-leftovers.js';
import { RefreshPoolInputSchema } from './inputs.js';
import type { PoolHold } from './ownership.js';
import { acquirePool, fenceOf, leaseLost, releasePool, runIdOf } from './ownership.js';
import { withPolicyStatus } from './policy-status.js';
import { canaryPhase } from './refresh-pool/canary.phase.js';
import { canaryScaleSetPhase } from './refresh-pool/canary-scale-set.phase.js';
import { captureAndBuild } from './refresh-pool/capture-and-build.js';
import { followRollout, type RolloutOutput } from './refresh-pool/capz.phase.js';
import { capzCanaryPhase } from './refresh-pool/capz-canary.phase.js';
import { generationsPhase } from './refresh-pool/generations.phase.js';
import { deleteImageVersion, prepareImagePhase } from './refresh-pool/image.phase.js';
import type { PointedModel } from './refresh-pool/model.phase.js';
import { modelPhase, publishAndPoint } from './refresh-pool/model.phase.js';
import type { RefreshRun } from './refresh-pool/run.js';
import { setStatus } from './refresh-pool/run.js';
import { releaseLeftovers } from './release-pool.orchestration.js';
import { eventTime, PhaseClock, reportRunEvents } from './run-events.js';
import { StepFailure } from './step-failure.js';

/** What a run reports at its end: its phase timings and events it held back until then. */
interface RunReport {
  readonly clock: PhaseClock;
  /** Version events, timed when they happened, sent with the run's last event (one activity, not three). */
  readonly pending: RunEvent[];
}

/** A pool's refresh: `refresh:<cluster>:<pool>`, started by every trigger and by the cluster's run. */
export const refreshPoolOrchestration = defineOrchestration(
  ORCHESTRATION.refreshPool,
  RefreshPoolInputSchema,
  runRefreshPool,
);

function* runRefreshPool(
  context: OrchestrationContext,
  input: RefreshPoolInput,
): Generator<Task, PoolRefreshResult, unknown> {
  // Whatever the end, the pool's PoolImagePolicy says how the run ended (docs/pool-policy.md).
  return yield* withPolicyStatus(context, input, 'refresh', runRefreshPoolBody(context, input));
}

function* runRefreshPoolBody(
  context: OrchestrationContext,
  input: RefreshPoolInput,
): Generator<Task, PoolRefreshResult, unknown> {
  const { cluster, pool } = input;
  const report: RunReport = { clock: new PhaseClock(context), pending: [] };
  report.clock.enter('planning');

  const planOnce = (): Generator<Task, PoolPlan, unknown> =>
    call(
      context,
      activities.planPool,
      { cluster, pool, ...definedOnly({ node: input.node }) },
      { step: 'planning' },
    );
  setStatus({ context, input }, 'planning');
  // What the plan saw is true from this moment: another run that takes and gives back the pool afterwards
  // (it may have captured this very donor) makes the plan stale, and the lease refuses it.
  let plannedAt = context.df.currentUtcDateTime;
  let plan = yield* planOnce();
  const busy = (holder: string): PoolRefreshResult => {
    const reason =
      `pool ${pool} is held by ${holder}: wait for that run to finish (or stop it with ` +
      `\`vmss-prototype cancel --pool ${pool}\`); if it is gone, \`vmss-prototype release --pool ${pool}\` ` +
      'gives back what it holds once its lease expired';
    setStatus({ context, input }, 'done', `busy: ${reason}`);
    return { cluster, pool, outcome: 'busy', reason, plan };
  };
  if (input.dryRun !== true && plan.canaryRecord !== undefined) {
    // The model is pinned to a version under test. When the run that pinned it is dead, give its canary
    // back first (nothing is touched while a live run holds the pool), then plan from the model as it is.
    setStatus({ context, input }, 'giving-back-leftovers');
    const released = yield* releaseLeftovers(context, {
      cluster,
      pool,
      trigger: input.trigger,
      runSeed: `${input.runSeed ?? ''}|dead-canary`,
      purpose: 'refresh',
    });
    // A live run holds the pool (testing its own canary): this one is refused as by the lease.
    if (released.outcome === 'held' && released.holder !== undefined) return busy(released.holder);
    if (released.outcome === 'released') {
      plannedAt = context.df.currentUtcDateTime;
      plan = yield* planOnce();
    }
  }
  if (plan.decision.kind !== 'refresh' || input.dryRun === true || plan.image === undefined) {
    // Nothing to build: the pool's nodes still get their generation labels kept current (every timer
    // tick). Labels and our taint only: no lease needed, and a concurrent run writes the same values.
    const after =
      input.dryRun !== true && plan.decision.kind === 'up-to-date'
        ? yield* generationsPhase({ context, input })
        : {};
    const finished = finishedAfterPlan(context, input, plan, after);
    if (finished.outcome === 'refused') {
      const key = `${context.df.instanceId}@${eventTime(context)}`;
      yield* reportRunEvents(context, [
        refreshRefused({ cluster, pool, key, time: eventTime(context) }, finished.reason, input.trigger),
      ]);
    }
    return finished;
  }

  const runId = runIdOf(context, input.runSeed);
  setStatus({ context, input }, 'acquiring-lease');
  report.clock.enter('acquiring-lease');
  yield* watchCancel(context);
  const lease = leaseRefOf(plan.scaleSet, plan.settings.prepNamespace);
  let acquired;
  try {
    acquired = yield* acquirePool(context, { cluster, pool, lease, runId, purpose: 'refresh', plannedAt });
  } catch (error) {
    // A cancel raised before the lease was taken: nothing was touched.
    throw isCancel(error) ? cancelReport(context, error, { leaseReleased: false }) : error;
  }
  if (acquired.kind === 'busy') return busy(acquired.holder.description);
  if (acquired.kind === 'superseded') {
    const reason =
      `pool ${pool} was refreshed or released by another run while this one planned: ${acquired.by.description}; ` +
      'this plan may be stale, so nothing was done: run again to plan from what that run left';
    setStatus({ context, input }, 'done', `busy: ${reason}`);
    return { cluster, pool, outcome: 'busy', reason, plan };
  }
  const hold = acquired.hold;
  watchLease(context, { cluster, ...lease, runId });
  const base = () => ({ cluster, pool, key: runId, runId, time: eventTime(context) });
  yield* reportRunEvents(context, [
    refreshStarted(base(), {
      trigger: input.trigger,
      donor: plan.decision.node,
      scaleSetId: plan.scaleSet.id,
    }),
  ]);
  let result: PoolRefreshResult;
  try {
    result = yield* refreshHeldPool(context, input, hold, plan, planOnce, report);
  } catch (error) {
    const failed = (failure: unknown): RunEvent[] => [
      ...report.pending,
      refreshFailed(base(), failureOf(failure), report.clock.timings()),
    ];
    if (hold.lost !== undefined) {
      yield* reportRunEvents(context, failed(error));
      throw leaseLost(hold);
    }
    setStatus({ context, input, runId }, 'releasing-lease');
    report.clock.enter('releasing-lease');
    const released = yield* releasePool(context, hold);
    // A cancelled run says what it gave back, and where the pool stands when that was not everything.
    const failure = isCancel(error) ? cancelReport(context, error, { leaseReleased: released }) : error;
    yield* reportRunEvents(context, failed(failure));
    throw failure;
  }
  setStatus({ context, input, runId }, 'releasing-lease');
  report.clock.enter('releasing-lease');
  yield* releasePool(context, hold);
  yield* reportRunEvents(context, [...report.pending, endOf(base(), result, report.clock)]);
  setStatus({ context, input, runId }, 'done', result.outcome === 'refreshed' ? 'refreshed' : result.reason);
  return result;
}

/** The run's last event: refreshed (or nothing to do after all), refused, or rejected by its canary. */
function endOf(
  base: Parameters<typeof refreshSucceeded>[0],
  result: PoolRefreshResult,
  clock: PhaseClock,
): RunEvent {
  if (result.outcome === 'refused') return refreshRefused(base, result.reason, '');
  if (result.outcome === 'rejected-by-canary') {
    return refreshFailed(
      base,
      {
        errorType: 'rejected-by-canary',
        message: result.reason,
        ...definedOnly({ donor: result.donor, donorOutOfServiceSeconds: result.donorOutOfServiceSeconds }),
      },
      clock.timings(),
    );
  }
  return refreshSucceeded(base, result, clock.timings());
}

/** What a failed run's event says: the product's own failure text, by step and code. */
function failureOf(error: unknown): { errorType: string; step?: string; message: string } {
  if (error instanceof StepFailure) return { errorType: error.code, step: error.step, message: error.reason };
  return {
    errorType: 'OrchestrationFailed',
    message: messageOf(error),
  };
}

function finishedAfterPlan(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  plan: PoolPlan,
  extra: Partial<PoolRefreshResult> = {},
): PoolRefreshResult {
  const outcome = outcomeOfPlan(plan.decision);
  setStatus({ context, input }, 'done', `${outcome}: ${plan.decision.reason}`);
  return { cluster: input.cluster, pool: input.pool, outcome, reason: plan.decision.reason, plan, ...extra };
}

/** The refresh proper, while the run holds the pool. */
function* refreshHeldPool(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  hold: PoolHold,
  firstPlan: PoolPlan,
  planOnce: () => Generator<Task, PoolPlan, unknown>,
  report: RunReport,
): Generator<Task, PoolRefreshResult, unknown> {
  const { cluster, pool } = input;
  const base = () => ({ cluster, pool, key: hold.runId, runId: hold.runId, time: eventTime(context) });
  setStatus({ context, input, runId: hold.runId }, 'giving-back-leftovers');
  report.clock.enter('giving-back-leftovers');
  // Giving back is never interrupted: a cancel meanwhile is acted on at the next boundary after it.
  const leftovers = yield* shielded(context, giveBackLeftovers(context, hold, firstPlan.listedVersions));
  const gaveBack = leftovers.gaveBack.length === 0 ? {} : { gaveBack: leftovers.gaveBack };
  // Giving back changed the world (a node schedulable again may be the better donor): plan again.
  const plan = leftovers.gaveBack.length === 0 ? firstPlan : yield* planOnce();
  const decision = plan.decision;
  const image = plan.image;
  if (decision.kind !== 'refresh' || image === undefined) {
    return finishedAfterPlan(context, input, plan, { runId: hold.runId, ...gaveBack });
  }

  const run: RefreshRun = {
    context,
    input,
    cluster,
    plan: { ...plan, image },
    donor: {
      node: decision.node,
      instanceId: decision.instanceId,
      flavour: decision.flavour,
      ...definedOnly({ patchedAt: decision.patchedAt }),
    },
    runId: hold.runId,
    fence: fenceOf(hold),
    ...(leftovers.scaleSetTags === undefined ? {} : { scaleSetTags: leftovers.scaleSetTags }),
  };

  report.clock.enter('preparing-image');
  const ref = yield* prepareImagePhase(run, leftovers);
  run.version = ref.versionName;

  // The plan chose how (shared/domain/capture-mode.ts; capture-and-build.ts).
  report.clock.enter('capture');
  const { version, ...captured } = yield* captureAndBuild(run, ref, () => report.clock.enter('image'));

  // Publishing and pointing the model at the version: the point of no return (model.phase.ts).
  const publish = function* (): Generator<Task, PointedModel, unknown> {
    report.clock.enter('publishing');
    return yield* publishAndPoint(run, version);
  };
  if (plan.settings.canary.enabled) report.clock.enter('canary');
  // A CAPZ pool's canary is a temporary MachinePool: its template is never touched before a pass. A
  // pool whose pinned model would keep the bootstrap publication drops tests in a scale set of its own.
  const canary = !plan.settings.canary.enabled
    ? undefined
    : plan.capz !== undefined
      ? yield* capzCanaryPhase(run, version, publish)
      : plan.canaryScaleSet === true
        ? yield* canaryScaleSetPhase(run, version, publish)
        : yield* canaryPhase(run, version, publish);
  if (canary?.verdict === 'rejected') {
    report.pending.push(versionRejected(base(), version, canary.reason ?? 'no reason given'));
    report.clock.enter('generations');
    const after = yield* generationsPhase(run, {}, run.fence);
    const others = canary.othersFromVersionNodes ?? [];
    const reason =
      `version ${version.versionName} was rejected by its canary: ${canary.reason ?? 'no reason given'}` +
      (others.length === 0
        ? ''
        : `; an outside scale-out built ${others.length} node(s) from it while the model was pinned: ` +
          `${others.join(', ')} (${canary.othersAfterFail?.detail ?? 'left in place'})`);
    return {
      cluster,
      pool,
      outcome: 'rejected-by-canary',
      reason,
      plan,
      version,
      donor: decision.node,
      donorOutOfServiceSeconds: captured.donorOutOfServiceSeconds,
      canary,
      runId: hold.runId,
      ...gaveBack,
      ...after,
    };
  }
  let pointed = canary?.published;
  if (canary === undefined) {
    try {
      pointed = yield* publish();
    } catch (error) {
      // A cancel before the publication was asked for: the version built for nothing goes.
      if (isCancel(error) && !pastReturn(context)) yield* deleteImageVersion(run, version);
      throw error;
    }
  }
  if (pointed === undefined) {
    throw StepFailure.terminal('publishing-image-version', 'NotPublished', 'the version was not published');
  }
  report.pending.push(versionPublished(base(), version));

  report.clock.enter('model');
  const model = yield* modelPhase(run, version, pointed);
  // A CAPZ pool: the run follows CAPZ's replacement of every machine to its end (capz.phase.ts).
  let capzRollout: RolloutOutput | undefined;
  if (plan.capz !== undefined && pointed.kind === 'pointed') {
    report.clock.enter('capz-rollout');
    capzRollout = yield* followRollout(run, version);
  }
  report.clock.enter('generations');
  const after = yield* generationsPhase(
    run,
    { ...definedOnly({ modelImageId: model.modelImageId, versions: model.versions }) },
    run.fence,
  );

  return {
    cluster,
    pool,
    outcome: 'refreshed',
    reason: decision.reason,
    plan,
    version,
    donor: decision.node,
    captureMode: plan.capture?.mode ?? 'drain-and-stop',
    donorOutOfServiceSeconds: captured.donorOutOfServiceSeconds,
    removedExtensions: model.removedExtensions,
    prunedVersions: model.prunedVersions,
    ...definedOnly({ canary, capzRollout }),
    ...after,
    runId: hold.runId,
    ...definedOnly({ modelKept: model.modelKept }),
    ...gaveBack,
  };
}
