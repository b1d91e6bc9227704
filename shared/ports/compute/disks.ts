/** The port to managed disks (contract: index.ts). */
import type { ManagedDisk } from '../../domain/compute.js';
import type { NamedByCaller } from './named-by-caller.js';

/** A managed disk copied from a snapshot (`creationData.createOption: Copy`). */
export interface DiskFromSnapshotRequest extends NamedByCaller {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
  readonly location: string;
  /** The zone of the VM the disk will be attached to (a zonal VM takes only disks of its zone). */
  readonly zone?: string;
  readonly sourceSnapshotId: string;
  /** `StandardSSD_LRS` attaches to every VM size (Premium needs an `s` size). */
  readonly skuName: 'StandardSSD_LRS' | 'Premium_LRS';
  readonly tags: Readonly<Record<string, string>>;
}

export interface DisksPort {
  get(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk>;
  /** Every managed disk of a resource group (the reaper finds live capture's copy disks by their tags). */
  list(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]>;
  /** Idempotent by name; a disk of that name copied from another source is a `TerminalError`. */
  requestFromSnapshot(request: DiskFromSnapshotRequest): Promise<void>;
  requestDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void>;
  /**
   * The gallery image version a managed disk was created from (`creationData.galleryImageReference.id`),
   * or undefined when it was not created from a gallery image.
   */
  getImageVersionId(diskId: string): Promise<string | undefined>;
}
