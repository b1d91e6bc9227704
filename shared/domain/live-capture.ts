/**
 * Live capture (capture mode `live`): the scripts the two short-lived privileged pods run on the donor,
 * and the pure choices around them. The donor keeps serving throughout:
 *
 * 1. A freeze pod makes the root filesystem consistent for the snapshot: it schedules a thaw with the
 *    host's systemd first (the hard bound: whatever happens to the pod, the kubelet or the run, the
 *    filesystem is thawed `guardSeconds` later), then `fsfreeze --freeze /`, and holds the freeze for at
 *    most `holdSeconds`. The orchestrator requests the snapshot as soon as it sees the pod running and then
 *    deletes the pod with a grace period: the pod's TERM trap thaws at once. Writes on the donor block
 *    only while frozen (seconds); reads, the pods and the node carry on.
 * 2. The snapshot becomes a managed disk that is attached to the donor as a data disk.
 * 3. A scrub pod mounts the copy's root partition and applies the flavour's de-identification under the
 *    mount point (prep-script.ts): the same plan as drain-and-stop, on the copy instead of the donor.
 *
 * The copy carries the root's filesystem UUID, label and partition UUID: a donor rebooting while it is
 * attached could mount the copy as its root. Two defences cover the whole time it is attached:
 * - the copy guard (installed by the freeze pod, before the attach): at an orderly shutdown it gives a
 *   duplicate of the root at the copy's LUN temporary identifiers;
 * - while the copy is mounted (where the guard's tune2fs cannot change it), the scrub has already given it
 *   temporary identifiers — after one mount and unmount that replays the journal of a crash-consistent
 *   copy — and it puts the root's identifiers back as its last act (clones boot by them).
 * What is left is a crash (no orderly shutdown) while the copy is attached; and the orchestrator does not
 * build an image from a copy whose donor rebooted while it was attached (the copy may have been its root).
 */
import type { BootstrapFlavour } from './bootstrap-flavour.js';
import { fnv1a32Hex } from './gallery-naming.js';
import { deIdentificationCommands, quoteForShell } from './prep-script.js';

/** Logical unit numbers Azure accepts for data disks. */
export const MAX_LUN = 63;

/** The lowest LUN no data disk of the instance uses; undefined when all are taken. */
export function freeLun(dataDisks: readonly { readonly lun: number }[]): number | undefined {
  const used = new Set(dataDisks.map((disk) => disk.lun));
  for (let lun = 0; lun <= MAX_LUN; lun++) if (!used.has(lun)) return lun;
  return undefined;
}

/** Where Azure's udev rules expose a SCSI data disk by LUN (and its partitions as `-part<N>`). */
export function dataDiskDevice(lun: number): string {
  if (!Number.isInteger(lun) || lun < 0 || lun > MAX_LUN) throw new Error(`LUN ${lun} is out of range`);
  return `/dev/disk/azure/scsi1/lun${lun}`;
}

/** A GUID-shaped identifier derived from `seed` (the same seed gives the same value: a retried scrub agrees). */
export function derivedGuid(seed: string): string {
  const hex = [0, 1, 2, 3].map((part) => fnv1a32Hex(`${part}\u0000${seed}`)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The temporary identifiers the copy carries while attached. */
export interface TemporaryIdentifiers {
  readonly filesystemUuid: string;
  readonly partitionUuid: string;
  readonly label: string;
}

export function temporaryIdentifiersFor(seed: string): TemporaryIdentifiers {
  return {
    filesystemUuid: derivedGuid(`filesystem:${seed}`),
    partitionUuid: derivedGuid(`partition:${seed}`),
    label: 'vmssp-copy',
  };
}

/**
 * The copy guard: a transient systemd service on the donor, started before the copy is attached, whose
 * ExecStop — run when the host shuts down (a reboot) — gives a disk at the copy's LUN that carries the
 * root filesystem's UUID temporary identifiers, so that the next boot cannot mount it as the root. It
 * acts only while the system is stopping and only on a duplicate of the root, so it is harmless whenever
 * else it stops; it ends by itself after `maxSeconds` (RuntimeMaxSec), or at that reboot. It needs a clean
 * copy (tune2fs refuses a filesystem whose journal needs recovery): the freeze provides one.
 */
export interface CopyGuardInput {
  readonly unit: string;
  /** The guard's script, on the host's tmpfs. */
  readonly scriptPath: string;
  readonly lun: number;
  readonly rootPartition: number;
  readonly temporary: TemporaryIdentifiers;
  readonly maxSeconds: number;
  /** Where the scrub mounts the copy (unmounted by the guard before it changes the identifiers). */
  readonly mountPoint: string;
}

export interface FreezeScriptInput {
  /** Unique per run and attempt: names the host's thaw timer. */
  readonly unit: string;
  /** The freeze ends by itself after this many seconds, whether or not the pod is deleted. */
  readonly holdSeconds: number;
  /** The host's systemd thaws after this many seconds even if the pod was killed (> holdSeconds). */
  readonly guardSeconds: number;
  /** Installed before the freeze: the copy does not exist yet, its LUN is chosen. */
  readonly copyGuard: CopyGuardInput;
}

const UNIT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The copy guard's script lines (see CopyGuardInput). */
function copyGuardLines(guard: CopyGuardInput): string[] {
  const disk = dataDiskDevice(guard.lun);
  const root = `${disk}-part${guard.rootPartition}`;
  const { filesystemUuid, partitionUuid, label } = guard.temporary;
  return [
    'STATE=$(systemctl is-system-running || true)',
    '[ "$STATE" = stopping ] || exit 0',
    `COPY=$(blkid -s UUID -o value ${root} || true)`,
    'ROOT=$(findmnt -no UUID /)',
    '[ "$COPY" = "$ROOT" ] || exit 0',
    // Identifiers change only unmounted and clean: the scrub may have it mounted, and a copy taken
    // unfrozen needs its journal replayed (by a mount) first.
    `umount ${guard.mountPoint} || true`,
    `mkdir -p ${guard.mountPoint}`,
    `mount -o nouuid ${root} ${guard.mountPoint} || mount ${root} ${guard.mountPoint} || true`,
    `umount ${guard.mountPoint} || true`,
    `tune2fs -U ${filesystemUuid} -L ${label} ${root} || xfs_admin -U ${filesystemUuid} -L ${label} ${root}`,
    `sfdisk --part-uuid ${disk} ${guard.rootPartition} ${partitionUuid}`,
  ];
}

/** The lines that write the copy guard's script to the host's tmpfs and start its unit. */
function copyGuardInstall(guard: CopyGuardInput): string[] {
  if (!UNIT_NAME.test(guard.unit))
    throw new Error(`building the copy guard: ${guard.unit} is not a unit name`);
  if (!/^\/run\/[a-z0-9/-]+$/.test(guard.mountPoint)) {
    throw new Error(`building the copy guard: mount point ${guard.mountPoint} is not under /run`);
  }
  if (!/^\/run\/vmss-prototype\/[a-z0-9.-]+$/.test(guard.scriptPath)) {
    throw new Error(`building the copy guard: ${guard.scriptPath} is not under /run/vmss-prototype`);
  }
  return [
    'mkdir -p /run/vmss-prototype',
    `truncate -s 0 ${guard.scriptPath}`,
    ...copyGuardLines(guard).map((line) => `echo ${quoteForShell(line)} >> ${guard.scriptPath}`),
    `systemd-run --quiet --unit=${guard.unit} --remain-after-exit -p RuntimeMaxSec=${guard.maxSeconds} -p "ExecStop=/bin/sh ${guard.scriptPath}" true`,
  ];
}

/**
 * The guard pod's script (drain-and-stop's copy-scrub, where no freeze pod runs): installs the copy guard
 * on the running donor before its copy is attached, then ends.
 */
export function buildCopyGuardScript(guard: CopyGuardInput): string {
  return ['set -eu', ...copyGuardInstall(guard)].join('\n');
}

/**
 * The freeze pod's script: install the copy guard, schedule the thaw, freeze. `sleep & wait`: a shell
 * runs a TERM trap only after the foreground command ends, but interrupts `wait` at once, so deleting the
 * pod thaws immediately.
 */
export function buildFreezeScript(input: FreezeScriptInput): string {
  for (const unit of [input.unit, input.copyGuard.unit]) {
    if (!UNIT_NAME.test(unit)) throw new Error(`building the freeze script: ${unit} is not a unit name`);
  }
  if (!(input.holdSeconds >= 1 && input.guardSeconds > input.holdSeconds)) {
    throw new Error('building the freeze script: the guard must outlast the hold');
  }
  const guard = input.copyGuard;
  const timer = `${input.unit}.timer`;
  return [
    'set -eu',
    ...copyGuardInstall(guard),
    `systemd-run --quiet --unit=${input.unit} --on-active=${input.guardSeconds} fsfreeze --unfreeze /`,
    `trap 'fsfreeze --unfreeze /; systemctl stop ${timer}; exit 0' TERM INT`,
    'sync',
    'fsfreeze --freeze /',
    `sleep ${input.holdSeconds} &`,
    'wait',
    'fsfreeze --unfreeze /',
    `systemctl stop ${timer}`,
  ].join('\n');
}

export interface ScrubScriptInput {
  /** One line appended to the copy's ancestry log. */
  readonly ancestry: string;
  readonly flavour: BootstrapFlavour;
  /** The LUN the copy is attached at. */
  readonly lun: number;
  /** The partition number of the root filesystem on the OS disk (1 on Ubuntu and Azure Linux images). */
  readonly rootPartition: number;
  /** An empty directory on a tmpfs of the host (`/run/…`), where the copy is mounted. */
  readonly mountPoint: string;
  readonly temporary: TemporaryIdentifiers;
}

/**
 * The scrub pod's script, run in the host's mount namespace. ext4 (`tune2fs`) and XFS (`xfs_admin`;
 * XFS refuses to mount a second filesystem with a mounted one's UUID without `nouuid`) are both handled.
 * `cmp` proves that what is mounted is the donor's root (its machine-id) before anything is removed.
 */
export function buildScrubScript(input: ScrubScriptInput): string {
  if (!/^\/run\/[a-z0-9/-]+$/.test(input.mountPoint)) {
    throw new Error(`building the scrub script: mount point ${input.mountPoint} is not under /run`);
  }
  if (!Number.isInteger(input.rootPartition) || input.rootPartition < 1 || input.rootPartition > 128) {
    throw new Error(`building the scrub script: root partition ${input.rootPartition} is out of range`);
  }
  const disk = dataDiskDevice(input.lun);
  const root = `${disk}-part${input.rootPartition}`;
  const mount = input.mountPoint;
  const { filesystemUuid, partitionUuid, label } = input.temporary;
  const mountCopy = `mount -o nouuid ${root} ${mount} || mount ${root} ${mount}`;
  const setIdentifiers = (uuid: string, name: string): string =>
    `tune2fs -U ${uuid} -L ${name} ${root} || xfs_admin -U ${uuid} -L ${name} ${root}`;
  return [
    'set -eu',
    `trap 'umount ${mount} || true' EXIT`,
    // Deleted (TERM): end, so that the EXIT trap unmounts the copy before it is detached.
    "trap 'exit 143' TERM INT",
    // The copy still carries the root's identifiers (a donor that rebooted since may have changed them).
    'HOST_UUID=$(findmnt -no UUID /)',
    `ROOT_UUID=$(blkid -s UUID -o value ${root})`,
    '[ "$ROOT_UUID" = "$HOST_UUID" ]',
    `ROOT_LABEL=$(blkid -s LABEL -o value ${root} || true)`,
    `ROOT_PARTUUID=$(blkid -s PARTUUID -o value ${root})`,
    `mkdir -p ${mount}`,
    // A crash-consistent copy needs its journal replayed before its identifiers can change.
    mountCopy,
    `umount ${mount}`,
    setIdentifiers(filesystemUuid, label),
    `sfdisk --part-uuid ${disk} ${input.rootPartition} ${partitionUuid}`,
    mountCopy,
    `cmp -s /etc/machine-id ${mount}/etc/machine-id`,
    ...deIdentificationCommands({ ancestry: input.ancestry, flavour: input.flavour }, mount),
    'sync',
    `umount ${mount}`,
    setIdentifiers('"$ROOT_UUID"', '"$ROOT_LABEL"'),
    `sfdisk --part-uuid ${disk} ${input.rootPartition} "$ROOT_PARTUUID"`,
  ].join('\n');
}
