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
  PowerTarget,
  RunCommandState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
  StorageAccountType,
  VirtualMachineSummary,
} from '../domain/compute.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';

/** A copy (snapshot, disk, image version) the caller names itself. */
interface NamedByCaller {
  /**
   * The run made this name up after reading what exists (from the version name it chose under the lease):
   * the PUT goes without a read first; a retry that meets its earlier attempt's resource is told by ARM's
   * conflict and judged as usual.
   */
  readonly newName?: boolean;
}

export interface SnapshotRequest extends NamedByCaller {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
  readonly location: string;
  readonly sourceDiskId: string;
  readonly incremental: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

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

export interface ImageVersionRequest extends NamedByCaller {
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
  /** The whole tag set to write with it (ARM's PATCH replaces tags as a whole); absent: tags untouched. */
  readonly tags?: Readonly<Record<string, string>>;
  /** Only if the scale set still has this etag (else ConcurrentChange, nothing written). */
  readonly ifMatch?: string;
}

/** A PATCH of the scale set model; what is left out is not touched. */
export interface ScaleSetChange {
  /** Image reference fields; `null` removes one (e.g. `id` when going back to a marketplace image). */
  readonly imageReference?: Readonly<Record<string, string | null>>;
  /** The whole tag set (ARM's PATCH replaces tags as a whole). */
  readonly tags?: Readonly<Record<string, string>>;
  /** `sku.capacity`: a scale-out adds instances built from the model. */
  readonly capacity?: number;
  /** Only if the scale set still has this etag (else ConcurrentChange, nothing written). */
  readonly ifMatch?: string;
}

export interface ComputeGateway {
  /**
   * The scale set's model. Its image's Hyper-V generation and architecture live on the image, one more
   * read (the gallery image definition or a marketplace image): made only with `imageFacts` (planning
   * needs them to create a matching definition; every other step reads the model alone).
   */
  getScaleSet(ref: ScaleSetRef, options?: { readonly imageFacts?: boolean }): Promise<ScaleSet>;

  /** Uniform: instance id; Flexible: member VM name. */
  getInstance(scaleSet: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance>;
  /**
   * Graceful power off (not deallocate: the disk and IP stay). No-op when stopping or stopped, judged on
   * `instance` as `getInstance` just returned it (its power state is not read again).
   */
  requestPowerOff(instance: ScaleSetInstance): Promise<void>;
  /**
   * No-op when starting or running, judged on `instance` as last seen (`getInstance`, or a read the
   * caller made just before): its power state is not read again.
   */
  requestStart(instance: PowerTarget): Promise<void>;

  /**
   * Attaches a managed data disk at `lun` (POST …/attachDetachDataDisks: only the disks change, no
   * get-modify-put of the instance model). No-op when the disk is attached to the instance already,
   * judged on `instance` as `getInstance` just returned it (not read again).
   */
  requestDataDiskAttach(instance: ScaleSetInstance, diskId: string, lun: number): Promise<void>;
  /** Detaches a data disk; no-op when it is not attached to the instance (judged on `instance`). */
  requestDataDiskDetach(instance: ScaleSetInstance, diskId: string): Promise<void>;

  getDisk(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk>;
  /** Every managed disk of a resource group (the reaper finds live capture's copy disks by their tags). */
  listDisks(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]>;
  /** Idempotent by name; a disk of that name copied from another source is a `TerminalError`. */
  requestDiskFromSnapshot(request: DiskFromSnapshotRequest): Promise<void>;
  requestDiskDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void>;

  /**
   * The virtual machines of a resource group (one paged list); with `scaleSet`, only the members of that
   * Flexible scale set (ARM's `virtualMachineScaleSet/id` filter). Flexible members are plain VMs whose
   * providerID does not name their scale set: this is how a node is known to belong to one.
   */
  listVirtualMachines(
    subscriptionId: string,
    resourceGroup: string,
    scaleSet?: ScaleSetRef,
  ): Promise<VirtualMachineSummary[]>;

  /**
   * Azure Run Command (`RunShellScript`, run as root by the VM agent) on a running instance. Returns once
   * ARM accepted it, with an opaque handle (no secret: operation URLs) that `getRunCommand` reads, also
   * from another process after a crash. A run command still executing on the instance (ours, whose
   * handle was lost) is `TransientError` code `RunCommandInProgress`; a VM that is not running is
   * refused by ARM (`TerminalError`).
   */
  requestRunCommand(instance: ScaleSetInstance, script: readonly string[]): Promise<string>;
  /** Where the run command of `handle` is; polls ARM once. */
  getRunCommand(scaleSet: ScaleSetRef, handle: string): Promise<RunCommandState>;

  getSnapshot(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot>;
  /** Every snapshot of a resource group (the reaper finds ours by their tags). */
  listSnapshots(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]>;
  requestSnapshot(request: SnapshotRequest): Promise<void>;
  requestSnapshotDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void>;

  /**
   * Creates the gallery when absent (location and tags only used then) and waits: it takes seconds.
   * `knownAbsent`: the caller has just seen it missing, so it is created without reading it again (the
   * same race with another creator as a read just before the create).
   */
  ensureGallery(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    knownAbsent?: boolean,
  ): Promise<void>;
  getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition>;
  /**
   * Creates the definition when absent and waits (seconds). Never changes an existing one. `knownAbsent`:
   * the caller has just seen it missing, so it is created without reading it again.
   */
  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    knownAbsent?: boolean,
  ): Promise<ImageDefinition>;

  listImageVersions(ref: ImageDefinitionRef): Promise<ImageVersion[]>;
  getImageVersion(ref: ImageVersionRef): Promise<ImageVersion>;
  /**
   * PUT of the version. ARM refuses some requests synchronously (e.g. ZRS in a region without zones):
   * those throw `TerminalError` with the ARM code, or code `ZrsUnsupported` for that case.
   */
  requestImageVersion(request: ImageVersionRequest): Promise<void>;
  /** PATCH `excludeFromLatest`, adding `addTags` to the version's tags in the same request. */
  requestImageVersionExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags?: Readonly<Record<string, string>>,
  ): Promise<void>;
  requestImageVersionDeletion(ref: ImageVersionRef): Promise<void>;

  /** PATCH of the model: image reference (marketplace fields nulled) and customData. */
  requestScaleSetImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void>;
  /** PATCH of the model (image reference fields, tags, capacity), conditional on the etag when given. */
  requestScaleSetChange(ref: ScaleSetRef, change: ScaleSetChange): Promise<void>;
  /** Every instance (Uniform) or member VM (Flexible), with its power state and the image it was built from. */
  listInstances(scaleSet: ScaleSetRef): Promise<ScaleSetInstance[]>;
  /** Deletes one instance (and its OS disk); a no-op when it is already gone. */
  requestInstanceDeletion(scaleSet: ScaleSetRef, instanceId: string): Promise<void>;
  /**
   * The gallery image version a managed disk was created from (`creationData.galleryImageReference.id`),
   * or undefined when it was not created from a gallery image.
   */
  getDiskImageVersionId(diskId: string): Promise<string | undefined>;
  /** Replaces a version's tags as a whole (PATCH). */
  requestImageVersionTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void>;
  listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]>;
  requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void>;
}
