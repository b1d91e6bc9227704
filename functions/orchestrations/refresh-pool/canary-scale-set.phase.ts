/**
 * The canary of a boot-from-image pool whose model still holds its bootstrap (its first refresh;
 * docs/design.md#canary): pinning the pool's model would boot the new image with the old bootstrap, a
 * configuration no later node has. Instead, like the CAPZ canary (capz-canary.phase.ts), a temporary canary
 * scale set is created by PUT from the pool's model as publication will leave it (the version, the no-op
 * customData, the bootstrap extensions dropped: shared/domain/canary-scale-set.ts), tagged with the run; its
 * instances are judged like any canary (canary-watch.ts), their nodes drained and the scale set deleted
 * whatever the verdict. Passed: the version is published and the pool's model changes (`publish`).
 * Rejected: the version is marked rejected and stays hidden; the pool's model was never touched.
 * `canary.afterPass` and `afterFail: keep-cordoned` do not apply: the canaries go with their scale set, and
 * the pool keeps its size (no canary ever joined it). Every step is idempotent: the name comes from the
 * run id, a second create finds the first's scale set, a deletion of a missing one is done.
 */
import type { Task } from 'durable-functions';

import { newNodesOf } from '../../../shared/application/pool-plan.js';
import type { CanaryVerdict } from '../../../shared/domain/canary.js';
import { canaryScaleSetNameOf } from '../../../shared/domain/canary-scale-set.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { asStepFailure, StepFailure } from '../step-failure.js';
import { EXPECTED, POLL, RESTORE_RETRY } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { CanaryPhaseOutput } from './canary.phase.js';
import { deleteCheckPods, drainCanaryNodes } from './canary-cleanup.js';
import type { CanaryProgress } from './canary-state.js';
import { newCanaryProgress, scaleSetRefOf } from './canary-state.js';
import { watchCanaries } from './canary-watch.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';
import { concludeSeparateCanary } from './separate-canary.js';

export function* canaryScaleSetPhase<Published>(
  run: RefreshRun,
  version: BuiltVersion,
  publish: () => Generator<Task, Published, unknown>,
): Generator<Task, CanaryPhaseOutput<Published>, unknown> {
  const { context, cluster, plan } = run;
  const policy = plan.settings.canary;
  const source = scaleSetRefOf(run);
  const scaleSet: ScaleSetRef = { ...source, name: canaryScaleSetNameOf(source.name, run.runId) };
  const startedAtMs = context.df.currentUtcDateTime.getTime();
  const progress: CanaryProgress = newCanaryProgress();
  let verdict: CanaryVerdict | undefined;
  let failure: StepFailure | undefined;
  // The create answered: the scale set of this run's name is its own (asked to delete unread).
  let created = false;
  try {
    const step = 'adding-canary-scale-set';
    setStatus(run, step, `canary scale set ${scaleSet.name}, ${policy.instances} instance(s)`);
    progress.scaleOutRequested = true;
    yield* call(
      context,
      activities.createCanaryScaleSet,
      {
        cluster,
        scaleSet: source,
        versionId: version.id,
        newNodes: newNodesOf(plan),
        keepExtensionTypes: [...plan.settings.keepExtensionTypes],
        runId: run.runId,
        canaries: policy.instances,
        fence: run.fence,
      },
      { step },
    );
    created = true;
    const seen = yield* pollUntil(context, {
      step,
      // The instances are listed with the scale set as soon as ARM accepted the PUT.
      expectedSeconds: EXPECTED.scaleSetUpdate.expectedSeconds,
      intervalSeconds: POLL.canaryScaleOut.interval,
      timeoutSeconds: POLL.canaryScaleOut.timeout,
      advice: 'the canary scale set did not build its instances: check the quota and its activity log',
      read: () => call(context, activities.readCanaryScaleSet, { cluster, scaleSet }, { step }),
      done: (view) => view.instances.length >= policy.instances || view.provisioningState === 'Failed',
      describe: (view) =>
        `${view.instances.length} of ${policy.instances} canary instance(s) created` +
        (view.provisioningState === undefined ? '' : ` (${view.provisioningState})`),
    });
    progress.instances = [...seen.instances];
    if (seen.instances.length < policy.instances) {
      throw StepFailure.terminal(
        step,
        'CanaryScaleSetFailed',
        `canary scale set ${scaleSet.name} failed to provision (${seen.instances.length} of ${policy.instances} instance(s))`,
        "check the scale set's activity log (quota, the subnet's free addresses, the image)",
      );
    }
    // The deadline counts from the moment the canaries exist, as for a scale-out (canary.phase.ts).
    // Its nodes join under the source pool's label, which the donor carries.
    verdict = yield* watchCanaries(
      run,
      version,
      scaleSet,
      progress,
      context.df.currentUtcDateTime.getTime(),
      {
        poolNode: run.donor.node,
      },
    );
  } catch (error) {
    failure = asStepFailure('testing-canaries', error);
  }
  // The canary scale set goes whatever happened (never interrupted by a cancel).
  yield* shielded(context, removeCanaryScaleSet(run, scaleSet, progress, created));
  const seconds = Math.round((context.df.currentUtcDateTime.getTime() - startedAtMs) / 1000);
  return yield* concludeSeparateCanary(run, version, publish, {
    verdict,
    failure,
    instances: progress.instances,
    seconds,
    untouched: "the pool's model was not touched, the canary scale set is gone",
  });
}

/**
 * Drains the canaries' nodes, then deletes the canary scale set and waits until it is gone. `created`:
 * the run's create was answered, so the first request is made without reading the scale set's tags.
 */
function* removeCanaryScaleSet(
  run: RefreshRun,
  scaleSet: ScaleSetRef,
  progress: CanaryProgress,
  created: boolean,
): Generator<Task, void, unknown> {
  const { context, cluster } = run;
  const step = 'removing-canary-scale-set';
  setStatus(run, step, `canary scale set ${scaleSet.name}`);
  yield* deleteCheckPods(run, progress);
  // Deleting the scale set deletes its instances without a drain: the run drains their nodes first.
  yield* drainCanaryNodes(run, progress, step);
  const remove = (unread = false) =>
    call(
      context,
      activities.deleteCanaryScaleSet,
      { cluster, scaleSet, runId: run.runId, ...(unread ? { created: true as const } : {}) },
      { step, retry: RESTORE_RETRY },
    );
  const asked = yield* remove(created);
  if (!asked.gone) {
    // Its instances shut down and go together: read where most deletions are done (EXPECTED), then later.
    yield* pollUntil(context, {
      step,
      ...EXPECTED.instanceDeletion,
      timeoutSeconds: POLL.instanceDeletion.timeout,
      read: () => remove(),
      done: (result) => result.gone,
      describe: () => `canary scale set ${scaleSet.name} is being deleted`,
    });
  }
  if (progress.scaleOutRequested) noteGivenBack(context, `the canary scale set ${scaleSet.name} (deleted)`);
}
