/**
 * Live capture phase of a pool refresh (capture mode `live`, shared/domain/live-capture.ts): the donor is
 * never cordoned, drained or stopped. Freeze its root filesystem and snapshot the running OS disk (the
 * freeze lasts until the snapshot is requested, bounded by the pod's hold and the host's guard), make a
 * managed disk of the snapshot, attach it to the donor, let a scrub pod de-identify the mounted copy,
 * detach it. Output: the scrubbed disk, which the image phase builds the version from and then deletes.
 * Every step is idempotent and a failure anywhere thaws, detaches and deletes what the run made before
 * it is thrown: the donor carries nothing of the run afterwards.
 */
import type { Task } from 'durable-functions';

import type { PoolPlan } from '../../../shared/application/pool-plan.js';
import { fnv1a32Hex } from '../../../shared/domain/gallery-naming.js';
import {
  buildFreezeScript,
  buildScrubScript,
  freeLun,
  temporaryIdentifiersFor,
} from '../../../shared/domain/live-capture.js';
import { COPY_DISK_PURPOSE_TAG, LIVE_POD_GRACE_SECONDS } from '../../../shared/domain/live-leftovers.js';
import { SNAPSHOT_TAG_KEYS } from '../../../shared/domain/ownership.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import { fromNextInterval, LIVE_POLL } from '../timing.js';
import { pollUntil, sleepUnlessCancelled } from '../waits.js';
import { deleteCopyDisk } from './copy-disk.js';
import type { ImageSource } from './image.phase.js';
import { pullPrepImage } from './prep-image-pull.js';
import type { RefreshRun } from './run.js';
import { isoNow, pullPodNameFor, setStatus } from './run.js';
import { awaitSnapshot, deleteSnapshot } from './snapshot.js';

/** What live capture hands the image phase: the scrubbed copy disk, never the raw snapshot. */
export interface CaptureOutput {
  /** What the image version is built from. */
  readonly source: ImageSource;
  /** The donor VM's unique id, for the version's tags. */
  readonly vmId?: string;
  /** Always 0: the donor is never cordoned. */
  readonly donorOutOfServiceSeconds: number;
}

/** The names a live capture uses, derived from the plan and the version (stable across replays). */
export interface LiveCaptureInput {
  readonly versionName: string;
  readonly snapshotName: string;
  readonly copyDiskName: string;
  /** The one-shot pod that pulls the prep image before the freeze pod starts. */
  readonly pullPodName: string;
  readonly freezePodName: string;
  readonly scrubPodName: string;
  /** The host's thaw timer (systemd unit) of this run's freeze. */
  readonly freezeUnit: string;
  /** The host's copy guard (systemd unit) and its script on the host's tmpfs. */
  readonly copyGuardUnit: string;
  readonly copyGuardScript: string;
  /** Where the scrub mounts the copy on the donor (a tmpfs: nothing stays after a reboot). */
  readonly mountPoint: string;
}

export function liveCaptureNamesFor(
  plan: PoolPlan,
  versionName: string,
  snapshotName: string,
): LiveCaptureInput {
  const hash = fnv1a32Hex(`${plan.scaleSet.id.toLowerCase()}\u0000${versionName}`);
  const version = versionName.replaceAll('.', '-');
  const disk = `vmssp-copy-${plan.scaleSet.name}-${version}`.replaceAll(/[^A-Za-z0-9_.-]/g, '-').slice(0, 80);
  return {
    versionName,
    snapshotName,
    copyDiskName: disk,
    pullPodName: pullPodNameFor(plan, versionName),
    freezePodName: `vmssp-freeze-${version}-${hash}`.toLowerCase().slice(0, 63),
    scrubPodName: `vmssp-scrub-${version}-${hash}`.toLowerCase().slice(0, 63),
    freezeUnit: `vmssp-thaw-${hash}`,
    copyGuardUnit: `vmssp-copy-guard-${hash}`,
    copyGuardScript: `/run/vmss-prototype/copy-guard-${hash}.sh`,
    mountPoint: `/run/vmss-prototype/copy-${hash}`,
  };
}

/** Seconds the host's systemd waits after the hold before it thaws a freeze nobody ended. */
const GUARD_MARGIN_SECONDS = 30;

/** How long the copy guard stays on the donor at most (it is harmless but for a duplicate root). */
const COPY_GUARD_SECONDS = 60 * 60;

/** What the run made so far: what cleaning up has to undo. */
interface Made {
  snapshot: boolean;
  /** Its deletion was asked as soon as the copy existed: cleaning up only waits until it is gone. */
  snapshotDeletionAsked?: boolean;
  copy: boolean;
  attach: boolean;
  freezePod: boolean;
  scrubPod: boolean;
  copyId?: string;
}

export function* liveCapturePhase(
  run: RefreshRun,
  input: LiveCaptureInput,
): Generator<Task, CaptureOutput, unknown> {
  const made: Made = { snapshot: false, copy: false, attach: false, freezePod: false, scrubPod: false };
  let captured: CaptureOutput | undefined;
  let captureError: unknown;
  try {
    captured = yield* captureLive(run, input, made);
  } catch (error) {
    captureError = error;
  }
  // From here on the run cleans up what it made: no cancel interrupts that.
  const failures = yield* shielded(run.context, cleanUp(run, input, made, captureError === undefined));
  if (captureError !== undefined || captured === undefined) {
    const capture = asStepFailure('capturing', captureError);
    throw failures.length === 0
      ? capture
      : capture.withFollowUp(`cleaning up also failed: ${failures.map((f) => f.message).join('; ')}`);
  }
  if (failures.length > 0) {
    throw new StepFailure({
      step: 'detaching-copy',
      kind: failures[0]?.kind ?? 'terminal',
      code: failures[0]?.code ?? 'CleanUpFailed',
      detail: failures.map((failure) => failure.message).join('; '),
    });
  }
  return captured;
}

function* captureLive(
  run: RefreshRun,
  input: LiveCaptureInput,
  made: Made,
): Generator<Task, CaptureOutput, unknown> {
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;
  const instance = { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId };
  const group = {
    cluster,
    subscriptionId: plan.scaleSet.subscriptionId,
    resourceGroup: plan.scaleSet.resourceGroup,
  };
  // Which run and which pool (lease): the reaper deletes the snapshot of a run that is gone.
  const tags = {
    [SNAPSHOT_TAG_KEYS.sourceNode]: node,
    [SNAPSHOT_TAG_KEYS.runId]: run.runId,
    [SNAPSHOT_TAG_KEYS.lease]: run.fence.name,
  };

  // The freeze pod then runs within seconds: the wait for it to run, polled every 2 s so that the
  // snapshot is asked for well inside the freeze, is not also a registry download.
  yield* pullPrepImage(run, input.pullPodName);
  setStatus(run, 'freezing-filesystem');
  const donor = yield* call(context, activities.readDonorDisks, instance, {
    step: 'freezing-filesystem',
  });
  if (!donor.exists) throw donorGone(run, 'freezing-filesystem');
  if (donor.osDiskId === undefined) {
    throw StepFailure.terminal(
      'freezing-filesystem',
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
      'set capture.mode to drain-and-stop for this pool',
    );
  }

  // 1. Freeze, snapshot, thaw (the freeze pod also installs the copy guard for the LUN chosen).
  const holdSeconds = settings.liveMaxFreezeSeconds ?? 10;
  const rootPartition = settings.liveRootPartition ?? 1;
  const temporary = temporaryIdentifiersFor(`${run.runId}\u0000${input.copyDiskName}`);
  const freezePod = { cluster, namespace: settings.prepNamespace, name: input.freezePodName };
  made.freezePod = true;
  yield* call(
    context,
    activities.startLivePod,
    {
      cluster,
      node,
      namespace: settings.prepNamespace,
      podName: input.freezePodName,
      image: settings.prepImage,
      script: buildFreezeScript({
        unit: input.freezeUnit,
        holdSeconds,
        guardSeconds: holdSeconds + GUARD_MARGIN_SECONDS,
        copyGuard: {
          unit: input.copyGuardUnit,
          scriptPath: input.copyGuardScript,
          lun: plannedLun,
          rootPartition,
          temporary,
          maxSeconds: COPY_GUARD_SECONDS,
          mountPoint: input.mountPoint,
        },
      }),
      role: 'freeze',
      fence: run.fence,
      gracePeriodSeconds: LIVE_POD_GRACE_SECONDS,
    },
    { step: 'freezing-filesystem' },
  );
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
      ...group,
      name: input.snapshotName,
      location: donor.location,
      sourceDiskId: donor.osDiskId,
      tags,
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
  const snapshot = yield* awaitSnapshot(run, {
    snapshotName: input.snapshotName,
    requestedAtMs: snapshotRequestedAtMs,
    step: 'snapshotting',
  });

  // 2. A managed disk of the snapshot, in the donor's zone; the snapshot is no longer needed then.
  setStatus(run, 'copying-disk');
  const copyWhere = { ...group, name: input.copyDiskName };
  made.copy = true;
  yield* call(
    context,
    activities.requestCopyDisk,
    {
      ...copyWhere,
      location: donor.location,
      ...(donor.zone === undefined ? {} : { zone: donor.zone }),
      sourceSnapshotId: snapshot.id,
      tags: { ...tags, [COPY_DISK_PURPOSE_TAG.key]: COPY_DISK_PURPOSE_TAG.value },
      newName: true,
    },
    { step: 'copying-disk' },
  );
  const copy = yield* pollUntil(context, {
    step: 'copying-disk',
    ...fromNextInterval(LIVE_POLL.copyDisk),
    timeoutSeconds: LIVE_POLL.copyDisk.timeout,
    read: () => call(context, activities.readCopyDisk, copyWhere, { step: 'copying-disk' }),
    done: (view) => {
      if (view.provisioningState === 'Failed') {
        throw StepFailure.terminal('copying-disk', 'DiskFailed', `disk ${input.copyDiskName} failed`);
      }
      return view.exists && view.provisioningState === 'Succeeded';
    },
    describe: (view) =>
      `disk ${input.copyDiskName} ${view.exists ? (view.provisioningState ?? 'unknown') : 'not yet visible'}`,
  });
  if (copy.id === undefined) {
    throw StepFailure.terminal('copying-disk', 'DiskWithoutId', `disk ${input.copyDiskName} has no id`);
  }
  const copyId = copy.id;
  made.copyId = copyId;
  yield* call(
    context,
    activities.requestSnapshotDeletion,
    { ...group, name: input.snapshotName },
    { step: 'copying-disk' },
  );
  made.snapshotDeletionAsked = true;

  // 3. Attach, scrub, detach: the window in which the donor carries a second copy of its root.
  setStatus(run, 'attaching-copy');
  const readySince = yield* call(
    context,
    activities.readNodeReadySince,
    { cluster, node },
    { step: 'attaching-copy' },
  );
  made.attach = true;
  yield* call(
    context,
    activities.requestCopyAttach,
    { ...instance, diskId: copyId, lun: plannedLun, fence: run.fence },
    {
      step: 'attaching-copy',
      advice: 'set capture.mode to drain-and-stop if the VM size has no data disk left',
    },
  );
  const attached = yield* pollUntil(context, {
    step: 'attaching-copy',
    ...fromNextInterval(LIVE_POLL.dataDisk),
    timeoutSeconds: LIVE_POLL.dataDisk.timeout,
    read: () => call(context, activities.readDonorDisks, instance, { step: 'attaching-copy' }),
    done: (view) => {
      if (!view.exists) throw donorGone(run, 'attaching-copy');
      if (view.provisioningState === 'Updating') return false;
      const listed = view.dataDisks.some((disk) => sameId(disk.diskId, copyId) && !disk.detaching);
      if (listed && view.provisioningState !== 'Failed') return true;
      // Settled without the disk, or Failed (ARM may leave a failed disk listed): the attach failed.
      throw StepFailure.terminal(
        'attaching-copy',
        'AttachFailed',
        `attaching disk ${input.copyDiskName} to instance ${run.donor.instanceId} failed (the instance is ${view.provisioningState} without it); the copy and the snapshot were deleted, nothing was built`,
        `see the activity log of the instance; if its VM size allows no more data disks, set capture.mode to drain-and-stop`,
      );
    },
    describe: (view) => `instance ${run.donor.instanceId} is ${view.provisioningState}`,
  });
  // The LUN the copy really has (a resumed run may find it attached by an earlier attempt).
  const lun = attached.dataDisks.find((disk) => sameId(disk.diskId, copyId))?.lun ?? plannedLun;

  setStatus(run, 'scrubbing-copy', `LUN ${lun}`);
  const ancestry = `${isoNow(run)} built image ${input.versionName} of ${cluster}/${run.input.pool} from node ${node} (run ${run.runId}, live capture)`;
  const scrubPod = { cluster, namespace: settings.prepNamespace, name: input.scrubPodName };
  made.scrubPod = true;
  yield* call(
    context,
    activities.startLivePod,
    {
      cluster,
      node,
      namespace: settings.prepNamespace,
      podName: input.scrubPodName,
      image: settings.prepImage,
      script: buildScrubScript({
        ancestry,
        flavour: run.donor.flavour,
        lun,
        rootPartition,
        mountPoint: input.mountPoint,
        temporary,
      }),
      role: 'scrub',
      fence: run.fence,
      gracePeriodSeconds: LIVE_POD_GRACE_SECONDS,
    },
    { step: 'scrubbing-copy' },
  );
  // The node is read with the pod: a donor that reboots meanwhile leaves a pod that may never end
  // (its container died with the host), and its copy must not be used.
  yield* pollUntil(context, {
    step: 'scrubbing-copy',
    intervalSeconds: LIVE_POLL.scrub.interval,
    timeoutSeconds: LIVE_POLL.scrub.timeout,
    read: function* () {
      const phase = yield* call(context, activities.readPrepPod, scrubPod, {
        step: 'scrubbing-copy',
      });
      const ready = yield* call(
        context,
        activities.readNodeReadySince,
        { cluster, node },
        { step: 'scrubbing-copy' },
      );
      return { phase, ready };
    },
    done: ({ phase, ready }) => {
      if (rebooted(readySince, ready)) throw rebootedWithCopy(run, 'scrubbing-copy', readySince, ready);
      if (phase === 'Failed' || phase === 'Absent') {
        throw StepFailure.terminal(
          'scrubbing-copy',
          'ScrubFailed',
          `the scrub pod ${settings.prepNamespace}/${input.scrubPodName} on node ${node} ${phase === 'Failed' ? 'failed' : 'disappeared'}; the copy was detached and deleted, nothing was built`,
          `see its logs (kubectl -n ${settings.prepNamespace} logs ${input.scrubPodName}); check capture.live.rootPartition, or set capture.mode to drain-and-stop`,
        );
      }
      return phase === 'Succeeded';
    },
    describe: ({ phase }) => `scrub pod ${input.scrubPodName} is ${phase}`,
  });
  yield* call(context, activities.deletePrepPod, scrubPod, { step: 'scrubbing-copy' });
  made.scrubPod = false;

  setStatus(run, 'detaching-copy');
  yield* detachCopy(run, copyId);
  made.attach = false;
  const after = yield* call(
    context,
    activities.readNodeReadySince,
    { cluster, node },
    { step: 'detaching-copy' },
  );
  if (rebooted(readySince, after)) throw rebootedWithCopy(run, 'detaching-copy', readySince, after);
  return {
    source: { kind: 'disk', id: copyId, name: input.copyDiskName },
    ...(donor.vmId === undefined ? {} : { vmId: donor.vmId }),
    donorOutOfServiceSeconds: 0,
  };
}

/** Detaches the copy from the donor and waits until it is gone from the instance's data disks. */
function* detachCopy(run: RefreshRun, diskId: string): Generator<Task, void, unknown> {
  const { context, cluster, plan } = run;
  const instance = { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId };
  const step = 'detaching-copy';
  yield* call(context, activities.requestCopyDetach, { ...instance, diskId }, { step });
  yield* pollUntil(context, {
    step,
    ...fromNextInterval(LIVE_POLL.dataDisk),
    timeoutSeconds: LIVE_POLL.dataDisk.timeout,
    read: () => call(context, activities.readDonorDisks, instance, { step }),
    done: (view) => !view.exists || !view.dataDisks.some((disk) => sameId(disk.diskId, diskId)),
    describe: (view) => `instance ${run.donor.instanceId} is ${view.provisioningState}`,
    advice:
      `detach it by hand (az vmss disk detach -g ${plan.scaleSet.resourceGroup} --vmss-name ${plan.scaleSet.name} ` +
      `--instance-id ${run.donor.instanceId} --lun <lun>) before the node reboots`,
  });
}

/**
 * Undoes what the run made, in the order that keeps the donor safe: thaw (the freeze pod), stop the
 * scrub (its trap unmounts), detach, then delete the copy and the snapshot. On success only the snapshot
 * is left to confirm gone (the copy goes after the image version). Failures are collected, not thrown.
 */
function* cleanUp(
  run: RefreshRun,
  input: LiveCaptureInput,
  made: Made,
  succeeded: boolean,
): Generator<Task, StepFailure[], unknown> {
  const { context, cluster, plan } = run;
  const failures: StepFailure[] = [];
  const attempt = function* (step: string, work: () => Generator<Task, void, unknown>) {
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

interface ReadySince {
  readonly exists: boolean;
  readonly readySince?: string;
}

/** The node turned Ready again (or is not Ready) since `before`: its host rebooted or is down. */
function rebooted(before: ReadySince, now: ReadySince): boolean {
  return before.exists && now.exists && now.readySince !== before.readySince;
}

/**
 * A reboot while the copy was attached: the donor may have mounted the copy as its root, and the copy
 * may then hold the donor's live state instead of the scrubbed one. Nothing is built from it.
 */
function rebootedWithCopy(run: RefreshRun, step: string, before: ReadySince, now: ReadySince): StepFailure {
  const node = run.donor.node;
  return StepFailure.terminal(
    step,
    'DonorRebootedWithCopy',
    `node ${node} ${now.readySince === undefined ? 'is not Ready' : `turned Ready again (${now.readySince})`} since ${before.readySince ?? 'the attach'} while the copy of its OS disk was attached: it rebooted, and a reboot may mount the copy as its root; the copy was detached and deleted, nothing was built`,
    `check on the node that / is its OS disk (findmnt / shows no device at a data disk LUN), then run again`,
  );
}

function donorGone(run: RefreshRun, step: string): StepFailure {
  return StepFailure.terminal(
    step,
    'DonorDeleted',
    `instance ${run.donor.instanceId} of scale set ${run.plan.scaleSet.name} was deleted during the capture ` +
      `(scaled in by cluster-autoscaler or an operator?); nothing was captured`,
    'run again, or name another node (--node)',
  );
}

function asStepFailure(step: string, error: unknown): StepFailure {
  if (error instanceof StepFailure) return error;
  return new StepFailure({
    step,
    kind: 'terminal',
    code: 'UnexpectedError',
    detail: error instanceof Error ? error.message : String(error),
  });
}

function sameId(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase();
}
