/**
 * Model phase of a pool refresh: point the scale set's model at the new image (the definition, so new
 * instances take `latest`, or the version when pinned), verify it by reading it back, only then remove
 * the bootstrap extensions (a model without them but with the old image would build broken nodes), and
 * prune old versions.
 */
import type { Task } from 'durable-functions';

import type { ImageVersion } from '../../../shared/domain/compute.js';
import { galleryDefinitionIdOf, sameResourceId } from '../../../shared/domain/resource-id.js';
import type { ActivityOutput } from '../../activities.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { StepFailure } from '../step-failure.js';
import { EXPECTED, POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

type PruneOutcome = ActivityOutput<'pruneImageVersions'>;

export interface ModelPhaseOutput {
  readonly removedExtensions: readonly string[];
  readonly prunedVersions: readonly string[];
  /** Why the model was left as it was (it already uses a newer version). */
  readonly modelKept?: string;
  /** The image the model was seen on when this phase ended (the generations step starts from it). */
  readonly modelImageId?: string;
  /** The definition's versions the pruning left (the generations step labels with them). */
  readonly versions?: readonly ImageVersion[];
}

export function* modelPhase(
  run: RefreshRun,
  version: BuiltVersion,
): Generator<Task, ModelPhaseOutput, unknown> {
  const { context, cluster, plan } = run;
  const scaleSet = plan.scaleSet;
  const settings = plan.settings;
  const targetImageId = settings.pinVersion ? version.id : galleryDefinitionIdOf(version.id);

  setStatus(run, 'updating-scale-set-model');
  // The model is replaced only while its image is what the run planned against (or the version its
  // canary pinned): an image another tool put there meanwhile stops the run instead of being overwritten.
  const update = yield* call(
    context,
    activities.requestScaleSetImageUpdate,
    {
      cluster,
      scaleSet,
      imageId: targetImageId,
      expectedImages: [
        ...(plan.modelImage === undefined ? [] : [{ ...plan.modelImage }]),
        { id: version.id },
      ],
    },
    { step: 'updating-scale-set-model' },
  );
  if (update.kind === 'kept-newer') {
    // The run that installed the newer version also removed the extensions and pruned: nothing left.
    const why =
      `the model already uses version ${update.version}, newer than ${run.version ?? "this run's"}; it was left as is ` +
      '(only an explicit rollback moves it back)';
    setStatus(run, 'updating-scale-set-model', why);
    return { removedExtensions: [], prunedVersions: [], modelKept: why };
  }
  if (update.kind === 'changed-elsewhere') {
    throw StepFailure.terminal(
      'updating-scale-set-model',
      'ScaleSetChangedElsewhere',
      `scale set ${scaleSet.name}'s image was changed by another tool during the run (now ` +
        `${update.image['id'] ?? JSON.stringify(update.image)}); it was not overwritten. Version ` +
        `${version.versionName} is built and published`,
      'check who changed the model; run again to point it at the newest version',
    );
  }
  const keepExtensionTypes = [...settings.keepExtensionTypes];
  const updated = yield* pollUntil(context, {
    step: 'updating-scale-set-model',
    ...EXPECTED.scaleSetUpdate,
    timeoutSeconds: POLL.scaleSetUpdate.timeout,
    read: () =>
      call(
        context,
        activities.readScaleSetImage,
        { cluster, scaleSet, keepExtensionTypes },
        { step: 'updating-scale-set-model' },
      ),
    done: (view) => {
      if (view.provisioningState === 'Failed') {
        throw StepFailure.terminal(
          'updating-scale-set-model',
          'ScaleSetUpdateFailed',
          `scale set ${scaleSet.name} update failed`,
        );
      }
      return view.provisioningState === 'Succeeded' && sameResourceId(view.imageId, targetImageId);
    },
    describe: (view) => `model image ${view.imageId ?? 'none'} (${view.provisioningState})`,
  });

  const step = 'removing-bootstrap-extensions';
  setStatus(run, step);
  const listing = { cluster, scaleSet, keepExtensionTypes };
  // The model read that saw the update done carries the extensions (a history recorded before it did
  // has none: they are listed).
  const extensions =
    updated.removableExtensions ??
    (yield* call(context, activities.listRemovableExtensions, listing, { step }));
  const deletionAskedAtMs = context.df.currentUtcDateTime.getTime();
  for (const extension of extensions) {
    if (extension.deleting) continue;
    yield* call(
      context,
      activities.requestExtensionDeletion,
      { cluster, scaleSet, extensionName: extension.name },
      { step },
    );
  }
  if (extensions.length > 0) {
    yield* pollUntil(context, {
      step,
      ...EXPECTED.extensionDeletion,
      sinceMs: deletionAskedAtMs,
      timeoutSeconds: POLL.extensionDeletion.timeout,
      read: () => call(context, activities.listRemovableExtensions, listing, { step }),
      done: (left) => left.length === 0,
      describe: (left) => `extensions still present: ${left.map((extension) => extension.name).join(', ')}`,
    });
  }

  setStatus(run, 'pruning-versions');
  const pruning: PruneOutcome | readonly string[] = yield* call(
    context,
    activities.pruneImageVersions,
    {
      cluster,
      definition: plan.image.definition,
      history: settings.history,
      keep: [version.versionName],
      modelImageId: targetImageId,
    },
    { step: 'pruning-versions' },
  );
  const pruned = pruneOutcomeOf(pruning);
  return {
    removedExtensions: extensions.map((extension) => extension.name),
    prunedVersions: pruned.pruned,
    modelImageId: targetImageId,
    ...(pruned.versions === undefined ? {} : { versions: pruned.versions }),
  };
}

/** A history recorded before the pruning handed over its list holds the pruned names alone. */
function pruneOutcomeOf(recorded: PruneOutcome | readonly string[]): Partial<PruneOutcome> & {
  readonly pruned: readonly string[];
} {
  return isNameList(recorded) ? { pruned: recorded } : recorded;
}

function isNameList(recorded: PruneOutcome | readonly string[]): recorded is readonly string[] {
  return Array.isArray(recorded);
}
