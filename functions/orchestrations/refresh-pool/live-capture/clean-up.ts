/**
 * Live capture's clean-up: undoes what the run made, in the order that keeps the donor safe: thaw (the
 * freeze pod), stop the scrub (its trap unmounts), detach, then delete the copy and the snapshot. On
 * success only the snapshot is left to confirm gone (the copy goes after the image version). Failures
 * are collected, not thrown.
 */
import type { Task } from 'durable-functions';

import { LIVE_POD_GRACE_SECONDS } from '../../../../shared/domain/live-leftovers.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { noteGivenBack, shielded } from '../../cancel.js';
import { asStepFailure, StepFailure, type StepName } from '../../step-failure.js';
import { deleteCopyDisk } from '../copy-disk.js';
import type { RefreshRun } from '../run.js';
import { setStatus } from '../run.js';
import { deleteSnapshot } from '../snapshot.js';
import { detachCopy } from './detach.js';
import type { LiveCaptureInput } from './names.js';
import type { Made } from './scope.js';

export function* cleanUpLiveCapture(
  run: RefreshRun,
  input: LiveCaptureInput,
  made: Made,
  succeeded: boolean,
): Generator<Task, StepFailure[], unknown> {
  const { context, cluster, plan } = run;
  const failures: StepFailure[] = [];
  const attempt = function* (step: StepName, work: () => Generator<Task, void, unknown>) {
    try {
      yield* work();
    } catch (error) {
      failures.push(asStepFailure(step, error));
    }
  };
  const namespace = plan.settings.prepNamespace;
  const group = {
    cluster,
    subscriptionId: plan.scaleSet.subscriptionId,
    resourceGroup: plan.scaleSet.resourceGroup,
  };
  // In order: thaw first (the freeze pod's trap), then the guard's one-shot pod, then stop the scrub.
  const pods: readonly (readonly [boolean, StepName, string, string, string])[] = [
    [
      made.freezePod,
      'freezing-filesystem',
      'freeze',
      input.freezePodName,
      'deleted: the root filesystem thawed',
    ],
    [made.guardPod, 'guarding-copy', 'guard', input.guardPodName, 'deleted'],
    [made.scrubPod, 'scrubbing-copy', 'scrub', input.scrubPodName, 'deleted'],
  ];
  for (const [madePod, step, role, name, note] of pods) {
    if (!madePod) continue;
    yield* attempt(step, function* () {
      yield* call(
        context,
        activities.deleteLivePod,
        { cluster, namespace, name, gracePeriodSeconds: LIVE_POD_GRACE_SECONDS },
        { step },
      );
      noteGivenBack(context, `${role} pod ${name} (${note})`);
    });
  }
  if (!succeeded && made.attach) {
    yield* attempt('detaching-copy', function* () {
      setStatus(run, 'detaching-copy');
      const copy = yield* call(
        context,
        activities.readCopyDisk,
        { ...group, name: input.copyDiskName },
        {
          step: 'detaching-copy',
        },
      );
      if (copy.id !== undefined) yield* detachCopy(run, copy.id);
      noteGivenBack(context, `copy disk ${input.copyDiskName} (detached from node ${run.donor.node})`);
    });
  }
  if (!succeeded && made.copy) {
    yield* attempt('deleting-copy-disk', () => deleteCopyDisk(run, input.copyDiskName));
  }
  if (made.snapshot) {
    const asked = made.snapshotDeletionAsked === true;
    yield* attempt('deleting-snapshot', () => deleteSnapshot(run, input.snapshotName, { asked }));
  }
  return failures;
}

/**
 * Runs a capture that makes what `made` records, then always its clean-up (no cancel interrupts that):
 * returns the capture's output, or throws its failure (followed by the clean-up's), or the clean-up's.
 */
export function* withLiveCleanUp<T>(
  run: RefreshRun,
  input: LiveCaptureInput,
  made: Made,
  capture: Generator<Task, T, unknown>,
): Generator<Task, T, unknown> {
  let captured: { readonly value: T } | undefined;
  let captureError: unknown;
  try {
    captured = { value: yield* capture };
  } catch (error) {
    captureError = error;
  }
  const failures = yield* shielded(run.context, cleanUpLiveCapture(run, input, made, captured !== undefined));
  if (captured === undefined) {
    const failure = asStepFailure('capturing', captureError);
    throw failures.length === 0
      ? failure
      : failure.withFollowUp(`cleaning up also failed: ${failures.map((f) => f.message).join('; ')}`);
  }
  if (failures.length > 0) {
    throw new StepFailure({
      step: 'detaching-copy',
      kind: failures[0]?.kind ?? 'terminal',
      code: failures[0]?.code ?? 'CleanUpFailed',
      detail: failures.map((failure) => failure.message).join('; '),
    });
  }
  return captured.value;
}
