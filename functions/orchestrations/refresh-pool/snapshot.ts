/**
 * The run's OS disk snapshot: waiting until it Succeeded (the image version is built only from a
 * snapshot that did), and deleting it after the image version copied it, and on every failure path.
 */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import { EXPECTED, POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/** Where the run's snapshot lives (activity input). */
export function snapshotWhere(run: RefreshRun, snapshotName: string) {
  return {
    cluster: run.cluster,
    subscriptionId: run.plan.scaleSet.subscriptionId,
    resourceGroup: run.plan.scaleSet.resourceGroup,
    name: snapshotName,
  };
}

/**
 * Waits until the snapshot Succeeded, reading it first when it is expected to be done (EXPECTED.snapshot
 * from its request). A snapshot that ends Failed (or vanished) fails the step: nothing is built from it.
 */
export function* awaitSnapshot(
  run: RefreshRun,
  snapshot: {
    readonly snapshotName: string;
    readonly requestedAtMs: number;
    /** `snapshotting` while the donor waits for it; `awaiting-snapshot` once the donor is back. */
    readonly step: 'snapshotting' | 'awaiting-snapshot';
  },
): Generator<Task, { id: string }, unknown> {
  const { context } = run;
  const where = snapshotWhere(run, snapshot.snapshotName);
  const step = snapshot.step;
  setStatus(run, step);
  const view = yield* pollUntil(context, {
    step,
    ...EXPECTED.snapshot,
    sinceMs: snapshot.requestedAtMs,
    timeoutSeconds: POLL.snapshot.timeout,
    read: () => call(context, activities.readSnapshot, where, { step }),
    done: (read) => {
      if (read.provisioningState === 'Failed' || !read.exists) {
        throw StepFailure.terminal(
          step,
          'SnapshotFailed',
          `snapshot ${snapshot.snapshotName} ${read.exists ? 'failed' : 'disappeared'}; no image version was built from it`,
          'the node was given back; run again (a new snapshot is taken), and check the activity log of the resource group if it fails again',
        );
      }
      return read.provisioningState === 'Succeeded';
    },
    describe: (read) => `snapshot ${snapshot.snapshotName} ${read.provisioningState ?? 'unknown'}`,
  });
  if (view.id === undefined) {
    throw StepFailure.terminal(step, 'SnapshotWithoutId', `snapshot ${snapshot.snapshotName} has no id`);
  }
  return { id: view.id };
}

/**
 * Asks for the snapshot's deletion (a no-op for ARM when it never existed). `asked`: ARM accepted the
 * run's request for it already: nothing is asked again. No cancel interrupts it.
 *
 * The deletion is not waited for: once ARM accepted it the snapshot shows `Deleting` until it is gone, and
 * nothing of the run depends on it going (the image version was built from it already). A run that waited
 * spent an ARM read or two on every refresh for nothing. A deletion that failed after it was accepted
 * leaves the snapshot as it was, tagged with its run: the next run's leftovers' read and the reaper delete
 * it again (domain/reaper.ts keeps one still `Deleting`).
 */
export function deleteSnapshot(
  run: RefreshRun,
  snapshotName: string,
  options: { readonly asked?: boolean } = {},
): Generator<Task, void, unknown> {
  return shielded(run.context, deletion(run, snapshotName, options));
}

function* deletion(
  run: RefreshRun,
  snapshotName: string,
  { asked = false }: { readonly asked?: boolean },
): Generator<Task, void, unknown> {
  const { context } = run;
  const where = snapshotWhere(run, snapshotName);
  const step = 'deleting-snapshot';
  setStatus(run, step);
  // ARM accepted that deletion already (live capture asks as soon as its copy disk is made).
  if (!asked) yield* call(context, activities.requestSnapshotDeletion, where, { step });
  noteGivenBack(context, `snapshot ${snapshotName} (deletion accepted)`);
}
