/**
 * Which way a pool's donor is captured: `drain-and-stop` (cordon, drain, prepare the disk, power off,
 * snapshot: the donor is out of service for minutes) or `live` (freeze the running root filesystem for
 * the snapshot, scrub a copy of the OS disk attached to the donor: the donor never stops serving). The
 * setting `capture.mode` is `auto` unless an operator chose: auto takes live capture only where it is
 * known to be safe, and drain-and-stop otherwise, with the reason. Pure: the plan supplies the facts.
 */
import type { BootstrapFlavour, NewNodeBootstrap } from './bootstrap-flavour.js';
import { identityPlan } from './bootstrap-flavour.js';

export const CAPTURE_MODES = ['drain-and-stop', 'live', 'run-command'] as const;
export type CaptureMode = (typeof CAPTURE_MODES)[number];

/**
 * What settings may say: a mode, or `auto` (the default). `run-command` (Azure Run Command prepares the
 * stopped-to-be disk, for clusters that forbid privileged pods) is never chosen by `auto`, only when set.
 */
export type CaptureModeSetting = CaptureMode | 'auto';

/** How the pool's bootstrap flavour is known, if it is. */
export type FlavourEvidence =
  | { readonly kind: 'configured'; readonly flavour: BootstrapFlavour }
  | { readonly kind: 'detected'; readonly flavour: BootstrapFlavour; readonly evidence: string }
  | { readonly kind: 'unknown'; readonly reason: string };

/** What the decision looks at: the setting, the flavour and the facts of the scale set's model. */
export interface CaptureModeFacts {
  readonly setting: CaptureModeSetting;
  readonly flavour: FlavourEvidence;
  readonly osType: 'Linux' | 'Windows';
  /** `securityProfile.securityType` of the model (`TrustedLaunch`, `ConfidentialVM`…). */
  readonly securityType?: string;
  /** `storageProfile.osDisk.managedDisk.diskEncryptionSet.id`: the OS disk is encrypted with a customer key. */
  readonly osDiskEncryptionSetId?: string;
  /** Extension types of the model (`publisher/type` or `type`), to find Azure Disk Encryption. */
  readonly extensionTypes: readonly string[];
  /** `sku.name`, e.g. `Standard_D4s_v5`. */
  readonly vmSize?: string;
}

/**
 * Which disk the de-identification runs on: the donor's own (drain-and-stop and Run Command prepare it
 * before the snapshot), or a copy of it (live capture; drain-and-stop for a flavour whose identity must
 * never leave the donor: the donor is snapshotted as it is and started at once, then the copy is scrubbed).
 */
export type ScrubbedDisk = 'donor' | 'copy';

export type CaptureModeDecision =
  | {
      readonly kind: 'capture';
      readonly mode: CaptureMode;
      /** The flavour whose identity plan the disk preparation applies. */
      readonly flavour: BootstrapFlavour;
      readonly scrubbed: ScrubbedDisk;
      /** How new nodes from the image join (the model's customData and bootstrap extensions go or stay). */
      readonly newNodes: NewNodeBootstrap;
      readonly reason: string;
    }
  | { readonly kind: 'refuse'; readonly reason: string };

type ModeChoice =
  | {
      readonly kind: 'capture';
      readonly mode: CaptureMode;
      readonly flavour: BootstrapFlavour;
      readonly reason: string;
    }
  | { readonly kind: 'refuse'; readonly reason: string };

/** Used when the flavour is unknown and drain-and-stop is chosen: what the product always captured. */
const DEFAULT_FLAVOUR: BootstrapFlavour = 'aks-engine';

/**
 * Why live capture cannot work for this pool, if it cannot. Each blocker is something the live path
 * cannot do on a running donor, where drain-and-stop does not need to:
 * - the copy of an OS disk encrypted with a customer-managed key (disk encryption set) must be created
 *   with that key, which needs rights on the key vault the product does not have;
 * - Azure Disk Encryption (dm-crypt inside the guest) and confidential VMs (OS disk encrypted with the
 *   VM's guest state) give a copy that cannot be mounted without the VM's keys;
 * - VM sizes with an NVMe disk controller (v6 families and later) expose data disks under other device
 *   paths than `/dev/disk/azure/scsi1/lun<N>`, which the scrub addresses.
 */
export function liveCaptureBlockers(facts: CaptureModeFacts): string[] {
  const blockers: string[] = [];
  if (facts.osType !== 'Linux') blockers.push('the pool runs Windows; the scrub is Linux-only');
  if (facts.securityType?.toLowerCase() === 'confidentialvm') {
    blockers.push('confidential VMs encrypt the OS disk with the VM guest state: a copy cannot be mounted');
  }
  if (facts.osDiskEncryptionSetId !== undefined) {
    blockers.push(
      `the OS disk is encrypted with a customer-managed key (disk encryption set ${lastSegment(facts.osDiskEncryptionSetId)}): its copy would need that key`,
    );
  }
  if (facts.extensionTypes.some((type) => /(^|\/)azurediskencryption(forlinux)?$/i.test(type))) {
    blockers.push('Azure Disk Encryption encrypts the disk inside the guest: a copy cannot be mounted');
  }
  const generation = /_v(\d+)$/i.exec(facts.vmSize ?? '')?.[1];
  if (generation !== undefined && Number(generation) >= 6) {
    blockers.push(
      `VM size ${facts.vmSize ?? ''} has an NVMe disk controller: data disks are not under /dev/disk/azure/scsi1`,
    );
  }
  return blockers;
}

/** Chooses the capture mode of one pool (or refuses the pool), with the reason an operator reads in the plan. */
export function chooseCaptureMode(facts: CaptureModeFacts): CaptureModeDecision {
  const choice = chooseMode(facts);
  if (choice.kind === 'refuse') return choice;
  const { scrub, newNodes } = identityPlan(choice.flavour);
  if (scrub === 'copy-only' && choice.mode === 'run-command') {
    return {
      kind: 'refuse',
      reason:
        `capture.mode is run-command, which prepares the donor's own disk, but ${choice.flavour} pools are ` +
        "de-identified on a copy only (the donor's per-node kubelet certificate must stay: its bootstrap token " +
        'has expired, it could not rejoin without it) and the copy is scrubbed by a pod on the donor; set ' +
        'capture.mode to drain-and-stop, live or auto',
    };
  }
  const scrubbed: ScrubbedDisk = choice.mode === 'live' || scrub === 'copy-only' ? 'copy' : 'donor';
  const how =
    choice.mode === 'drain-and-stop' && scrubbed === 'copy'
      ? `; the donor is snapshotted as it is and started at once, a copy of its disk is scrubbed (${choice.flavour} identity never leaves the donor)`
      : '';
  const joins =
    newNodes === 'run-pool-bootstrap'
      ? "; new nodes run the pool's bootstrap (customData and bootstrap extensions kept) on the warm image"
      : '';
  return { ...choice, scrubbed, newNodes, reason: `${choice.reason}${how}${joins}` };
}

function chooseMode(facts: CaptureModeFacts): ModeChoice {
  const known = facts.flavour.kind === 'unknown' ? undefined : facts.flavour.flavour;
  const flavour = known ?? DEFAULT_FLAVOUR;
  const blockers = liveCaptureBlockers(facts);
  switch (facts.setting) {
    case 'drain-and-stop':
      return { kind: 'capture', mode: 'drain-and-stop', flavour, reason: 'capture.mode is drain-and-stop' };
    case 'run-command':
      return { kind: 'capture', mode: 'run-command', flavour, reason: 'capture.mode is run-command' };
    case 'live':
      if (blockers.length > 0) {
        return {
          kind: 'refuse',
          reason: `capture.mode is live, but live capture cannot work for this pool: ${blockers.join('; ')}; set capture.mode to drain-and-stop or auto`,
        };
      }
      return { kind: 'capture', mode: 'live', flavour, reason: 'capture.mode is live' };
    case 'auto':
      if (blockers.length > 0) {
        return {
          kind: 'capture',
          mode: 'drain-and-stop',
          flavour,
          reason: `auto: drain-and-stop, because ${blockers.join('; ')}`,
        };
      }
      if (facts.flavour.kind === 'unknown') {
        return {
          kind: 'capture',
          mode: 'drain-and-stop',
          flavour,
          reason: `auto: drain-and-stop, because the bootstrap flavour is unknown (${facts.flavour.reason}); live capture is chosen only for a flavour that is configured or detected`,
        };
      }
      return {
        kind: 'capture',
        mode: 'live',
        flavour,
        reason: `auto: live (${flavour}, ${facts.flavour.kind === 'configured' ? 'configured' : `detected from ${facts.flavour.evidence}`}; Linux, OS disk without customer key or guest encryption, SCSI data disks)`,
      };
  }
}

function lastSegment(id: string): string {
  return id.split('/').filter(Boolean).at(-1) ?? id;
}
