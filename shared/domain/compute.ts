/**
 * The domain's view of the Azure compute resources the pipeline touches besides the scale set itself:
 * instances, snapshots, galleries, image definitions and versions, extensions.
 */
import type { ScaleSetRef } from './resource-id.js';

/** Instance power states as ARM reports them in `PowerState/<state>` statuses. */
export const POWER_STATES = [
  'starting',
  'running',
  'stopping',
  'stopped',
  'deallocating',
  'deallocated',
  'unknown',
] as const;
export type PowerState = (typeof POWER_STATES)[number];

/** ARM `provisioningState` values we act on; anything else is carried as is. */
export type ProvisioningState =
  'Creating' | 'Updating' | 'Succeeded' | 'Failed' | 'Deleting' | 'Canceled' | 'Migrating' | (string & {});

/** A member of a scale set: a Uniform instance (`instanceId`) or a Flexible member VM (`vmName`). */
export interface ScaleSetInstance {
  readonly scaleSet: ScaleSetRef;
  /** Uniform: the decimal instance id. Flexible: the VM name. */
  readonly instanceId: string;
  /** ARM resource id of the instance (Uniform) or VM (Flexible). */
  readonly resourceId: string;
  /** The VM's unique id (`vmId`, a GUID), stable across restarts; tags the image it produced. */
  readonly vmId?: string;
  readonly computerName?: string;
  readonly powerState: PowerState;
  readonly provisioningState: ProvisioningState;
  /** Managed OS disk id; absent for ephemeral OS disks. */
  readonly osDiskId?: string;
  /** The managed OS disk's type (`Premium_LRS`, `PremiumV2_LRS`…) when the VM model says it. */
  readonly osDiskType?: string;
  readonly ephemeralOsDisk: boolean;
  readonly location: string;
  readonly zones: readonly string[];
  /** From the instance view; the scale set model does not say it, the gallery definition must match it. */
  readonly hyperVGeneration?: 'V1' | 'V2';
  /** The image the instance was built from: `storageProfile.imageReference.id` (a gallery definition or version). */
  readonly imageId?: string;
  /** `imageReference.exactVersion`: the version ARM resolved `latest` to, where it reports one. */
  readonly exactVersion?: string;
  /** `timeCreated` (RFC 3339). */
  readonly createdAt?: string;
  /** Managed data disks attached to the instance (`storageProfile.dataDisks`). */
  readonly dataDisks?: readonly AttachedDataDisk[];
}

/**
 * ARM accepted the instance's deletion: it shows `Deleting` until it is gone (the scale set's capacity
 * drops then). It is given back already: no donor, no canary, no member of the pool's size, not to be
 * deleted or replaced again.
 */
export function isBeingDeleted(instance: Pick<ScaleSetInstance, 'provisioningState'>): boolean {
  return instance.provisioningState === 'Deleting';
}

/**
 * What a power request needs to know of an instance: where it is, whether it is a Uniform instance or a
 * Flexible member VM (its resource id says), and the power state it was last seen in (a request that
 * would change nothing is not sent).
 */
export type PowerTarget = Pick<ScaleSetInstance, 'scaleSet' | 'instanceId' | 'resourceId' | 'powerState'>;

/** What a data disk attach or detach needs of the instance: where it is and its data disks as seen. */
export type DataDiskTarget = Pick<ScaleSetInstance, 'scaleSet' | 'instanceId' | 'resourceId' | 'dataDisks'>;

/** A data disk in an instance's storage profile. */
export interface AttachedDataDisk {
  readonly lun: number;
  readonly name: string;
  /** Managed disk id (absent for unmanaged VHD disks). */
  readonly diskId?: string;
  /** Set while a detach is under way. */
  readonly toBeDetached?: boolean;
}

/** A managed disk (the live capture's copy of the donor's OS disk). */
export interface ManagedDisk {
  readonly id: string;
  readonly name: string;
  readonly resourceGroup: string;
  readonly location: string;
  readonly provisioningState: ProvisioningState;
  /** The VM or instance (resource id) it is attached to, if any. */
  readonly managedBy?: string;
  readonly zones: readonly string[];
  /** `creationData.sourceResourceId`. */
  readonly sourceResourceId?: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** A virtual machine as ARM lists a resource group's: a Flexible scale set's member names its scale set. */
export interface VirtualMachineSummary {
  /** ARM resource id. */
  readonly id: string;
  readonly name: string;
  /** `properties.virtualMachineScaleSet.id`: the Flexible scale set it belongs to, if any. */
  readonly scaleSetId?: string;
}

/**
 * Where an Azure Run Command (RunShellScript) is. ARM reports the script's output streams with the
 * operation's result; a script that fails under `set -e` leaves its error on stderr.
 */
export type RunCommandState =
  | { readonly state: 'running' }
  | { readonly state: 'succeeded'; readonly stdout: string; readonly stderr: string }
  | { readonly state: 'failed'; readonly code: string; readonly message: string };

export interface Snapshot {
  readonly id: string;
  readonly name: string;
  readonly resourceGroup: string;
  readonly location: string;
  readonly provisioningState: ProvisioningState;
  readonly sourceResourceId?: string;
  readonly incremental: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

export interface GalleryRef {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly galleryName: string;
}

export interface ImageDefinitionRef extends GalleryRef {
  readonly imageName: string;
}

export interface ImageVersionRef extends ImageDefinitionRef {
  readonly versionName: string;
}

/** Immutable features of an image definition; they must match the scale set or VM creation fails later. */
export interface ImageDefinitionSpec {
  readonly osType: 'Linux' | 'Windows';
  /** Always Generalized for scale sets with an osProfile (docs/design.md#gallery-and-image-definition). */
  readonly osState: 'Generalized' | 'Specialized';
  readonly hyperVGeneration: 'V1' | 'V2';
  readonly architecture: 'x64' | 'Arm64';
  /** Gallery `SecurityType` feature value (e.g. `TrustedLaunchSupported`), when the scale set uses one. */
  readonly securityType?: string;
  readonly identifier: { readonly publisher: string; readonly offer: string; readonly sku: string };
  readonly description?: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface ImageDefinition {
  readonly id: string;
  readonly ref: ImageDefinitionRef;
  readonly location: string;
  readonly provisioningState: ProvisioningState;
  readonly spec: ImageDefinitionSpec;
}

export type StorageAccountType = 'Standard_ZRS' | 'Standard_LRS' | 'Premium_LRS';

export type ReplicationState = 'Unknown' | 'Replicating' | 'Completed' | 'Failed';

export interface ImageVersion {
  readonly id: string;
  readonly ref: ImageVersionRef;
  readonly location: string;
  readonly provisioningState: ProvisioningState;
  readonly excludeFromLatest: boolean;
  readonly storageAccountType?: StorageAccountType;
  /** Aggregated replication state (from `$expand=ReplicationStatus`), when known. */
  readonly replicationState: ReplicationState;
  /** While replicating: the least regional progress (0–100) ARM reported, when it did. */
  readonly replicationProgress?: number;
  readonly sourceId?: string;
  readonly publishedAt?: string;
  readonly tags: Readonly<Record<string, string>>;
  /**
   * Whether a target region carries an `excludeFromLatest` of its own (it overrides the version's), when
   * the reader knew (the ARM adapter does): a publication that knows there is none need not read first.
   */
  readonly regionalExclusion?: boolean;
}

export interface ScaleSetExtension {
  readonly name: string;
  readonly publisher: string;
  /** Extension type, e.g. `CustomScript`. */
  readonly type: string;
  readonly provisioningState?: ProvisioningState;
}

/** An extension the prototype image makes redundant (bootstrap), and whether its deletion is under way. */
export interface RemovableExtension {
  readonly name: string;
  readonly deleting: boolean;
}

/**
 * The extensions a refreshed model no longer needs: every one whose type (`CustomScript`) or
 * `publisher/type` is not kept. Those being deleted are listed too: the caller waits until none is left.
 */
export function removableExtensions(
  extensions: readonly ScaleSetExtension[],
  keepExtensionTypes: readonly string[],
): RemovableExtension[] {
  const keep = new Set(keepExtensionTypes.map((type) => type.toLowerCase()));
  return extensions
    .filter((extension) => {
      const type = extension.type.toLowerCase();
      const qualified = `${extension.publisher}/${extension.type}`.toLowerCase();
      return !keep.has(type) && !keep.has(qualified);
    })
    .map((extension) => ({ name: extension.name, deleting: extension.provisioningState === 'Deleting' }));
}

/** `publisher/type` of each extension (`Microsoft.Azure.Security/AzureDiskEncryptionForLinux`…), or the type alone. */
export function extensionTypesOf(extensions: readonly ScaleSetExtension[]): string[] {
  return extensions.flatMap((extension) => {
    if (extension.type === '') return [];
    return [extension.publisher === '' ? extension.type : `${extension.publisher}/${extension.type}`];
  });
}

/** The cloud-init customData we put on a refreshed model: bootstrap already happened on the prototype. */
export const NO_OP_CLOUD_CONFIG = '#cloud-config\n';
