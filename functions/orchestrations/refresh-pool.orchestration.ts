/**
 * Refreshes one node pool (DESIGN.md §2): plan, then the phases — prepare the image definition, capture
 * the donor's OS disk (capture.phase.ts), build and publish a gallery image version (image.phase.ts),
 * point the scale set at it and clean up (model.phase.ts). A deterministic generator: every effect is an
 * activity, every wait a durable timer, every decision a pure domain function. Each phase takes a small
 * typed input and returns a small typed output, so a phase can be swapped or one inserted.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { outcomeOfPlan } from '../../shared/application/pool-plan.js';
import type { PoolRefreshResult, RefreshPoolInput } from '../../shared/application/refresh-contracts.js';
import { activities } from '../activities.js';
import { call } from './call.js';
import { canaryPhase } from './refresh-pool/canary.phase.js';
import { capturePhase } from './refresh-pool/capture.phase.js';
import { generationsPhase } from './refresh-pool/generations.phase.js';
import { imagePhase, prepareImagePhase, publishImageVersion } from './refresh-pool/image.phase.js';
import { modelPhase } from './refresh-pool/model.phase.js';
import type { RefreshRun } from './refresh-pool/run.js';
import { prepPodNameFor, setStatus, snapshotNameFor } from './refresh-pool/run.js';

export function* refreshPoolOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolRefreshResult, unknown> {
  const input = context.df.getInput<RefreshPoolInput>();
  const { cluster, pool } = input;

  setStatus({ context, input }, 'planning');
  const plan = yield* call(
    context,
    activities.planPool,
    { cluster, pool, ...(input.node === undefined ? {} : { node: input.node }) },
    { step: 'planning' },
  );
  const decision = plan.decision;
  const image = plan.image;
  if (decision.kind !== 'refresh' || input.dryRun === true || image === undefined) {
    const outcome = outcomeOfPlan(decision);
    // Nothing to build: the pool's nodes still get their generation labels kept current (every timer tick).
    const after =
      input.dryRun !== true && outcome === 'up-to-date' ? yield* generationsPhase({ context, input }) : {};
    setStatus({ context, input }, 'done', `${outcome}: ${decision.reason}`);
    return { cluster, pool, outcome, reason: decision.reason, plan, ...after };
  }

  const run: RefreshRun = {
    context,
    input,
    cluster,
    plan: { ...plan, image },
    donor: {
      node: decision.node,
      instanceId: decision.instanceId,
      ...(decision.patchedAt === undefined ? {} : { patchedAt: decision.patchedAt }),
    },
    runTag: context.df.instanceId,
  };

  const ref = yield* prepareImagePhase(run);
  run.version = ref.versionName;
  const snapshotName = snapshotNameFor(plan, ref.versionName);

  const captured = yield* capturePhase(run, {
    versionName: ref.versionName,
    snapshotName,
    prepPodName: prepPodNameFor(plan, ref.versionName),
  });

  const version = yield* imagePhase(run, {
    ref,
    snapshotId: captured.snapshotId,
    snapshotName,
    ...(captured.vmId === undefined ? {} : { sourceVmId: captured.vmId }),
    publish: !plan.settings.canary.enabled,
  });

  const canary = plan.settings.canary.enabled ? yield* canaryPhase(run, version) : undefined;
  if (canary?.verdict === 'rejected') {
    const after = yield* generationsPhase(run);
    const reason = `version ${version.versionName} was rejected by its canary: ${canary.reason ?? 'no reason given'}`;
    setStatus(run, 'done', `rejected-by-canary: ${canary.reason ?? ''}`);
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
      ...after,
    };
  }
  if (canary !== undefined) yield* publishImageVersion(run, version);

  const model = yield* modelPhase(run, version);
  const after = yield* generationsPhase(run);

  setStatus(run, 'done', 'refreshed');
  return {
    cluster,
    pool,
    outcome: 'refreshed',
    reason: decision.reason,
    plan,
    version,
    donor: decision.node,
    donorOutOfServiceSeconds: captured.donorOutOfServiceSeconds,
    removedExtensions: model.removedExtensions,
    prunedVersions: model.prunedVersions,
    ...(canary === undefined ? {} : { canary }),
    ...after,
  };
}
