/**
 * Model phase of a pool refresh: publish the version to `latest` and point the scale set's model at the
 * new image (the definition, so new instances take `latest`, or the version when pinned), verify it by
 * reading it back, only then remove the bootstrap extensions (a model without them but with the old image
 * would build broken nodes), and prune old versions.
 *
 * Publishing is the run's point of no return: the publication request is the last boundary at
 * which a cancel gives everything back. From it on the run finishes publishing and the model update
 * (seconds) before a cancel can stop it, so that a pool is never left half way (a model pinned to a version
 * hidden from `latest`, a canary record on the scale set); a cancel then stops the run before its next
 * change, every change it asked for waited for, and the run's failure says where the pool stands
 * (cancel.ts `notePastReturn`) and that `rollback` points it back.
 */
import type { Task } from 'durable-functions';

import { newNodesOf } from '../../../shared/application/pool-plan.js';
import type { ImageVersion, RemovableExtension } from '../../../shared/domain/compute.js';
import { definedOnly } from '../../../shared/domain/optional.js';
import { galleryDefinitionIdOf, sameResourceId } from '../../../shared/domain/resource-id.js';
import type { ActivityOutput } from '../../activities.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { notePastReturn, shielded } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import { EXPECTED, POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import { pointTemplate } from './capz.phase.js';
import type { BuiltVersion, ImageVersionVisibilityView } from './image.phase.js';
import { awaitPublication, requestPublication } from './image.phase.js';
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

/** Where the model stands once the version is published. */
export type PointedModel =
  | {
      readonly kind: 'pointed';
      readonly targetImageId: string;
      /** The removable extensions as the read that saw the update done listed them. */
      readonly removableExtensions?: readonly RemovableExtension[];
      /** The model's capacity and tags as that read saw them (keep-size plans its retirement from them). */
      readonly model?: { readonly capacity?: number; readonly tags: Readonly<Record<string, string>> };
    }
  | { readonly kind: 'kept-newer'; readonly why: string };

/** Publishes the version and points the model at it (see above): no cancel stops it once published. */
export function* publishAndPoint(
  run: RefreshRun,
  version: BuiltVersion,
): Generator<Task, PointedModel, unknown> {
  const answered = yield* requestPublication(run, version);
  pastReturn(run, version, "the scale set's model is not updated yet");
  return yield* shielded(run.context, publishedAndPointed(run, version, answered));
}

function* publishedAndPointed(
  run: RefreshRun,
  version: BuiltVersion,
  answered: ImageVersionVisibilityView,
): Generator<Task, PointedModel, unknown> {
  yield* awaitPublication(run, version, answered);
  // A CAPZ pool's image changes only through its AzureMachinePool (CAPZ would revert the model).
  const pointed =
    run.plan.capz === undefined ? yield* pointModel(run, version) : yield* pointTemplate(run, version);
  pastReturn(
    run,
    version,
    pointed.kind === 'kept-newer'
      ? pointed.why
      : run.plan.capz !== undefined
        ? `the AzureMachinePool template names it; CAPZ is replacing the pool's machines (${run.plan.capz.description})`
        : newNodesOf(run.plan) === 'run-pool-bootstrap'
          ? "the scale set's model points at it (its customData and bootstrap extensions kept)"
          : "the scale set's model points at it, but its bootstrap extensions were not all removed",
  );
  return pointed;
}

function* pointModel(run: RefreshRun, version: BuiltVersion): Generator<Task, PointedModel, unknown> {
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
      fence: run.fence,
      ...(newNodesOf(plan) === 'run-pool-bootstrap' ? { keepCustomData: true } : {}),
      ...definedOnly({ known: modelKnown(run) }),
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
    return { kind: 'kept-newer', why };
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
  const updated = yield* pollUntil(context, {
    step: 'updating-scale-set-model',
    ...EXPECTED.scaleSetUpdate,
    timeoutSeconds: POLL.scaleSetUpdate.timeout,
    read: () =>
      call(
        context,
        activities.readScaleSetImage,
        { cluster, scaleSet, keepExtensionTypes: [...settings.keepExtensionTypes] },
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
  return {
    kind: 'pointed',
    targetImageId,
    ...definedOnly({ removableExtensions: updated.removableExtensions }),
    // A history recorded before the read carried them has none: the retirement reads the model then.
    ...(updated.tags === undefined
      ? {}
      : { model: { ...definedOnly({ capacity: updated.capacity }), tags: updated.tags } }),
  };
}

/**
 * The model as the run's last write to it left it (run.modelSeen), or as the leftovers' read saw it when
 * the run has not written it since (no stop record: live capture): the image update is written from it.
 */
function modelKnown(run: RefreshRun) {
  const seen =
    run.modelSeen ??
    (run.stopRecord === undefined && run.scaleSetTags?.image !== undefined
      ? { ...run.scaleSetTags, image: run.scaleSetTags.image }
      : undefined);
  return seen === undefined
    ? undefined
    : { tags: { ...seen.tags }, etag: seen.etag, image: { ...seen.image } };
}

/** After the model points at the version: remove the bootstrap extensions and prune old versions. */
export function* modelPhase(
  run: RefreshRun,
  version: BuiltVersion,
  pointed: PointedModel,
): Generator<Task, ModelPhaseOutput, unknown> {
  const { context, cluster, plan } = run;
  const settings = plan.settings;
  if (pointed.kind === 'kept-newer') {
    // The run that installed the newer version also removed the extensions and pruned: nothing left.
    return { removedExtensions: [], prunedVersions: [], modelKept: pointed.why };
  }
  const { targetImageId } = pointed;

  // New nodes that still run the pool's bootstrap (kubeadm join) keep its extensions.
  const keepsBootstrap = newNodesOf(plan) === 'run-pool-bootstrap';
  const removedExtensions = keepsBootstrap ? [] : yield* removeBootstrapExtensions(run, pointed);
  const where = keepsBootstrap
    ? "the scale set's model points at it (its customData and bootstrap extensions kept: new nodes run the pool's bootstrap)"
    : "the scale set's model points at it without its bootstrap extensions";
  pastReturn(run, version, `${where}; older versions were not pruned`);
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
      ...(run.versionsListed === undefined ? {} : { listed: [...run.versionsListed] }),
    },
    { step: 'pruning-versions' },
  );
  const pruned = pruneOutcomeOf(pruning);
  pastReturn(run, version, `${where}; node generation labels were not updated`);
  return {
    removedExtensions,
    prunedVersions: pruned.pruned,
    modelImageId: targetImageId,
    ...definedOnly({ versions: pruned.versions }),
  };
}

/** Removes the model's bootstrap extensions (all asked, then all waited for): the names removed. */
function* removeBootstrapExtensions(
  run: RefreshRun,
  pointed: Extract<PointedModel, { kind: 'pointed' }>,
): Generator<Task, string[], unknown> {
  const { context, cluster, plan } = run;
  const scaleSet = plan.scaleSet;
  const settings = plan.settings;
  const step = 'removing-bootstrap-extensions';
  setStatus(run, step);
  const listing = { cluster, scaleSet, keepExtensionTypes: [...settings.keepExtensionTypes] };
  // The model read that saw the update done carries the extensions (a history recorded before it did
  // has none: they are listed).
  const extensions =
    pointed.removableExtensions ??
    (yield* call(context, activities.listRemovableExtensions, listing, { step }));
  const deletionAskedAtMs = context.df.currentUtcDateTime.getTime();
  // Those asked to go are waited for even when a cancel stops the run between two requests.
  const asked = new Set(extensions.filter((extension) => extension.deleting).map((e) => e.name));
  let allAsked = false;
  try {
    for (const extension of extensions) {
      if (extension.deleting) continue;
      yield* call(
        context,
        activities.requestExtensionDeletion,
        { cluster, scaleSet, extensionName: extension.name },
        { step },
      );
      asked.add(extension.name);
    }
    allAsked = true;
  } finally {
    if (asked.size > 0) {
      yield* shielded(
        context,
        pollUntil(context, {
          step,
          ...EXPECTED.extensionDeletion,
          sinceMs: deletionAskedAtMs,
          timeoutSeconds: POLL.extensionDeletion.timeout,
          read: () => call(context, activities.listRemovableExtensions, listing, { step }),
          done: (left) =>
            allAsked ? left.length === 0 : !left.some((extension) => asked.has(extension.name)),
          describe: (left) =>
            `extensions still present: ${left.map((extension) => extension.name).join(', ')}`,
        }),
      );
    }
  }
  return extensions.map((extension) => extension.name);
}

/** Where a cancel leaves the pool once the version is published, and how to go back. */
function pastReturn(run: RefreshRun, version: BuiltVersion, where: string): void {
  notePastReturn(
    run.context,
    `version ${version.versionName} is published (in \`latest\`) and stays: ${where}; ` +
      `\`vmss-prototype rollback --pool ${run.input.pool}\` points the pool back at the version before`,
  );
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
