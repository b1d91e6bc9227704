/**
 * Live capture's first steps: read the donor's disks (and choose the LUN the copy will take), then
 * freeze its root filesystem, ask for the snapshot of the running OS disk and thaw at once.
 */
import type { Task } from 'durable-functions';

import { buildFreezeScript, freeLun } from '../../../../shared/domain/live-capture.js';
import { LIVE_POD_GRACE_SECONDS } from '../../../../shared/domain/live-leftovers.js';
import { activities, type ActivityOutput } from '../../../activities.js';
import { call } from '../../call.js';
import { shielded } from '../../cancel.js';
import { StepFailure } from '../../step-failure.js';
import { LIVE_POLL } from '../../timing.js';
import { pollUntil, sleepUnlessCancelled } from '../../waits.js';
import { pullPrepImage } from '../prep-image-pull.js';
import { setStatus } from '../run.js';
import { awaitSnapshot } from '../snapshot.js';
import { donorGone, type LiveScope, startLivePodOnDonor } from './scope.js';

/** Seconds the host's systemd waits after the hold before it thaws a freeze nobody ended. */
const GUARD_MARGIN_SECONDS = 30;

/** How long the copy guard stays on the donor at most (it is harmless but for a duplicate root). */
export const COPY_GUARD_SECONDS = 60 * 60;

/** The donor's disks as read before the freeze, with the LUN chosen for the copy. */
export interface DonorDisks {
  readonly donor: ActivityOutput<'readDonorDisks'>;
  readonly osDiskId: string;
  readonly plannedLun: number;
}

/**
 * Pulls the prep image (so that the wait for the freeze pod is not also a registry download) and reads
 * the donor's disks: it must still exist, have a managed OS disk, and a free LUN for the copy.
 */
export function* readDonorForFreeze(scope: LiveScope): Generator<Task, DonorDisks, unknown> {
  const { run, input } = scope;
  // The freeze pod then runs within seconds: the wait for it to run, polled every 2 s so that the
  // snapshot is asked for well inside the freeze, is not also a registry download.
  yield* pullPrepImage(run, input.pullPodName);
  setStatus(run, 'freezing-filesystem');
  return yield* readDonorDisksForCopy(scope, 'freezing-filesystem');
}

/** Reads the donor's disks: it must still exist, have a managed OS disk, and a free LUN for the copy. */
export function* readDonorDisksForCopy(
  scope: LiveScope,
  step: 'freezing-filesystem' | 'copying-disk',
): Generator<Task, DonorDisks, unknown> {
  const { run, instance } = scope;
  const donor = yield* call(run.context, activities.readDonorDisks, instance, { step });
  if (!donor.exists) throw donorGone(run, step);
  if (donor.osDiskId === undefined) {
    throw StepFailure.terminal(
      step,
      'NoManagedOsDisk',
      `instance ${run.donor.instanceId} has no managed OS disk to snapshot`,
    );
  }
  const plannedLun = freeLun(donor.dataDisks);
  if (plannedLun === undefined) {
    throw StepFailure.terminal(
      'attaching-copy',
      'NoFreeLun',
      `instance ${run.donor.instanceId} has no free LUN for the copy of its OS disk`,
      step === 'freezing-filesystem'
        ? 'set capture.mode to drain-and-stop for this pool'
        : // Drain-and-stop of a flavour scrubbed on a copy only: the copy is attached to the donor too.
          'free a LUN on the donor (detach a data disk), or refresh from another node (--node)',
    );
  }
  return { donor, osDiskId: donor.osDiskId, plannedLun };
}

/**
 * 1. Freeze, snapshot, thaw (the freeze pod also installs the copy guard for the LUN chosen). Returns
 * the snapshot once it is usable.
 */
export function* freezeAndSnapshot(
  scope: LiveScope,
  disks: DonorDisks,
): Generator<Task, { readonly id: string }, unknown> {
  const { run, input, made } = scope;
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;
  const holdSeconds = settings.liveMaxFreezeSeconds ?? 10;
  const freezePod = { cluster, namespace: settings.prepNamespace, name: input.freezePodName };
  made.freezePod = true;
  yield* startLivePodOnDonor(scope, {
    name: input.freezePodName,
    script: buildFreezeScript({
      unit: input.freezeUnit,
      holdSeconds,
      guardSeconds: holdSeconds + GUARD_MARGIN_SECONDS,
      copyGuard: {
        unit: input.copyGuardUnit,
        scriptPath: input.copyGuardScript,
        lun: disks.plannedLun,
        rootPartition: scope.rootPartition,
        temporary: scope.temporary,
        maxSeconds: COPY_GUARD_SECONDS,
        mountPoint: input.mountPoint,
      },
    }),
    role: 'freeze',
    step: 'freezing-filesystem',
  });
  const { phase: freezePhase } = yield* pollUntil(context, {
    step: 'freezing-filesystem',
    intervalSeconds: LIVE_POLL.freezePod.interval,
    timeoutSeconds: LIVE_POLL.freezePod.timeout,
    read: function* () {
      return {
        phase: yield* call(context, activities.readPrepPod, freezePod, {
          step: 'freezing-filesystem',
        }),
      };
    },
    done: ({ phase }) => {
      if (phase === 'Failed' || phase === 'Absent') {
        throw StepFailure.terminal(
          'freezing-filesystem',
          'FreezeFailed',
          `the freeze pod ${settings.prepNamespace}/${input.freezePodName} on node ${node} ${phase === 'Failed' ? 'failed' : 'disappeared'}; nothing was captured`,
          `see its logs (kubectl -n ${settings.prepNamespace} logs ${input.freezePodName}): the host needs fsfreeze and systemd-run; or set capture.mode to drain-and-stop`,
        );
      }
      // Succeeded: its hold ended before it was seen running (a resumed run): the snapshot is then
      // crash-consistent, which the scrub's first mount repairs (journal replay).
      return phase === 'Running' || phase === 'Succeeded';
    },
    describe: ({ phase }) => `freeze pod ${input.freezePodName} is ${phase}`,
    advice: `check that node ${node} can pull capture.prepImage`,
  });
  if (freezePhase === 'Running') {
    // Running means the container started, not that its script reached fsfreeze (after `sync`): give
    // it that time (LIVE_POLL.freezeSettleSeconds). Should the host be slower still, the snapshot is
    // crash-consistent, which the scrub's first mount repairs (journal replay).
    const settleAt = context.df.currentUtcDateTime.getTime() + LIVE_POLL.freezeSettleSeconds * 1000;
    yield* sleepUnlessCancelled(context, 'freezing-filesystem', new Date(settleAt));
  }
  made.snapshot = true;
  setStatus(run, 'snapshotting', freezePhase === 'Running' ? 'root filesystem frozen' : 'freeze missed');
  // A failed request leaves the freeze pod to the clean-up, which deletes it first.
  const snapshotRequestedAtMs = context.df.currentUtcDateTime.getTime();
  yield* call(
    context,
    activities.requestSnapshot,
    {
      ...scope.group,
      name: input.snapshotName,
      location: disks.donor.location,
      sourceDiskId: disks.osDiskId,
      tags: scope.tags,
      fence: run.fence,
      // Named after the version the run chose: nothing of that name exists to be read first.
      newName: true,
    },
    {
      step: 'snapshotting',
      advice: `check the snapshot quota and permissions in resource group ${plan.scaleSet.resourceGroup}, then run again`,
    },
  );
  // The snapshot is a point-in-time copy from its request on: thaw at once, whatever was asked since.
  // Should the deletion fail (API server down), the freeze still ends with the pod's hold; the clean-up
  // deletes it later.
  try {
    yield* shielded(
      context,
      call(
        context,
        activities.deleteLivePod,
        { ...freezePod, gracePeriodSeconds: LIVE_POD_GRACE_SECONDS },
        { step: 'freezing-filesystem' },
      ),
    );
    made.freezePod = false;
  } catch {
    made.freezePod = true;
  }
  // Read first when a snapshot is expected to be done (EXPECTED.snapshot), as in drain-and-stop.
  return yield* awaitSnapshot(run, {
    snapshotName: input.snapshotName,
    requestedAtMs: snapshotRequestedAtMs,
    step: 'snapshotting',
  });
}
