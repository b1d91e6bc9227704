/** Deleting live capture's copy disk: after the image version copied it, and on every failure path. */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/**
 * Asks for the copy disk's deletion (a no-op for ARM when it never existed). No cancel interrupts it. Not
 * waited for, as the snapshot's (snapshot.ts): it shows `Deleting` until gone, nothing depends on it, and
 * one that failed after ARM accepted it is found, tagged, by the next leftovers' read and the reaper.
 */
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
  noteGivenBack(context, `copy disk ${diskName} (deletion accepted)`);
}
