/**
 * What every step of a live capture shares: the run, its names, what it made so far (what cleaning up
 * has to undo), and the refs and tags derived from the plan. Building the scope yields nothing, so it
 * does not change the activity calls a replay sees.
 */
import type { Task } from 'durable-functions';

import {
  type TemporaryIdentifiers,
  temporaryIdentifiersFor,
} from '../../../../shared/domain/live-capture.js';
import { LIVE_POD_GRACE_SECONDS } from '../../../../shared/domain/live-leftovers.js';
import { SNAPSHOT_TAG_KEYS } from '../../../../shared/domain/ownership.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { StepFailure, type StepName } from '../../step-failure.js';
import type { RefreshRun } from '../run.js';
import type { LiveCaptureInput } from './names.js';

/** What the run made so far: what cleaning up has to undo. */
export interface Made {
  snapshot: boolean;
  /** Its deletion was asked as soon as the copy existed: cleaning up only waits until it is gone. */
  snapshotDeletionAsked?: boolean;
  copy: boolean;
  attach: boolean;
  freezePod: boolean;
  /** Drain-and-stop's copy-scrub: the pod that installs the copy guard (no freeze there). */
  guardPod: boolean;
  scrubPod: boolean;
  copyId?: string;
}

export function nothingMade(): Made {
  return {
    snapshot: false,
    copy: false,
    attach: false,
    freezePod: false,
    guardPod: false,
    scrubPod: false,
  };
}

export interface LiveScope {
  readonly run: RefreshRun;
  readonly input: LiveCaptureInput;
  readonly made: Made;
  /** The donor instance. */
  readonly instance: {
    readonly cluster: string;
    readonly scaleSet: RefreshRun['plan']['scaleSet'];
    readonly instanceId: string;
  };
  /** The scale set's resource group, where the snapshot and the copy live. */
  readonly group: {
    readonly cluster: string;
    readonly subscriptionId: string;
    readonly resourceGroup: string;
  };
  /** Which run and which pool (lease): the reaper deletes the snapshot of a run that is gone. */
  readonly tags: Readonly<Record<string, string>>;
  /** The root filesystem's partition on the OS disk (and so on the copy). */
  readonly rootPartition: number;
  /** The identifiers the copy guard and the scrub give the copy's filesystems while it is attached. */
  readonly temporary: TemporaryIdentifiers;
}

export function liveScopeOf(run: RefreshRun, input: LiveCaptureInput, made: Made): LiveScope {
  const { cluster, plan } = run;
  return {
    run,
    input,
    made,
    instance: { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId },
    group: {
      cluster,
      subscriptionId: plan.scaleSet.subscriptionId,
      resourceGroup: plan.scaleSet.resourceGroup,
    },
    tags: {
      [SNAPSHOT_TAG_KEYS.sourceNode]: run.donor.node,
      [SNAPSHOT_TAG_KEYS.runId]: run.runId,
      [SNAPSHOT_TAG_KEYS.lease]: run.fence.name,
    },
    rootPartition: plan.settings.liveRootPartition ?? 1,
    temporary: temporaryIdentifiersFor(`${run.runId}\u0000${input.copyDiskName}`),
  };
}

export interface ReadySince {
  readonly exists: boolean;
  readonly readySince?: string;
}

/** The node turned Ready again (or is not Ready) since `before`: its host rebooted or is down. */
export function rebooted(before: ReadySince, now: ReadySince): boolean {
  return before.exists && now.exists && now.readySince !== before.readySince;
}

/**
 * A reboot while the copy was attached: the donor may have mounted the copy as its root, and the copy
 * may then hold the donor's live state instead of the scrubbed one. Nothing is built from it.
 */
export function rebootedWithCopy(
  run: RefreshRun,
  step: StepName,
  before: ReadySince,
  now: ReadySince,
): StepFailure {
  const node = run.donor.node;
  return StepFailure.terminal(
    step,
    'DonorRebootedWithCopy',
    `node ${node} ${now.readySince === undefined ? 'is not Ready' : `turned Ready again (${now.readySince})`} since ${before.readySince ?? 'the attach'} while the copy of its OS disk was attached: it rebooted, and a reboot may mount the copy as its root; the copy was detached and deleted, nothing was built`,
    `check on the node that / is its OS disk (findmnt / shows no device at a data disk LUN), then run again`,
  );
}

export function donorGone(run: RefreshRun, step: StepName): StepFailure {
  return StepFailure.terminal(
    step,
    'DonorDeleted',
    `instance ${run.donor.instanceId} of scale set ${run.plan.scaleSet.name} was deleted during the capture ` +
      `(scaled in by cluster-autoscaler or an operator?); nothing was captured`,
    'run again, or name another node (--node)',
  );
}

/**
 * Starts one of the run's privileged pods on the donor (freeze, guard, scrub): the prep image, the host's
 * mount namespace, the run's fence, and a grace period long enough for its trap.
 */
export function startLivePodOnDonor(
  scope: LiveScope,
  pod: {
    readonly name: string;
    readonly script: string;
    readonly role: 'freeze' | 'guard' | 'scrub';
    readonly step: StepName;
  },
): Generator<Task, void, unknown> {
  const { run } = scope;
  const settings = run.plan.settings;
  return call(
    run.context,
    activities.startLivePod,
    {
      cluster: run.cluster,
      node: run.donor.node,
      namespace: settings.prepNamespace,
      podName: pod.name,
      image: settings.prepImage,
      script: pod.script,
      role: pod.role,
      fence: run.fence,
      gracePeriodSeconds: LIVE_POD_GRACE_SECONDS,
    },
    { step: pod.step },
  );
}
