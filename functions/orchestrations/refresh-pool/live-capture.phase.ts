/**
 * Live capture phase of a pool refresh (capture mode `live`, shared/domain/live-capture.ts): the donor is
 * never cordoned, drained or stopped. Freeze its root filesystem and snapshot the running OS disk (the
 * freeze lasts until the snapshot is requested, bounded by the pod's hold and the host's guard), make a
 * managed disk of the snapshot, attach it to the donor, let a scrub pod de-identify the mounted copy,
 * detach it. Output: the scrubbed disk, which the image phase builds the version from and then deletes.
 * Every step is idempotent and a failure anywhere thaws, detaches and deletes what the run made before
 * it is thrown: the donor carries nothing of the run afterwards.
 *
 * The steps live in live-capture/: freeze.ts, copy.ts, attach.ts, scrub.ts, detach.ts and clean-up.ts;
 * this file runs them in order and then the clean-up.
 */
import type { Task } from 'durable-functions';

import { definedOnly } from '../../../shared/domain/optional.js';
import { attachCopy } from './live-capture/attach.js';
import { withLiveCleanUp } from './live-capture/clean-up.js';
import { copySnapshotToDisk } from './live-capture/copy.js';
import { detachScrubbedCopy } from './live-capture/detach.js';
import { freezeAndSnapshot, readDonorForFreeze } from './live-capture/freeze.js';
import type { CaptureOutput, LiveCaptureInput } from './live-capture/names.js';
import { liveScopeOf, type Made, nothingMade } from './live-capture/scope.js';
import { scrubCopy } from './live-capture/scrub.js';
import type { RefreshRun } from './run.js';

export { type CaptureOutput, type LiveCaptureInput, liveCaptureNamesFor } from './live-capture/names.js';

export function* liveCapturePhase(
  run: RefreshRun,
  input: LiveCaptureInput,
): Generator<Task, CaptureOutput, unknown> {
  const made = nothingMade();
  // From the end of the capture on, the run cleans up what it made: no cancel interrupts that.
  return yield* withLiveCleanUp(run, input, made, captureLive(run, input, made));
}

/** The steps in order; each one notes in `made` what the clean-up would have to undo. */
function* captureLive(
  run: RefreshRun,
  input: LiveCaptureInput,
  made: Made,
): Generator<Task, CaptureOutput, unknown> {
  const scope = liveScopeOf(run, input, made);
  const disks = yield* readDonorForFreeze(scope);
  // 1. Freeze, snapshot, thaw.
  const snapshot = yield* freezeAndSnapshot(scope, disks);
  // 2. A managed disk of the snapshot; the snapshot's deletion is asked at once.
  const copyId = yield* copySnapshotToDisk(scope, disks, snapshot);
  // 3. Attach, scrub, detach: the window in which the donor carries a second copy of its root.
  const attached = yield* attachCopy(scope, copyId, disks.plannedLun, disks.donor);
  yield* scrubCopy(scope, attached);
  yield* detachScrubbedCopy(scope, copyId, attached.readySince, attached.seen);
  return {
    source: { kind: 'disk', id: copyId, name: input.copyDiskName },
    ...definedOnly({ vmId: disks.donor.vmId }),
    donorOutOfServiceSeconds: 0,
  };
}
