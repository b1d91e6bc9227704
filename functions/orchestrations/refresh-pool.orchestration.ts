/**
 * Refreshes one node pool (DESIGN.md §2): plan, hold the pool, then the phases — prepare the image
 * definition, capture the donor's OS disk (capture.phase.ts: drain-and-stop and run-command;
 * live-capture.phase.ts: live), build and publish a gallery image version (image.phase.ts), test it on
 * canary instances before it is published (canary.phase.ts; issue 13), point the scale set at it and clean
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
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { leaseRefOf } from '../../shared/application/pool-holdings.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import { outcomeOfPlan } from '../../shared/application/pool-plan.js';
import type { PoolRefreshResult, RefreshPoolInput } from '../../shared/application/refresh-contracts.js';
import { activities } from '../activities.js';
import { call } from './call.js';
import { giveBackLeftovers } from './give-back-leftovers.js';
import type { PoolHold } from './ownership.js';
import { acquirePool, fenceOf, leaseLost, releasePool, runIdOf } from './ownership.js';
import { inParallel } from './parallel.js';
import { canaryPhase } from './refresh-pool/canary.phase.js';
import { capturePhase, giveBackCaptured } from './refresh-pool/capture.phase.js';
import { generationsPhase } from './refresh-pool/generations.phase.js';
import type { BuiltVersion } from './refresh-pool/image.phase.js';
import { imagePhase, prepareImagePhase, publishImageVersion } from './refresh-pool/image.phase.js';
import { liveCaptureNamesFor, liveCapturePhase } from './refresh-pool/live-capture.phase.js';
import { modelPhase } from './refresh-pool/model.phase.js';
import type { RefreshRun } from './refresh-pool/run.js';
import { prepPodNameFor, pullPodNameFor, setStatus, snapshotNameFor } from './refresh-pool/run.js';

export function* refreshPoolOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolRefreshResult, unknown> {
  const input = context.df.getInput<RefreshPoolInput>();
  const { cluster, pool } = input;

  const planOnce = (): Generator<Task, PoolPlan, unknown> =>
    call(
      context,
      activities.planPool,
      { cluster, pool, ...(input.node === undefined ? {} : { node: input.node }) },
      { step: 'planning' },
    );
  setStatus({ context, input }, 'planning');
  const plan = yield* planOnce();
  if (plan.decision.kind !== 'refresh' || input.dryRun === true || plan.image === undefined) {
    // Nothing to build: the pool's nodes still get their generation labels kept current (every timer
    // tick). Labels and our taint only: no lease needed, and a concurrent run writes the same values.
    const after =
      input.dryRun !== true && plan.decision.kind === 'up-to-date'
        ? yield* generationsPhase({ context, input })
        : {};
    return finishedAfterPlan(context, input, plan, after);
  }

  const runId = runIdOf(context, input.runSeed);
  setStatus({ context, input }, 'acquiring-lease');
  const acquired = yield* acquirePool(context, {
    cluster,
    pool,
    lease: leaseRefOf(plan.scaleSet, plan.settings.prepNamespace),
    runId,
    purpose: 'refresh',
  });
  if (acquired.kind === 'busy') {
    const reason =
      `pool ${pool} is held by ${acquired.holder.description}: wait for that run to finish (or stop it with ` +
      `\`vmss-prototype cancel --pool ${pool}\`); if it is gone, \`vmss-prototype release --pool ${pool}\` ` +
      'gives back what it holds once its lease expired';
    setStatus({ context, input }, 'done', `busy: ${reason}`);
    return { cluster, pool, outcome: 'busy', reason, plan };
  }
  const hold = acquired.hold;
  let result: PoolRefreshResult;
  try {
    result = yield* refreshHeldPool(context, input, hold, plan, planOnce);
  } catch (error) {
    if (hold.lost !== undefined) throw leaseLost(hold);
    setStatus({ context, input, runId }, 'releasing-lease');
    yield* releasePool(context, hold);
    throw error;
  }
  setStatus({ context, input, runId }, 'releasing-lease');
  yield* releasePool(context, hold);
  setStatus({ context, input, runId }, 'done', result.outcome === 'refreshed' ? 'refreshed' : result.reason);
  return result;
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
): Generator<Task, PoolRefreshResult, unknown> {
  const { cluster, pool } = input;
  setStatus({ context, input, runId: hold.runId }, 'giving-back-leftovers');
  const leftovers = yield* giveBackLeftovers(context, hold);
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
      ...(decision.patchedAt === undefined ? {} : { patchedAt: decision.patchedAt }),
    },
    runId: hold.runId,
    fence: fenceOf(hold),
  };

  const ref = yield* prepareImagePhase(run);
  run.version = ref.versionName;
  const snapshotName = snapshotNameFor(plan, ref.versionName);

  // The plan chose how (shared/domain/capture-mode.ts). Live capture hands over the scrubbed copy disk
  // (the donor never left service); drain-and-stop hands over its snapshot as soon as it is taken, and
  // the donor comes back while the version is asked for and built: neither waits for the other. The
  // give-back goes second so its step is what the status shows until the node is back.
  let version: BuiltVersion;
  let captured: { readonly donorOutOfServiceSeconds: number };
  if (plan.capture?.mode === 'live') {
    const live = yield* liveCapturePhase(run, liveCaptureNamesFor(plan, ref.versionName, snapshotName));
    version = yield* imagePhase(run, {
      ref,
      source: live.source,
      ...(live.vmId === undefined ? {} : { sourceVmId: live.vmId }),
      publish: !plan.settings.canary.enabled,
    });
    captured = live;
  } else {
    const prepPodName = prepPodNameFor(plan, ref.versionName);
    const taken = yield* capturePhase(run, {
      versionName: ref.versionName,
      snapshotName,
      prepPodName,
      pullPodName: pullPodNameFor(plan, ref.versionName),
    });
    [version, captured] = yield* inParallel(
      context,
      imagePhase(run, {
        ref,
        source: { kind: 'snapshot', id: taken.snapshotId, name: snapshotName },
        ...(taken.completed ? {} : { snapshotPendingSinceMs: taken.requestedAtMs }),
        ...(taken.vmId === undefined ? {} : { sourceVmId: taken.vmId }),
        publish: !plan.settings.canary.enabled,
      }),
      giveBackCaptured(run, taken, prepPodName),
    );
  }

  const canary = plan.settings.canary.enabled ? yield* canaryPhase(run, version) : undefined;
  if (canary?.verdict === 'rejected') {
    const after = yield* generationsPhase(run);
    const reason = `version ${version.versionName} was rejected by its canary: ${canary.reason ?? 'no reason given'}`;
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
  if (canary !== undefined) yield* publishImageVersion(run, version);

  const model = yield* modelPhase(run, version);
  const after = yield* generationsPhase(run);

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
    ...(canary === undefined ? {} : { canary }),
    ...after,
    runId: hold.runId,
    ...(model.modelKept === undefined ? {} : { modelKept: model.modelKept }),
    ...gaveBack,
  };
}
