/** Deleting the run's snapshot: after the image version copied it, and on every failure path. */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/** Deletes the snapshot and waits until it is gone; a no-op when it never existed. */
export function* deleteSnapshot(run: RefreshRun, snapshotName: string): Generator<Task, void, unknown> {
  const { context, plan } = run;
  const where = {
    cluster: run.cluster,
    subscriptionId: plan.scaleSet.subscriptionId,
    resourceGroup: plan.scaleSet.resourceGroup,
    name: snapshotName,
  };
  const step = 'deleting-snapshot';
  setStatus(run, step);
  yield* call(context, activities.requestSnapshotDeletion, where, { step });
  yield* pollUntil(context, {
    step,
    intervalSeconds: POLL.snapshot.interval,
    timeoutSeconds: POLL.snapshot.timeout,
    read: () => call(context, activities.readSnapshot, where, { step }),
    done: (view) => !view.exists,
    describe: (view) => `snapshot ${snapshotName} ${view.provisioningState ?? 'deleting'}`,
  });
}
