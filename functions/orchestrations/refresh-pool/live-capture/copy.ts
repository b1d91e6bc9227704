/** 2. A managed disk of the snapshot, in the donor's zone; the snapshot is no longer needed then. */
import type { Task } from 'durable-functions';

import { COPY_DISK_PURPOSE_TAG } from '../../../../shared/domain/live-leftovers.js';
import { definedOnly } from '../../../../shared/domain/optional.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { StepFailure } from '../../step-failure.js';
import { EXPECTED, LIVE_POLL } from '../../timing.js';
import { pollUntil } from '../../waits.js';
import { setStatus } from '../run.js';
import type { DonorDisks } from './freeze.js';
import type { LiveScope } from './scope.js';

/** Makes the copy disk of the snapshot, waits until it exists, then asks for the snapshot's deletion. */
export function* copySnapshotToDisk(
  scope: LiveScope,
  disks: DonorDisks,
  snapshot: { readonly id: string },
): Generator<Task, string, unknown> {
  const { run, input, made, group } = scope;
  const { context } = run;
  setStatus(run, 'copying-disk');
  const copyWhere = { ...group, name: input.copyDiskName };
  made.copy = true;
  yield* call(
    context,
    activities.requestCopyDisk,
    {
      ...copyWhere,
      location: disks.donor.location,
      ...definedOnly({ zone: disks.donor.zone }),
      sourceSnapshotId: snapshot.id,
      tags: { ...scope.tags, [COPY_DISK_PURPOSE_TAG.key]: COPY_DISK_PURPOSE_TAG.value },
      newName: true,
      fence: run.fence,
    },
    { step: 'copying-disk' },
  );
  const copy = yield* pollUntil(context, {
    step: 'copying-disk',
    ...EXPECTED.copyDisk,
    timeoutSeconds: LIVE_POLL.copyDisk.timeout,
    read: () => call(context, activities.readCopyDisk, copyWhere, { step: 'copying-disk' }),
    done: (view) => {
      if (view.provisioningState === 'Failed') {
        throw StepFailure.terminal('copying-disk', 'DiskFailed', `disk ${input.copyDiskName} failed`);
      }
      return view.exists && view.provisioningState === 'Succeeded';
    },
    describe: (view) =>
      `disk ${input.copyDiskName} ${view.exists ? (view.provisioningState ?? 'unknown') : 'not yet visible'}`,
  });
  if (copy.id === undefined) {
    throw StepFailure.terminal('copying-disk', 'DiskWithoutId', `disk ${input.copyDiskName} has no id`);
  }
  const copyId = copy.id;
  made.copyId = copyId;
  yield* call(
    context,
    activities.requestSnapshotDeletion,
    { ...group, name: input.snapshotName },
    { step: 'copying-disk' },
  );
  made.snapshotDeletionAsked = true;
  return copyId;
}
