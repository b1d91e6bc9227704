/** Deleting live capture's copy disk: after the image version copied it, and on every failure path. */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { LIVE_POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/** Deletes the copy disk and waits until it is gone; a no-op when it never existed. */
export function* deleteCopyDisk(run: RefreshRun, diskName: string): Generator<Task, void, unknown> {
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
    intervalSeconds: LIVE_POLL.diskDeletion.interval,
    // Accepted this second, done no sooner than the next: the first read waits one interval.
    expectedSeconds: LIVE_POLL.diskDeletion.interval,
    timeoutSeconds: LIVE_POLL.diskDeletion.timeout,
    read: () => call(context, activities.readCopyDisk, where, { step }),
    done: (view) => !view.exists,
    describe: (view) => `disk ${diskName} ${view.provisioningState ?? 'deleting'}`,
  });
}
