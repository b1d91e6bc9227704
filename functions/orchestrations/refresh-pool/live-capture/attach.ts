/** 3a. Attach the copy to the donor: from here the donor carries a second copy of its root. */
import type { Task } from 'durable-functions';

import { sameResourceId } from '../../../../shared/domain/resource-id.js';
import type { ActivityOutput } from '../../../activities.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { StepFailure } from '../../step-failure.js';
import { EXPECTED, LIVE_POLL } from '../../timing.js';
import { pollUntil } from '../../waits.js';
import { setStatus } from '../run.js';
import { donorGone, type LiveScope, type ReadySince } from './scope.js';

type DonorDisksView = ActivityOutput<'readDonorDisks'>;

export interface AttachedCopy {
  /** When the node was last Ready before the attach: a change later means it rebooted with the copy. */
  readonly readySince: ReadySince;
  /** The LUN the copy really has. */
  readonly lun: number;
  /** The donor's disks as the read that saw the attach done listed them (the detach is judged on it). */
  readonly seen?: SeenDisks;
}

/** The donor's disks as a readDonorDisks saw them, for an attach or detach asked without a read first. */
export interface SeenDisks {
  resourceId: string;
  dataDisks: { lun: number; diskId?: string; detaching: boolean }[];
}

/** `seen` of a view that names its instance (a history recorded before views carried the id: none). */
export function seenOf(view: DonorDisksView): { seen?: SeenDisks } {
  return view.resourceId === undefined
    ? {}
    : {
        seen: {
          resourceId: view.resourceId,
          dataDisks: view.dataDisks.map((disk) => ({ ...disk })),
        },
      };
}

/**
 * Attaches the copy at the planned LUN and waits until the instance lists it. `donor`: the donor's disks as
 * the run read them when it chose the LUN: the attach is asked for without reading them again.
 */
export function* attachCopy(
  scope: LiveScope,
  copyId: string,
  plannedLun: number,
  donor?: DonorDisksView,
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
    {
      ...instance,
      diskId: copyId,
      lun: plannedLun,
      fence: run.fence,
      ...(donor === undefined ? {} : seenOf(donor)),
    },
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
  return { readySince, lun, ...seenOf(attached) };
}
