/**
 * From the donor to a built (unpublished) image version, the way the plan chose
 * (shared/domain/capture-mode.ts):
 * - live: the scrubbed copy disk (the donor never left service), then the version from it;
 * - drain-and-stop / Run Command, donor scrubbed: the snapshot is handed over as soon as it is taken, and
 *   the donor comes back while the version is asked for and built: neither waits for the other;
 * - drain-and-stop, copy scrubbed (kubeadm): the donor comes back while its untouched snapshot becomes a
 *   disk, that copy is scrubbed on it (copy-scrub.phase.ts), then the version is built from the copy.
 * Where two branches run together, the give-back goes second so its step is what the status shows until
 * the node is back.
 */
import type { Task } from 'durable-functions';

import { scrubbedDiskOf } from '../../../shared/application/pool-plan.js';
import type { ImageVersionRef } from '../../../shared/domain/compute.js';
import { definedOnly } from '../../../shared/domain/optional.js';
import { inParallel } from '../parallel.js';
import { capturePhase, giveBackCaptured } from './capture.phase.js';
import { copyScrubPhase } from './copy-scrub.phase.js';
import type { BuiltVersion } from './image.phase.js';
import { imagePhase } from './image.phase.js';
import { liveCaptureNamesFor, liveCapturePhase } from './live-capture.phase.js';
import type { RefreshRun } from './run.js';
import { prepPodNameFor, pullPodNameFor, snapshotNameFor } from './run.js';

export interface CapturedAndBuilt {
  readonly version: BuiltVersion;
  readonly donorOutOfServiceSeconds: number;
}

/** `enterImage` moves the run's phase clock to `image` when the build starts. */
export function* captureAndBuild(
  run: RefreshRun,
  ref: ImageVersionRef,
  enterImage: () => void,
): Generator<Task, CapturedAndBuilt, unknown> {
  const { plan } = run;
  const snapshotName = snapshotNameFor(plan, ref.versionName);
  if (plan.capture?.mode === 'live') {
    const live = yield* liveCapturePhase(run, liveCaptureNamesFor(plan, ref.versionName, snapshotName));
    enterImage();
    const version = yield* imagePhase(run, {
      ref,
      source: live.source,
      ...definedOnly({ sourceVmId: live.vmId }),
    });
    return { version, donorOutOfServiceSeconds: live.donorOutOfServiceSeconds };
  }
  const prepPodName = prepPodNameFor(plan, ref.versionName);
  const taken = yield* capturePhase(run, {
    versionName: ref.versionName,
    snapshotName,
    prepPodName,
    pullPodName: pullPodNameFor(plan, ref.versionName),
  });
  if (scrubbedDiskOf(plan) === 'copy') {
    const names = liveCaptureNamesFor(plan, ref.versionName, snapshotName);
    const scrubbed = yield* copyScrubPhase(run, names, taken, prepPodName);
    enterImage();
    const version = yield* imagePhase(run, {
      ref,
      source: scrubbed.source,
      ...definedOnly({ sourceVmId: scrubbed.vmId }),
    });
    return { version, donorOutOfServiceSeconds: scrubbed.donorOutOfServiceSeconds };
  }
  // The image phase and the give-back run together from here: the phase clock counts them as image.
  enterImage();
  const [version, given] = yield* inParallel(
    run.context,
    imagePhase(run, {
      ref,
      source: { kind: 'snapshot', id: taken.snapshotId, name: snapshotName },
      ...(taken.completed ? {} : { snapshotPendingSinceMs: taken.requestedAtMs }),
      ...definedOnly({ sourceVmId: taken.vmId }),
    }),
    giveBackCaptured(run, taken, prepPodName),
  );
  return { version, donorOutOfServiceSeconds: given.donorOutOfServiceSeconds };
}
