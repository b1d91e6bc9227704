/**
 * Capture phase of a pool refresh, until the snapshot is taken: pull the prep image on the donor while it
 * still serves (drain-and-stop), hold the donor (prior state, annotations, cordon), drain it, prepare its
 * disk and power it off — from the prep pod (drain-and-stop) or by Azure Run Command then the API
 * (run-command.ts) —, and snapshot the OS disk. An Azure snapshot is a point-in-time copy usable once the
 * create call returns, so the donor is given back (giveBackCaptured, in parallel with the image phase)
 * without waiting for the snapshot to complete, unless its disk type needs the background copy or
 * `capture.waitForSnapshotCompletion` says always (domain/snapshot-readiness.ts). A failure before that
 * is thrown only after the donor is back and the snapshot is gone.
 */
import type { Task } from 'durable-functions';

import type { NodePriorState } from '../../../shared/application/donor-node.js';
import { scrubbedDiskOf } from '../../../shared/application/pool-plan.js';
import { SNAPSHOT_TAG_KEYS } from '../../../shared/domain/ownership.js';
import { buildPowerOffScript, buildPrepScript } from '../../../shared/domain/prep-script.js';
import { mustWaitForSnapshotCompletion } from '../../../shared/domain/snapshot-readiness.js';
import { activities, type ActivityOutput } from '../../activities.js';
import { call } from '../call.js';
import { StepFailure } from '../step-failure.js';
import { POLL, RESTORE_WAIT_WORTH_TELLING_MS } from '../timing.js';
import { pollUntil } from '../waits.js';
import { giveBackDonor } from './give-back.js';
import { awaitDonorPowerOff } from './power-off-wait.js';
import { pullPrepImage } from './prep-image-pull.js';
import type { RefreshRun } from './run.js';
import { isoNow, setStatus } from './run.js';
import { prepareByRunCommand } from './run-command.js';
import { awaitSnapshot, deleteSnapshot, snapshotWhere } from './snapshot.js';

/** A read of the donor instance (activity readInstance). */
type InstanceView = ActivityOutput<'readInstance'>;

export interface CaptureInput {
  readonly versionName: string;
  readonly snapshotName: string;
  readonly prepPodName: string;
  /** The one-shot pod that pulls the prep image before the cordon (drain-and-stop). */
  readonly pullPodName: string;
}

/** The snapshot taken, and what giving the donor back needs. */
export interface TakenSnapshot {
  readonly snapshotId: string;
  readonly snapshotName: string;
  /** When the snapshot was asked for (orchestration time, ms): its expected completion counts from here. */
  readonly requestedAtMs: number;
  /** True when the run already saw it Succeeded (the donor waited for it). */
  readonly completed: boolean;
  /** The donor VM's unique id, for the version's tags. */
  readonly vmId?: string;
  /** The donor's ARM resource id as seen stopped: its start needs no read. */
  readonly donorResourceId?: string;
  readonly prior: NodePriorState;
  readonly cordonedAtMs: number;
}

export interface GivenBack {
  /** Seconds between cordon and the donor given back. */
  readonly donorOutOfServiceSeconds: number;
}

export function* capturePhase(run: RefreshRun, input: CaptureInput): Generator<Task, TakenSnapshot, unknown> {
  const { context, cluster } = run;
  const node = run.donor.node;
  // The prep image is pulled while the node still serves: the donor is out of service for the
  // preparation itself, not for a registry download (kamino's prep pod spent 43 of its 49 s pulling).
  if (run.plan.capture?.mode !== 'run-command') yield* pullPrepImage(run, input.pullPodName);
  // The node's state before we touch it, recorded in history: a replay or a resumed run restores
  // exactly this, never "uncordoned" for a node an administrator had cordoned.
  const prior = yield* call(
    context,
    activities.readNodeState,
    { cluster, node },
    { step: 'recording-node-state' },
  );

  let snapshotRequested = false;
  let cordonedAt: number | undefined;
  let captured: Omit<TakenSnapshot, 'prior' | 'cordonedAtMs'> | undefined;
  let captureError: unknown;
  try {
    setStatus(run, 'cordoning');
    yield* call(
      context,
      activities.protectNode,
      { cluster, node, prior, fence: run.fence },
      { step: 'cordoning' },
    );
    cordonedAt = context.df.currentUtcDateTime.getTime();
    captured = yield* captureDisk(run, input, () => {
      snapshotRequested = true;
    });
  } catch (error) {
    captureError = error;
  }
  // From here on the run gives the node back and finishes what it started: no cancel interrupts that
  // (giveBackDonor and deleteSnapshot are shielded).
  // A run whose lease was taken over touches nothing more: the run that took it gives the node back.
  if (captureError instanceof StepFailure && captureError.code === 'LeaseLost') throw captureError;
  if (captureError === undefined && captured !== undefined && cordonedAt !== undefined) {
    return { ...captured, prior, cordonedAtMs: cordonedAt };
  }

  const giveBack = yield* giveBackDonor(run, { prior, ...prepPodOf(run, input.prepPodName) });
  if (snapshotRequested) yield* deleteSnapshot(run, input.snapshotName);
  const failure = combineFailures(captureError, giveBack.failures);
  throw giveBack.failures.length === 0 && giveBack.waitedMs >= RESTORE_WAIT_WORTH_TELLING_MS
    ? failure.withFollowUp(
        `node ${node} was given back at ${giveBack.restoredAt.toISOString()}, once the cluster's API server answered again`,
      )
    : failure;
}

/**
 * Gives the donor back once its snapshot is taken (the VM was just seen stopped: it is started without
 * reading it again). Throws when the node could not be given back; the snapshot is the image phase's.
 */
export function* giveBackCaptured(
  run: RefreshRun,
  taken: TakenSnapshot,
  prepPodName: string,
): Generator<Task, GivenBack, unknown> {
  const giveBack = yield* giveBackDonor(run, {
    prior: taken.prior,
    knownStopped: taken.donorResourceId === undefined ? {} : { resourceId: taken.donorResourceId },
    ...prepPodOf(run, prepPodName),
  });
  if (giveBack.failures.length > 0) throw combineFailures(undefined, giveBack.failures);
  return {
    donorOutOfServiceSeconds: Math.round((giveBack.restoredAt.getTime() - taken.cordonedAtMs) / 1000),
  };
}

/** Run Command leaves no pod behind (and its mode grants no pod permissions). */
function prepPodOf(run: RefreshRun, prepPodName: string): { prepPodName?: string } {
  return run.plan.capture?.mode === 'run-command' ? {} : { prepPodName };
}

/** Drains the donor, prepares and powers off its disk, and snapshots it. */
function* captureDisk(
  run: RefreshRun,
  input: CaptureInput,
  onSnapshotRequested: () => void,
): Generator<Task, Omit<TakenSnapshot, 'prior' | 'cordonedAtMs'>, unknown> {
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;

  setStatus(run, 'draining');
  yield* pollUntil(context, {
    step: 'draining',
    intervalSeconds: POLL.drain.interval,
    timeoutSeconds: settings.drainTimeoutSeconds,
    advice:
      'the node was given back; relax the PodDisruptionBudget or wait until it allows a disruption, raise ' +
      'capture.drainTimeout, or refresh from another node (--node)',
    read: () =>
      call(
        context,
        activities.drainNodeStep,
        {
          cluster,
          node,
          gracePeriodSeconds: settings.drainGracePeriodSeconds,
          deleteEmptyDirData: settings.deleteEmptyDirData,
          force: settings.forceUnreplicated,
          fence: run.fence,
        },
        { step: 'draining' },
      ),
    done: (result) => {
      if (result.blockers.length > 0) {
        throw StepFailure.terminal(
          'draining',
          'DrainBlocked',
          `node ${node} cannot be drained: ` + result.blockers.map((b) => `${b.pod} ${b.reason}`).join('; '),
        );
      }
      return result.done;
    },
    describe: (result) =>
      result.pending.length === 0
        ? 'no pods left'
        : `${result.pending.length} pods left: ` +
          result.pending
            .slice(0, 5)
            .map((p) => `${p.pod} (${p.state}${p.message === undefined ? '' : `: ${p.message}`})`)
            .join(', '),
  });

  setStatus(run, 'preparing-disk');
  // Recorded before the VM is stopped: a donor whose Node object is deleted meanwhile is still found,
  // started and given back (domain/stop-record.ts); give-back removes the record. In Azure, on the scale
  // set's tags; on a CAPZ pool on the pool lease, since CAPZ owns its scale set and the run never writes it,
  // and Cluster API neither starts nor replaces a MachinePool machine whose VM is stopped (docs/capz.md).
  const recorded = yield* call(
    context,
    activities.recordInstanceStop,
    {
      cluster,
      scaleSet: plan.scaleSet,
      instanceId: run.donor.instanceId,
      runId: run.runId,
      fence: run.fence,
      ...(plan.capz !== undefined
        ? { place: 'pool-lease' as const }
        : run.scaleSetTags === undefined
          ? {}
          : { known: { ...run.scaleSetTags, tags: { ...run.scaleSetTags.tags } } }),
    },
    { step: 'preparing-disk' },
  );
  if (recorded !== undefined) run.stopRecord = recorded;
  const ancestry = `${isoNow(run)} built image ${input.versionName} of ${cluster}/${run.input.pool} from node ${node} (run ${run.runId})`;
  const stopped =
    plan.capture?.mode === 'run-command'
      ? yield* prepareByRunCommand(run, { ancestry, flavour: run.donor.flavour })
      : yield* prepareByPrepPod(run, { ancestry, prepPodName: input.prepPodName });
  if (stopped.osDiskId === undefined) {
    throw StepFailure.terminal(
      'snapshotting',
      'NoManagedOsDisk',
      `instance ${run.donor.instanceId} has no managed OS disk to snapshot`,
    );
  }

  setStatus(run, 'snapshotting');
  onSnapshotRequested();
  const where = snapshotWhere(run, input.snapshotName);
  const requestedAtMs = context.df.currentUtcDateTime.getTime();
  const requested = yield* call(
    context,
    activities.requestSnapshot,
    {
      ...where,
      location: stopped.location,
      sourceDiskId: stopped.osDiskId,
      // Which run and which pool (lease): the reaper deletes the snapshot of a run that is gone.
      tags: {
        [SNAPSHOT_TAG_KEYS.sourceNode]: node,
        [SNAPSHOT_TAG_KEYS.runId]: run.runId,
        [SNAPSHOT_TAG_KEYS.lease]: run.fence.name,
      },
      // Fenced: a run that lost its lease (a runner whose clock is ahead took it) makes no snapshot.
      fence: run.fence,
      // Named after the version the run chose: nothing of that name exists to be read first.
      newName: true,
    },
    {
      step: 'snapshotting',
      advice:
        `the node was started and given back; check the snapshot quota and permissions in resource group ` +
        `${plan.scaleSet.resourceGroup} (az snapshot list -g ${plan.scaleSet.resourceGroup}), then run again`,
    },
  );
  const vmId = stopped.vmId === undefined ? {} : { vmId: stopped.vmId };
  const resourceId = stopped.resourceId === undefined ? {} : { donorResourceId: stopped.resourceId };
  const taken = { snapshotName: input.snapshotName, requestedAtMs, ...vmId, ...resourceId };
  if (!mustWaitForSnapshotCompletion(settings.waitForSnapshotCompletion, stopped.osDiskType)) {
    // Taken: the copy is point-in-time from the create call on; the image phase waits for Succeeded.
    return { ...taken, snapshotId: requested.id, completed: false };
  }
  const snapshot = yield* awaitSnapshot(run, { ...taken, step: 'snapshotting' });
  return { ...taken, snapshotId: snapshot.id, completed: true };
}

/**
 * Mode drain-and-stop: a one-shot privileged pod runs the prep script in the host's namespaces and
 * powers the host off; returns once the instance is stopped.
 */
function* prepareByPrepPod(
  run: RefreshRun,
  prep: { readonly ancestry: string; readonly prepPodName: string },
): Generator<Task, InstanceView, unknown> {
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;
  if (settings.prepImage === undefined) {
    throw StepFailure.terminal(
      'preparing-disk',
      'PrepImageMissing',
      'capture.prepImage is not set (required with capture.mode drain-and-stop)',
    );
  }
  yield* call(
    context,
    activities.startDiskPrep,
    {
      cluster,
      node,
      namespace: settings.prepNamespace,
      podName: prep.prepPodName,
      image: settings.prepImage,
      // A flavour scrubbed on a copy only: the donor's disk is flushed and powered off as it is.
      script:
        scrubbedDiskOf(plan) === 'copy'
          ? buildPowerOffScript()
          : buildPrepScript({ ancestry: prep.ancestry, flavour: run.donor.flavour }),
      fence: run.fence,
    },
    { step: 'preparing-disk' },
  );

  setStatus(run, 'waiting-for-power-off');
  return yield* awaitDonorPowerOff(run, {
    prepPodName: prep.prepPodName,
    createdAtMs: context.df.currentUtcDateTime.getTime(),
  });
}

/** One error for the run: the capture failure first (it is the cause), then anything give-back could not do. */
function combineFailures(captureError: unknown, giveBackFailures: readonly StepFailure[]): StepFailure {
  const restore =
    giveBackFailures.length === 0
      ? undefined
      : `restoring the node also failed: ${giveBackFailures.map((failure) => failure.message).join('; ')}`;
  const capture =
    captureError === undefined
      ? undefined
      : captureError instanceof StepFailure
        ? captureError
        : new StepFailure({
            step: 'capturing',
            kind: 'terminal',
            code: 'UnexpectedError',
            detail: captureError instanceof Error ? captureError.message : 'unexpected error',
          });
  if (capture !== undefined) return restore === undefined ? capture : capture.withFollowUp(restore);
  const [first] = giveBackFailures;
  return new StepFailure({
    step: 'restoring-node',
    kind: first?.kind ?? 'terminal',
    code: first?.code ?? 'RestoreFailed',
    // A failure of give-back's own calls names the step already; a wait's (starting-instance) is kept.
    detail:
      giveBackFailures
        .map((failure) => (failure.step === 'restoring-node' ? failure.reason : failure.message))
        .join('; ') || 'the node was not given back',
  });
}
