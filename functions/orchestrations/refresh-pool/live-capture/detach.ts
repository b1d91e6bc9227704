/** 3c. Detach the scrubbed copy from the donor, and check that the donor did not reboot meanwhile. */
import type { Task } from 'durable-functions';

import { sameResourceId } from '../../../../shared/domain/resource-id.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { EXPECTED, LIVE_POLL } from '../../timing.js';
import { pollUntil } from '../../waits.js';
import type { RefreshRun } from '../run.js';
import { setStatus } from '../run.js';
import type { SeenDisks } from './attach.js';
import { type LiveScope, type ReadySince, rebooted, rebootedWithCopy } from './scope.js';

/**
 * Detaches the copy after the scrub; a reboot since the attach makes the copy unusable. `seen`: the
 * donor's disks as the attach's last read listed them: the detach is asked for without a read first.
 */
export function* detachScrubbedCopy(
  scope: LiveScope,
  copyId: string,
  readySince: ReadySince,
  seen?: SeenDisks,
): Generator<Task, void, unknown> {
  const { run, made } = scope;
  setStatus(run, 'detaching-copy');
  yield* detachCopy(run, copyId, seen);
  made.attach = false;
  const after = yield* call(
    run.context,
    activities.readNodeReadySince,
    { cluster: run.cluster, node: run.donor.node },
    { step: 'detaching-copy' },
  );
  if (rebooted(readySince, after)) throw rebootedWithCopy(run, 'detaching-copy', readySince, after);
}

/**
 * Detaches the copy from the donor and waits until it is gone from the instance's data disks. `seen`: the
 * donor's disks as the run last read them (asked without a read first; judged again on refusal).
 */
export function* detachCopy(
  run: RefreshRun,
  diskId: string,
  seen?: SeenDisks,
): Generator<Task, void, unknown> {
  const { context, cluster, plan } = run;
  const instance = { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId };
  const step = 'detaching-copy';
  yield* call(
    context,
    activities.requestCopyDetach,
    { ...instance, diskId, ...(seen === undefined ? {} : { seen }) },
    { step },
  );
  yield* pollUntil(context, {
    step,
    ...EXPECTED.dataDisk,
    timeoutSeconds: LIVE_POLL.dataDisk.timeout,
    read: () => call(context, activities.readDonorDisks, instance, { step }),
    done: (view) => !view.exists || !view.dataDisks.some((disk) => sameResourceId(disk.diskId, diskId)),
    describe: (view) => `instance ${run.donor.instanceId} is ${view.provisioningState}`,
    advice:
      `detach it by hand (az vmss disk detach -g ${plan.scaleSet.resourceGroup} --vmss-name ${plan.scaleSet.name} ` +
      `--instance-id ${run.donor.instanceId} --lun <lun>) before the node reboots`,
  });
}
