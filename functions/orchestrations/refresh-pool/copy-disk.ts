/** Deleting live capture's copy disk: after the image version copied it, and on every failure path. */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { EXPECTED, LIVE_POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/**
 * Deletes the copy disk and waits until it is gone; a no-op when it never existed. No cancel interrupts
 * it. `confirm: false` (the version was built from it, and the run goes on for minutes): the deletion is
 * asked for and not waited for; one that ARM fails leaves a disk tagged with the run, which the pool's next
 * run finds among its holdings and gives back.
 */
export function deleteCopyDisk(
  run: RefreshRun,
  diskName: string,
  options: { readonly confirm?: boolean } = {},
): Generator<Task, void, unknown> {
  return shielded(run.context, deletion(run, diskName, options.confirm ?? true));
}

function* deletion(run: RefreshRun, diskName: string, confirm: boolean): Generator<Task, void, unknown> {
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
  if (!confirm) {
    noteGivenBack(context, `copy disk ${diskName} (deletion asked)`);
    return;
  }
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
