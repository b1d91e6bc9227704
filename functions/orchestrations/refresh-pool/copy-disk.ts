/** Deleting live capture's copy disk: after the image version copied it, and on every failure path. */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { EXPECTED, LIVE_POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/** Deletes the copy disk and waits until it is gone; a no-op when it never existed. No cancel interrupts it. */
export function deleteCopyDisk(run: RefreshRun, diskName: string): Generator<Task, void, unknown> {
  return shielded(run.context, deletion(run, diskName));
}

function* deletion(run: RefreshRun, diskName: string): Generator<Task, void, unknown> {
  const { context, plan } = run;
  const where = {
    cluster: run.cluster,
    subscriptionId: plan.scaleSet.subscriptionId,
    resourceGroup: plan.scaleSet.resourceGroup,
    name: diskName,
  };
  const step = 'deleting-copy-disk';
  setStatus(run, step);
  yield* call(context, activities.requestCopyDiskDeletion, where, { step });
  yield* pollUntil(context, {
    step,
    ...EXPECTED.diskDeletion,
    timeoutSeconds: LIVE_POLL.diskDeletion.timeout,
    read: () => call(context, activities.readCopyDisk, where, { step }),
    done: (view) => !view.exists,
    describe: (view) => `disk ${diskName} ${view.provisioningState ?? 'deleting'}`,
  });
  noteGivenBack(context, `copy disk ${diskName} (deleted)`);
}
