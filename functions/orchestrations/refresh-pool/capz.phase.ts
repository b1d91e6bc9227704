/**
 * Promotion of a CAPZ pool (docs/capz.md): the version goes into `AzureMachinePool.spec.template.image`
 * through the management cluster — never the scale set's model, which CAPZ would revert — and the run
 * follows CAPZ's rollout (every machine replaced per the pool's RollingUpdate strategy) to its end. A
 * rollout whose new machines fail to join puts the previous template image back (CAPZ then replaces the
 * new machines with ones from it), marks the version rejected, and fails the run saying so.
 */
import type { Task } from 'durable-functions';

import type { PlannedCapzPool } from '../../../shared/application/capz-pool.js';
import { judgeRollout, type RolloutVerdict } from '../../../shared/domain/capz-rollout.js';
import type { ImageVersionRef } from '../../../shared/domain/compute.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { StepFailure } from '../step-failure.js';
import { POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { isoNow, setStatus } from './run.js';

/** The CAPZ image object naming one gallery version (subscription and group set: CAPZ then writes its id). */
export function capzImageOf(ref: ImageVersionRef): Record<string, unknown> {
  return {
    computeGallery: {
      gallery: ref.galleryName,
      name: ref.imageName,
      version: ref.versionName,
      subscriptionID: ref.subscriptionId,
      resourceGroup: ref.resourceGroup,
    },
  };
}

export function capzOf(run: RefreshRun): PlannedCapzPool {
  const capz = run.plan.capz;
  if (capz === undefined) {
    throw StepFailure.terminal('setting-capz-template', 'NotCapzPool', 'the pool is not a CAPZ pool');
  }
  return capz;
}

/** Writes the version into the AzureMachinePool's template, while it holds what the run planned against. */
export function* pointTemplate(
  run: RefreshRun,
  version: BuiltVersion,
): Generator<Task, { readonly kind: 'pointed'; readonly targetImageId: string }, unknown> {
  const capz = capzOf(run);
  const step = 'setting-capz-template';
  setStatus(run, step, `AzureMachinePool ${capz.namespace}/${capz.azureMachinePool}`);
  const image = capzImageOf(version);
  const result = yield* call(
    run.context,
    activities.setCapzTemplateImage,
    {
      cluster: run.cluster,
      namespace: capz.namespace,
      azureMachinePool: capz.azureMachinePool,
      image,
      expectedImages: [capz.priorImage ?? null],
      fence: run.fence,
    },
    { step },
  );
  if (result.kind === 'changed-elsewhere') {
    throw StepFailure.terminal(
      step,
      'AzureMachinePoolChangedElsewhere',
      `AzureMachinePool ${capz.namespace}/${capz.azureMachinePool}'s image was changed by another tool ` +
        `during the run (now ${result.image}); it was not overwritten. Version ${version.versionName} is ` +
        'built and published',
      'check who changed the template; run again to point it at the newest version',
    );
  }
  return { kind: 'pointed', targetImageId: version.id };
}

export interface RolloutOutput {
  readonly replaced: number;
  readonly seconds: number;
}

/**
 * Follows CAPZ's rollout until every machine of the pool runs the new image and is Ready. A new machine
 * that fails (or is not Ready within POLL.capzRollout.joinDeadline) puts the prior image back.
 */
export function* followRollout(
  run: RefreshRun,
  version: BuiltVersion,
): Generator<Task, RolloutOutput, unknown> {
  const { context, cluster } = run;
  const capz = capzOf(run);
  const step = 'following-capz-rollout';
  const startedAtMs = context.df.currentUtcDateTime.getTime();
  setStatus(run, step, capz.description);
  const verdict: RolloutVerdict = yield* pollUntil(context, {
    step,
    expectedSeconds: POLL.capzRollout.interval,
    intervalSeconds: POLL.capzRollout.interval,
    timeoutSeconds: Math.max(1, capz.replicas) * POLL.capzRollout.timeoutPerMachine,
    advice: `check the MachinePool's machines: kubectl get azuremachinepoolmachines -n ${capz.namespace}`,
    read: function* () {
      const machines = yield* call(
        context,
        activities.listCapzMachines,
        { cluster, namespace: capz.namespace, azureMachinePool: capz.azureMachinePool },
        { step },
      );
      return judgeRollout(
        machines,
        capz.replicas,
        POLL.capzRollout.joinDeadline,
        context.df.currentUtcDateTime.getTime(),
      );
    },
    done: (current) => current.kind !== 'rolling',
    between: function* (current) {
      if (current.kind === 'rolling') setStatus(run, step, current.detail);
      yield* [];
    },
    describe: (current) => (current.kind === 'rolling' ? current.detail : current.kind),
  });
  const seconds = Math.round((context.df.currentUtcDateTime.getTime() - startedAtMs) / 1000);
  if (verdict.kind === 'done') return { replaced: verdict.progress.replaced, seconds };
  const reason = verdict.kind === 'failed' ? verdict.reason : 'the rollout did not end';
  yield* restorePriorImage(run, version, reason);
  throw StepFailure.terminal(
    step,
    'CapzRolloutFailed',
    `CAPZ's rollout of version ${version.versionName} failed: ${reason}. The AzureMachinePool template is back ` +
      `on its previous image (CAPZ replaces the new machines with ones from it) and version ` +
      `${version.versionName} is marked rejected`,
    'look at why the new machines did not join (kubectl get azuremachinepoolmachines; the node bootstrap log)',
  );
}

/** The prior image back in the template (only while it still holds this run's version), the version rejected. */
function* restorePriorImage(
  run: RefreshRun,
  version: BuiltVersion,
  reason: string,
): Generator<Task, void, unknown> {
  const { context, cluster } = run;
  const capz = capzOf(run);
  const step = 'restoring-capz-template';
  setStatus(run, step, reason);
  if (capz.priorImage !== undefined) {
    const restored = yield* call(
      context,
      activities.setCapzTemplateImage,
      {
        cluster,
        namespace: capz.namespace,
        azureMachinePool: capz.azureMachinePool,
        image: { ...capz.priorImage },
        expectedImages: [capzImageOf(version)],
        fence: run.fence,
      },
      { step },
    );
    if (restored.kind === 'changed-elsewhere') {
      throw StepFailure.terminal(
        step,
        'AzureMachinePoolChangedElsewhere',
        `CAPZ's rollout of version ${version.versionName} failed (${reason}), and the template was changed by ` +
          `another tool meanwhile (now ${restored.image}): it was not overwritten`,
      );
    }
  }
  yield* call(
    context,
    activities.markImageVersion,
    { cluster, ref: version, kind: 'rejected', reason: `CAPZ rollout failed: ${reason}`, at: isoNow(run) },
    { step },
  );
}
