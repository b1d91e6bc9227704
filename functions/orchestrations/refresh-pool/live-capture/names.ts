/**
 * What live capture (and drain-and-stop's copy-scrub) is called with and hands on: the names it uses and
 * the scrubbed disk it made.
 */
import type { PoolPlan } from '../../../../shared/application/pool-plan.js';
import { fnv1a32Hex } from '../../../../shared/domain/gallery-naming.js';
import type { ImageSource } from '../image.phase.js';
import { pullPodNameFor } from '../run.js';

/** What live capture hands the image phase: the scrubbed copy disk, never the raw snapshot. */
export interface CaptureOutput {
  /** What the image version is built from. */
  readonly source: ImageSource;
  /** The donor VM's unique id, for the version's tags. */
  readonly vmId?: string;
  /** 0 for live capture (the donor is never cordoned); drain-and-stop's copy-scrub: cordon → given back. */
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
  /** Drain-and-stop's copy-scrub: the one-shot pod that installs the copy guard on the donor. */
  readonly guardPodName: string;
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
    guardPodName: `vmssp-guard-${version}-${hash}`.toLowerCase().slice(0, 63),
    scrubPodName: `vmssp-scrub-${version}-${hash}`.toLowerCase().slice(0, 63),
    freezeUnit: `vmssp-thaw-${hash}`,
    copyGuardUnit: `vmssp-copy-guard-${hash}`,
    copyGuardScript: `/run/vmss-prototype/copy-guard-${hash}.sh`,
    mountPoint: `/run/vmss-prototype/copy-${hash}`,
  };
}
