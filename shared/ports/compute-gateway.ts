/**
 * The port to Azure compute (scale sets, instances, snapshots, Compute Gallery). Implemented by
 * shared/adapters/azure over @azure/arm-compute; use cases and tests depend only on this contract.
 *
 * Contract for every method:
 * - Inputs and outputs are domain types; no SDK type crosses this boundary.
 * - A missing resource is `NotFoundError` for reads and a no-op for deletions.
 * - Throttling (429), 5xx and connection failures are `TransientError` (with `retryAfterMs` when ARM
 *   said so); everything else the caller cannot fix by retrying is `TerminalError` with an ARM code.
 * - Long-running operations are only *requested* here (`request*`): the method returns once ARM has
 *   accepted the request. Callers observe completion with the matching `get*` (monitor pattern), so
 *   no activity ever blocks for the 10 minutes to hours an image version takes.
 * - Every `request*` is idempotent: requesting a state that is already reached or under way is safe.
 */
import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersion,
  ImageVersionRef,
  ManagedDisk,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
  StorageAccountType,
} from '../domain/compute.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';

export interface SnapshotRequest {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
  readonly location: string;
  readonly sourceDiskId: string;
  readonly incremental: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

/** A managed disk copied from a snapshot (`creationData.createOption: Copy`). */
export interface DiskFromSnapshotRequest {
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

export interface ImageVersionRequest {
  readonly ref: ImageVersionRef;
  readonly location: string;
  /** The OS disk image's source: a snapshot or a managed disk (`storageProfile.osDiskImage.source.id`). */
  readonly sourceId: string;
  readonly storageAccountType: StorageAccountType;
  /** Regions to replicate to besides `location`. */
  readonly extraRegions: readonly string[];
  /** Created hidden from `latest`; flipped with `requestImageVersionPublication` once it Succeeded. */
  readonly excludeFromLatest: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

/** The model change that makes new instances boot from the prototype image. */
export interface ScaleSetImageUpdate {
  /** Image definition id (new instances take `latest`) or image version id (pinned). */
  readonly imageId: string;
  /** Base64 of the new customData (write-only in ARM: it is never read back). */
  readonly customDataBase64: string;
}

export interface ComputeGateway {
  getScaleSet(ref: ScaleSetRef): Promise<ScaleSet>;

  /** Uniform: instance id; Flexible: member VM name. */
  getInstance(scaleSet: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance>;
  /** Graceful power off (not deallocate: the disk and IP stay). No-op when stopping or stopped. */
  requestPowerOff(instance: ScaleSetInstance): Promise<void>;
  /** No-op when starting or running. */
  requestStart(instance: ScaleSetInstance): Promise<void>;

  /**
   * Attaches a managed data disk at `lun` (POST …/attachDetachDataDisks: only the disks change, no
   * get-modify-put of the instance model). No-op when the disk is attached to the instance already.
   */
  requestDataDiskAttach(instance: ScaleSetInstance, diskId: string, lun: number): Promise<void>;
  /** Detaches a data disk; no-op when it is not attached to the instance. */
  requestDataDiskDetach(instance: ScaleSetInstance, diskId: string): Promise<void>;

  getDisk(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk>;
  /** Idempotent by name; a disk of that name copied from another source is a `TerminalError`. */
  requestDiskFromSnapshot(request: DiskFromSnapshotRequest): Promise<void>;
  requestDiskDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void>;

  getSnapshot(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot>;
  /** Every snapshot of a resource group (the reaper finds ours by their tags). */
  listSnapshots(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]>;
  requestSnapshot(request: SnapshotRequest): Promise<void>;
  requestSnapshotDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void>;

  /** Creates the gallery when absent (location and tags only used then) and waits: it takes seconds. */
  ensureGallery(ref: GalleryRef, location: string, tags: Readonly<Record<string, string>>): Promise<void>;
  getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition>;
  /** Creates the definition when absent and waits (seconds). Never changes an existing one. */
  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
  ): Promise<ImageDefinition>;

  listImageVersions(ref: ImageDefinitionRef): Promise<ImageVersion[]>;
  getImageVersion(ref: ImageVersionRef): Promise<ImageVersion>;
  /**
   * PUT of the version. ARM refuses some requests synchronously (e.g. ZRS in a region without zones):
   * those throw `TerminalError` with the ARM code, or code `ZrsUnsupported` for that case.
   */
  requestImageVersion(request: ImageVersionRequest): Promise<void>;
  /** PATCH `excludeFromLatest`. */
  requestImageVersionExclusion(ref: ImageVersionRef, excludeFromLatest: boolean): Promise<void>;
  requestImageVersionDeletion(ref: ImageVersionRef): Promise<void>;

  /** PATCH of the model: image reference (marketplace fields nulled) and customData. */
  requestScaleSetImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void>;
  listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]>;
  requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void>;
}
