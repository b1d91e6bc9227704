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
import { noteGivenBack } from '../../cancel.js';
import { asStepFailure, type StepFailure, type StepName } from '../../step-failure.js';
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
  if (made.freezePod) {
    yield* attempt('freezing-filesystem', function* () {
      yield* call(
        context,
        activities.deleteLivePod,
        { cluster, namespace, name: input.freezePodName, gracePeriodSeconds: LIVE_POD_GRACE_SECONDS },
        { step: 'freezing-filesystem' },
      );
      noteGivenBack(context, `freeze pod ${input.freezePodName} (deleted: the root filesystem thawed)`);
    });
  }
  if (made.guardPod === true) {
    yield* attempt('guarding-copy', function* () {
      yield* call(
        context,
        activities.deleteLivePod,
        { cluster, namespace, name: input.guardPodName, gracePeriodSeconds: LIVE_POD_GRACE_SECONDS },
        { step: 'guarding-copy' },
      );
      noteGivenBack(context, `guard pod ${input.guardPodName} (deleted)`);
    });
  }
  if (made.scrubPod) {
    yield* attempt('scrubbing-copy', function* () {
      yield* call(
        context,
        activities.deleteLivePod,
        { cluster, namespace, name: input.scrubPodName, gracePeriodSeconds: LIVE_POD_GRACE_SECONDS },
        { step: 'scrubbing-copy' },
      );
      noteGivenBack(context, `scrub pod ${input.scrubPodName} (deleted)`);
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
