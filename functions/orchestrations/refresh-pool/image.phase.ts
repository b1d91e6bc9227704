/**
 * Image phase of a pool refresh. Before the capture: ensure the gallery and the image definition and name
 * the new version. After it: create the version from the captured source — the snapshot (drain-and-stop)
 * or the scrubbed managed disk (live) — (Standard_ZRS, falling back to Standard_LRS where the region has
 * no zones), wait until it Succeeded and replicated, and delete the source on every path. A cancel
 * before the version is published deletes it too. Publishing it to `latest` (`requestPublication`) is
 * the run's point of no return (model.phase.ts).
 */
import type { Task } from 'durable-functions';

import { newNodesOf } from '../../../shared/application/pool-plan.js';
import type { ImageVersionRef, StorageAccountType } from '../../../shared/domain/compute.js';
import {
  buildImageVersionTags,
  nextImageVersionName,
  PATCHED_AT_BASIS_TAG,
  RUN_TIMELINE_TAG_KEYS,
} from '../../../shared/domain/image-version.js';
import { definedOnly } from '../../../shared/domain/optional.js';
import { secondsToFinish } from '../../../shared/domain/progress-estimate.js';
import type { ActivityOutput } from '../../activities.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { isCancel, noteGivenBack, shielded } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import { EXPECTED, POLL, PROGRESS_ESTIMATE_MAX_SECONDS } from '../timing.js';
import { pollUntil } from '../waits.js';
import { deleteCopyDisk } from './copy-disk.js';
import type { RefreshRun } from './run.js';
import { isoNow, setStatus } from './run.js';
import { awaitSnapshot, deleteSnapshot } from './snapshot.js';

/** What ARM answered when asked to publish (or hide) a version: its state, when the answer held it. */
export type ImageVersionVisibilityView = ActivityOutput<'requestImageVersionExclusion'>;

/** The version a run builds, once published. */
export type BuiltVersion = ImageVersionRef & {
  readonly id: string;
  readonly storageAccountType: StorageAccountType;
  /**
   * Its tags as the read that saw it built gave them, when no target region has a flag of its own: its
   * publication is asked for without a read first. Nothing of the run changes them before (a rejection's
   * mark ends the run unpublished); another tool's change in between would be written over.
   */
  readonly tags?: Readonly<Record<string, string>>;
};

/**
 * Ensures the gallery and the definition; returns the new version's reference, named after the
 * definition's versions as read once the run held the pool (`held`). The definition is not read again
 * when those versions were listed (it exists) and the model points at one of them (the plan read the
 * definition through the model: its generation is the one the spec carries).
 */
export function* prepareImagePhase(
  run: RefreshRun,
  held: { readonly versionNames: readonly string[]; readonly definitionAbsent: boolean },
): Generator<Task, ImageVersionRef, unknown> {
  const { context, cluster, plan } = run;
  setStatus(run, 'ensuring-image-definition');
  yield* call(
    context,
    activities.ensureImageDefinition,
    {
      cluster,
      definition: plan.image.definition,
      location: plan.scaleSet.location,
      spec: plan.image.definitionSpec,
      galleryTags: plan.image.galleryTags,
      ...(held.definitionAbsent
        ? { definitionAbsent: true }
        : plan.currentImageId === undefined
          ? {}
          : { definitionPresent: true }),
    },
    { step: 'ensuring-image-definition' },
  );
  const versionName = nextImageVersionName(context.df.currentUtcDateTime, held.versionNames);
  return { ...plan.image.definition, versionName };
}

/** What the version is built from: ARM accepts a snapshot or a managed disk as `osDiskImage.source`. */
export interface ImageSource {
  readonly kind: 'snapshot' | 'disk';
  readonly id: string;
  /** In the scale set's resource group. */
  readonly name: string;
}

export interface ImagePhaseInput {
  readonly ref: ImageVersionRef;
  readonly source: ImageSource;
  /**
   * Set when the source is a snapshot taken but not yet seen Succeeded (the donor was started at once):
   * the version is asked for only once it did, reading it first at its expected completion from this time.
   */
  readonly snapshotPendingSinceMs?: number;
  readonly sourceVmId?: string;
}

/**
 * Builds the version (hidden from `latest`), from a source that Succeeded only; the source is deleted
 * whatever happens (a snapshot that ended Failed included). A cancel deletes the version it asked for.
 */
export function* imagePhase(run: RefreshRun, input: ImagePhaseInput): Generator<Task, BuiltVersion, unknown> {
  const progress = { requested: false };
  try {
    if (input.source.kind === 'snapshot' && input.snapshotPendingSinceMs !== undefined) {
      const snapshot = yield* awaitSnapshot(run, {
        snapshotName: input.source.name,
        requestedAtMs: input.snapshotPendingSinceMs,
        step: 'awaiting-snapshot',
      });
      return yield* buildImageVersion(
        run,
        { ...input, source: { ...input.source, id: snapshot.id } },
        progress,
      );
    }
    return yield* buildImageVersion(run, input, progress);
  } catch (error) {
    if (isCancel(error) && progress.requested) yield* deleteImageVersion(run, input.ref);
    throw error;
  } finally {
    if (input.source.kind === 'disk') yield* deleteCopyDisk(run, input.source.name);
    else yield* deleteSnapshot(run, input.source.name);
  }
}

function* buildImageVersion(
  run: RefreshRun,
  input: ImagePhaseInput,
  progress: { requested: boolean },
): Generator<Task, BuiltVersion, unknown> {
  const { context, cluster, plan } = run;
  const { ref } = input;
  const preferences: StorageAccountType[] =
    plan.settings.storageAccountType === 'Standard_ZRS'
      ? ['Standard_ZRS', 'Standard_LRS']
      : [plan.settings.storageAccountType];
  const tags = {
    ...buildImageVersionTags({
      sourceNode: run.donor.node,
      sourceVmId: input.sourceVmId ?? 'unknown',
      cluster,
      pool: run.input.pool,
      // A donor without a usable last-patch time (fallback or operator-named) holds every patch applied
      // up to its capture: the capture time is then the honest lower bound for the next run's patch rule,
      // and the basis tag says so, so that freshness reads "unknown" rather than the capture's age.
      patchedAt: run.donor.patchedAt ?? isoNow(run),
      runId: run.runId,
    }),
    [PATCHED_AT_BASIS_TAG]: run.donor.patchedAt === undefined ? 'capture' : 'donor',
    // For the status page's run timeline (pool-history.ts).
    ...(plan.capture === undefined
      ? {}
      : {
          [RUN_TIMELINE_TAG_KEYS.captureMode]: plan.capture.mode,
          [RUN_TIMELINE_TAG_KEYS.newNodes]: newNodesOf(plan),
        }),
  };
  const readVersion = (step: 'building-image-version') => () =>
    call(context, activities.readImageVersion, { cluster, ref }, { step });
  for (const [index, storageAccountType] of preferences.entries()) {
    const last = index === preferences.length - 1;
    setStatus(run, 'building-image-version', storageAccountType);
    // Asked for from here on, even should the call fail in between (a cancel deletes it).
    progress.requested = true;
    const request = yield* call(
      context,
      activities.requestImageVersion,
      {
        cluster,
        ref,
        location: plan.scaleSet.location,
        sourceId: input.source.id,
        storageAccountType,
        extraRegions: [...plan.settings.extraRegions],
        tags,
        fence: run.fence,
        // The name was chosen after the definition's versions were read under the lease; once a
        // failed version of it was deleted, it is read before being asked for again.
        ...(index === 0 ? { newName: true } : {}),
      },
      { step: 'building-image-version' },
    );
    if (request.kind === 'zrs-unsupported') {
      if (last) throw StepFailure.terminal('building-image-version', 'ZrsUnsupported', request.message);
      continue;
    }
    const askedAt = context.df.currentUtcDateTime.getTime();
    const built = yield* pollUntil(context, {
      step: 'building-image-version',
      ...EXPECTED.imageVersion,
      sinceMs: askedAt,
      timeoutSeconds: POLL.imageVersion.timeout,
      read: readVersion('building-image-version'),
      // Past the expected completion, the replication's progress says when the rest should be done.
      nextDelaySeconds: (view) => {
        const elapsedSeconds = (context.df.currentUtcDateTime.getTime() - askedAt) / 1000;
        const rest = secondsToFinish(elapsedSeconds, view.replicationProgress);
        return rest === undefined ? undefined : Math.min(PROGRESS_ESTIMATE_MAX_SECONDS, Math.ceil(rest));
      },
      done: (view) => {
        if (view.definitionMissing === true) throw definitionMissing(run, ref);
        return (
          view.provisioningState === 'Failed' ||
          (view.provisioningState === 'Succeeded' && view.replicationState !== 'Replicating')
        );
      },
      describe: (view) =>
        `version ${ref.versionName} ${view.provisioningState ?? 'absent'}, replication ${view.replicationState ?? 'unknown'}`,
    });
    if (built.provisioningState === 'Failed' || built.replicationState === 'Failed') {
      // A failed version still exists and blocks a retry under the same name: delete it first.
      yield* deleteImageVersion(run, ref);
      progress.requested = false;
      if (last) {
        throw StepFailure.terminal(
          'building-image-version',
          'ImageVersionFailed',
          `image version ${ref.versionName} failed (${storageAccountType}); it was deleted, and so was the ${input.source.kind === 'disk' ? 'copy disk' : 'snapshot'}`,
          "see the gallery's activity log for ARM's reason, then run again",
        );
      }
      continue;
    }
    if (built.id === undefined) {
      throw StepFailure.terminal(
        'building-image-version',
        'ImageVersionWithoutId',
        `image version ${ref.versionName} has no id`,
      );
    }
    // Hidden from `latest` until it is published (after its canary passed, when the gate is on).
    return { ...ref, id: built.id, storageAccountType, ...definedOnly({ tags: built.tags }) };
  }
  throw StepFailure.terminal(
    'building-image-version',
    'NoStorageTypeLeft',
    'no storage account type left to try',
  );
}

/**
 * Asks ARM to publish the version to `latest`: the last boundary at which a cancel gives everything
 * back. From the request on the version is live (for every model that names the definition). Returns
 * what ARM answered about the version (awaitPublication reads it only when that is not yet done).
 */
export function* requestPublication(
  run: RefreshRun,
  version: BuiltVersion,
): Generator<Task, ImageVersionVisibilityView, unknown> {
  const step = 'publishing-image-version';
  setStatus(run, step);
  return yield* call(
    run.context,
    activities.requestImageVersionExclusion,
    // The moment is recorded on the version for the status page's run timeline (pool-history.ts).
    {
      cluster: run.cluster,
      ref: refOf(version),
      excludeFromLatest: false,
      inLatestAt: isoNow(run),
      fence: run.fence,
      ...(version.tags === undefined ? {} : { knownTags: { ...version.tags } }),
    },
    { step },
  );
}

/** Published: Succeeded, and no longer hidden from `latest`. */
function isPublished(view: ImageVersionVisibilityView): boolean {
  return view.provisioningState === 'Succeeded' && view.excludeFromLatest === false;
}

/**
 * Waits until ARM says the version is in `latest`; not a read when the publication's own answer
 * (`answered`) already said so (ARM answers a PATCH it applied at once with the version, Succeeded).
 */
export function* awaitPublication(
  run: RefreshRun,
  version: BuiltVersion,
  answered: ImageVersionVisibilityView = {},
): Generator<Task, void, unknown> {
  if (isPublished(answered)) return;
  const { context, cluster } = run;
  const ref = refOf(version);
  const step = 'publishing-image-version';
  yield* pollUntil(context, {
    step,
    intervalSeconds: POLL.publication.interval,
    timeoutSeconds: POLL.publication.timeout,
    read: () => call(context, activities.readImageVersion, { cluster, ref }, { step }),
    done: isPublished,
    describe: (view) => `version ${ref.versionName} ${view.provisioningState ?? 'absent'}`,
  });
}

function refOf(version: ImageVersionRef): ImageVersionRef {
  return {
    subscriptionId: version.subscriptionId,
    resourceGroup: version.resourceGroup,
    galleryName: version.galleryName,
    imageName: version.imageName,
    versionName: version.versionName,
  };
}

/**
 * Deletes a version of this run that is not published (failed, or built before a cancel) and waits until
 * it is gone. No cancel interrupts it.
 */
export function deleteImageVersion(run: RefreshRun, ref: ImageVersionRef): Generator<Task, void, unknown> {
  return shielded(run.context, versionDeletion(run, refOf(ref)));
}

function* versionDeletion(run: RefreshRun, ref: ImageVersionRef): Generator<Task, void, unknown> {
  const { context, cluster } = run;
  const step = 'deleting-failed-image-version';
  setStatus(run, step);
  yield* call(context, activities.requestImageVersionDeletion, { cluster, ref }, { step });
  yield* pollUntil(context, {
    step,
    intervalSeconds: POLL.imageVersionDeletion.interval,
    timeoutSeconds: POLL.imageVersionDeletion.timeout,
    read: () => call(context, activities.readImageVersion, { cluster, ref }, { step }),
    done: (view) => !view.exists,
    describe: (view) => `version ${ref.versionName} ${view.provisioningState ?? 'deleting'}`,
  });
  noteGivenBack(context, `image version ${ref.versionName} (deleted)`);
}

/**
 * The image definition (or its gallery) was deleted while the version was built: nothing will ever appear,
 * so the run fails at that first read instead of waiting out the build timeout while it holds the pool.
 */
function definitionMissing(run: RefreshRun, ref: ImageVersionRef): StepFailure {
  return StepFailure.terminal(
    'building-image-version',
    'ImageDefinitionMissing',
    `image definition ${ref.imageName} of gallery ${ref.galleryName} (resource group ${ref.resourceGroup}) ` +
      `no longer exists: image version ${ref.versionName} cannot be built in it`,
    `the node was given back and the snapshot deleted; find out who deleted the definition (the gallery's ` +
      `activity log), then run again: the next run of ${run.input.pool} creates it anew`,
  );
}
