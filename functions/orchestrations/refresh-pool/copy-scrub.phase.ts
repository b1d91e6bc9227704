/**
 * Drain-and-stop for a flavour whose identity never leaves the donor (kubeadm: shared/domain/capture-mode.ts
 * ScrubbedDisk `copy`). The capture phase stopped the donor without touching its disk and snapshotted it;
 * from there the donor is given back at once while the snapshot becomes a managed disk, and once the donor
 * is back that copy is guarded, attached to it, scrubbed by a pod there and detached: the live path's
 * steps (live-capture/), on a copy of a stopped disk instead of a frozen one. The donor's own disk and
 * identity are never modified, so it rejoins exactly as it was. Output: the scrubbed disk, which the image
 * phase builds the version from and then deletes. A failure anywhere detaches and deletes what the run
 * made before it is thrown, as in live capture (live-capture/clean-up.ts).
 */
import type { Task } from 'durable-functions';

import { definedOnly } from '../../../shared/domain/optional.js';
import { inParallel } from '../parallel.js';
import type { TakenSnapshot } from './capture.phase.js';
import { giveBackCaptured } from './capture.phase.js';
import { attachCopy } from './live-capture/attach.js';
import { withLiveCleanUp } from './live-capture/clean-up.js';
import { copySnapshotToDisk } from './live-capture/copy.js';
import { detachScrubbedCopy } from './live-capture/detach.js';
import { readDonorDisksForCopy } from './live-capture/freeze.js';
import { installCopyGuard } from './live-capture/guard.js';
import type { CaptureOutput, LiveCaptureInput } from './live-capture/names.js';
import { liveScopeOf, type Made, nothingMade } from './live-capture/scope.js';
import { scrubCopy } from './live-capture/scrub.js';
import type { RefreshRun } from './run.js';
import { awaitSnapshot } from './snapshot.js';

export function* copyScrubPhase(
  run: RefreshRun,
  input: LiveCaptureInput,
  taken: TakenSnapshot,
  prepPodName: string,
): Generator<Task, CaptureOutput, unknown> {
  // The snapshot is the run's from the capture phase on: the clean-up deletes it whatever happens.
  const made: Made = { ...nothingMade(), snapshot: true };
  return yield* withLiveCleanUp(run, input, made, scrubTakenCopy(run, input, taken, prepPodName, made));
}

/**
 * The donor comes back while its snapshot is made a disk (neither waits for the other); the copy is
 * attached only to a donor that is back, with its guard installed first.
 */
function* scrubTakenCopy(
  run: RefreshRun,
  input: LiveCaptureInput,
  taken: TakenSnapshot,
  prepPodName: string,
  made: Made,
): Generator<Task, CaptureOutput, unknown> {
  const scope = liveScopeOf(run, input, made);
  const copy = function* (): Generator<Task, { copyId: string; plannedLun: number }, unknown> {
    const disks = yield* readDonorDisksForCopy(scope, 'copying-disk');
    const snapshot = taken.completed
      ? { id: taken.snapshotId }
      : yield* awaitSnapshot(run, {
          snapshotName: taken.snapshotName,
          requestedAtMs: taken.requestedAtMs,
          step: 'awaiting-snapshot',
        });
    const copyId = yield* copySnapshotToDisk(scope, disks, snapshot);
    return { copyId, plannedLun: disks.plannedLun };
  };
  // The give-back goes second so its step is what the status shows until the node is back.
  const [{ copyId, plannedLun }, given] = yield* inParallel(
    run.context,
    copy(),
    giveBackCaptured(run, taken, prepPodName),
  );
  // The LUN was chosen while the donor was stopped: a disk attached meanwhile would be seen by the attach.
  yield* installCopyGuard(scope, plannedLun);
  const attached = yield* attachCopy(scope, copyId, plannedLun);
  yield* scrubCopy(scope, attached);
  yield* detachScrubbedCopy(scope, copyId, attached.readySince, attached.seen);
  return {
    source: { kind: 'disk', id: copyId, name: input.copyDiskName },
    ...definedOnly({ vmId: taken.vmId }),
    donorOutOfServiceSeconds: given.donorOutOfServiceSeconds,
  };
}
