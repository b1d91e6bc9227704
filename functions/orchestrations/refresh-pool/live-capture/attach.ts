/** 3a. Attach the copy to the donor: from here the donor carries a second copy of its root. */
import type { Task } from 'durable-functions';

import { sameResourceId } from '../../../../shared/domain/resource-id.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { StepFailure } from '../../step-failure.js';
import { EXPECTED, LIVE_POLL } from '../../timing.js';
import { pollUntil } from '../../waits.js';
import { setStatus } from '../run.js';
import { donorGone, type LiveScope, type ReadySince } from './scope.js';

export interface AttachedCopy {
  /** When the node was last Ready before the attach: a change later means it rebooted with the copy. */
  readonly readySince: ReadySince;
  /** The LUN the copy really has. */
  readonly lun: number;
}

/** Attaches the copy at the planned LUN and waits until the instance lists it. */
export function* attachCopy(
  scope: LiveScope,
  copyId: string,
  plannedLun: number,
): Generator<Task, AttachedCopy, unknown> {
  const { run, input, made, instance } = scope;
  const { context, cluster } = run;
  const node = run.donor.node;
  setStatus(run, 'attaching-copy');
  const readySince = yield* call(
    context,
    activities.readNodeReadySince,
    { cluster, node },
    { step: 'attaching-copy' },
  );
  made.attach = true;
  yield* call(
    context,
    activities.requestCopyAttach,
    { ...instance, diskId: copyId, lun: plannedLun, fence: run.fence },
    {
      step: 'attaching-copy',
      advice: 'set capture.mode to drain-and-stop if the VM size has no data disk left',
    },
  );
  const attached = yield* pollUntil(context, {
    step: 'attaching-copy',
    ...EXPECTED.dataDisk,
    timeoutSeconds: LIVE_POLL.dataDisk.timeout,
    read: () => call(context, activities.readDonorDisks, instance, { step: 'attaching-copy' }),
    done: (view) => {
      if (!view.exists) throw donorGone(run, 'attaching-copy');
      if (view.provisioningState === 'Updating') return false;
      const listed = view.dataDisks.some((disk) => sameResourceId(disk.diskId, copyId) && !disk.detaching);
      if (listed && view.provisioningState !== 'Failed') return true;
      // Settled without the disk, or Failed (ARM may leave a failed disk listed): the attach failed.
      throw StepFailure.terminal(
        'attaching-copy',
        'AttachFailed',
        `attaching disk ${input.copyDiskName} to instance ${run.donor.instanceId} failed (the instance is ${view.provisioningState} without it); the copy and the snapshot were deleted, nothing was built`,
        `see the activity log of the instance; if its VM size allows no more data disks, set capture.mode to drain-and-stop`,
      );
    },
    describe: (view) => `instance ${run.donor.instanceId} is ${view.provisioningState}`,
  });
  // The LUN the copy really has (a resumed run may find it attached by an earlier attempt).
  const lun = attached.dataDisks.find((disk) => sameResourceId(disk.diskId, copyId))?.lun ?? plannedLun;
  return { readySince, lun };
}
