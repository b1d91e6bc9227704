/**
 * The public types of the simulated Microsoft.Compute state (`ComputeState`): seeds, read-only infos,
 * events, operation outcomes and the state-level error the ARM handler turns into an HTTP reply.
 */
import type { LatencyProfile, Scheduler, SimClock } from '../contracts.js';

export type PowerState = 'starting' | 'running' | 'stopping' | 'stopped' | 'deallocating' | 'deallocated';
export type OrchestrationMode = 'Uniform' | 'Flexible';
export type UpgradeMode = 'Manual' | 'Automatic' | 'Rolling';
export type HyperVGeneration = 'V1' | 'V2';
export type OsType = 'Linux' | 'Windows';
/** Who caused a power change: an ARM API call, the guest itself (prep pod, shutdown), or the world (seeding, scale-out). */
export type PowerCause = 'api' | 'guest' | 'world';

/** ARM error body, the `error` member of `{ "error": … }`. */
export interface ArmErrorBody {
  code: string;
  message: string;
  target?: string;
  details?: ArmErrorBody[];
}

/** A state-level refusal that the ARM handler turns into an HTTP error. */
export class ComputeError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ArmErrorBody[],
  ) {
    super(message);
    this.name = 'ComputeError';
  }

  toArmError(): ArmErrorBody {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

/** How a long-running operation ended. */
export type OperationOutcome =
  { status: 'Succeeded' } | { status: 'Failed' | 'Canceled'; error: ArmErrorBody };
export type Completion = (outcome: OperationOutcome) => void;
/**
 * Asked when a long-running change would complete; an error makes it end Failed instead (the ARM
 * handler wires this to the fault injector's `<action>#lro`). What a failure leaves behind is
 * documented per operation.
 */
export type FailureCheck = () => ArmErrorBody | undefined;

/** Options of the instance power operations. */
export interface PowerOptions {
  cause?: PowerCause;
  onComplete?: Completion;
  /** On failure the instance returns to its power state before the operation. */
  failure?: FailureCheck;
}

export type JsonObject = Record<string, unknown>;

export interface ExtensionSeed {
  name: string;
  publisher: string;
  type: string;
  typeHandlerVersion?: string;
  settings?: JsonObject;
  /** Write-only: stored with the model, never returned by ARM. */
  protectedSettings?: JsonObject;
  /** Whether the extension bootstraps the node (CustomScript and the like). Defaults to CustomScript types. */
  bootstrap?: boolean;
}

export interface InstanceSeed {
  powerState?: PowerState;
  zone?: string;
  /** Flexible VM name; Uniform instances are named `<vmss>_<instanceId>`. */
  name?: string;
}

export type ImageReferenceSeed =
  { publisher: string; offer: string; sku: string; version: string } | { id: string };

export interface ScaleSetSeed {
  subscriptionId?: string;
  resourceGroup: string;
  name: string;
  location?: string;
  orchestrationMode?: OrchestrationMode;
  skuName?: string;
  /** Instance count, or one seed per instance. */
  instances?: number | InstanceSeed[];
  computerNamePrefix?: string;
  imageReference?: ImageReferenceSeed;
  osType?: OsType;
  osDiskSizeGB?: number;
  hyperVGeneration?: HyperVGeneration;
  /** Ephemeral OS disk placement; `true` means CacheDisk. */
  ephemeralOsDisk?: boolean | 'CacheDisk' | 'ResourceDisk' | 'NvmeDisk';
  securityType?: 'Standard' | 'TrustedLaunch' | 'ConfidentialVM';
  architecture?: 'x64' | 'Arm64';
  adminUsername?: string;
  /** Base64 customData (write-only over ARM). */
  customData?: string;
  extensions?: ExtensionSeed[];
  tags?: Record<string, string>;
  upgradePolicy?: { mode: UpgradeMode; enableAutomaticOSUpgrade?: boolean };
  zones?: string[];
}

export interface ImageVersionSeed {
  name: string;
  sourceId?: string;
  excludeFromLatest?: boolean;
  storageAccountType?: string;
  provisioningState?: 'Succeeded' | 'Failed' | 'Creating';
  tags?: Record<string, string>;
}

export interface ImageDefinitionSeed {
  name: string;
  osType?: OsType;
  osState?: 'Generalized' | 'Specialized';
  hyperVGeneration?: HyperVGeneration;
  identifier?: { publisher: string; offer: string; sku: string };
  architecture?: 'x64' | 'Arm64';
  features?: { name: string; value: string }[];
  versions?: ImageVersionSeed[];
  tags?: Record<string, string>;
}

export interface GallerySeed {
  subscriptionId?: string;
  resourceGroup: string;
  name: string;
  location?: string;
  tags?: Record<string, string>;
  images?: ImageDefinitionSeed[];
}

export interface RegionCapabilities {
  /** Whether zone-redundant storage exists in the region (image versions with Standard_ZRS fail without it). */
  zrs: boolean;
}

/** A read-only snapshot of an instance, safe to hand to the world. */
export interface InstanceInfo {
  id: string;
  scaleSetId: string;
  orchestrationMode: OrchestrationMode;
  /** Uniform: the numeric instance id ("3"); Flexible: the VM name. */
  instanceId: string;
  name: string;
  vmId: string;
  computerName: string;
  /** `azure:///…` provider id the node of this instance carries. */
  providerId: string;
  location: string;
  zone?: string;
  powerState: PowerState;
  provisioningState: string;
  osDiskId?: string;
  ephemeralOsDisk: boolean;
  imageReference: JsonObject;
  bootsFromGalleryImage: boolean;
  latestModelApplied: boolean;
  timeCreated: string;
  /** Managed data disks attached to the instance (`storageProfile.dataDisks`), by LUN. */
  dataDisks: DataDiskInfo[];
}

/** A data disk in an instance's storage profile. */
export interface DataDiskInfo {
  lun: number;
  diskId: string;
  name: string;
  caching: string;
  /** A detach is under way. */
  toBeDetached?: boolean;
}

export interface ExtensionInfo {
  name: string;
  publisher: string;
  type: string;
  bootstrap: boolean;
  provisioningState: string;
}

/**
 * The model an instance was built from, as Azure keeps it per instance (a VMSS VM's own model, a
 * Flexible VM's own properties): a later change of the scale set's model does not change it until the
 * instance is reimaged or upgraded. What a test compares a canary's boot with.
 */
export interface InstanceBootModel {
  imageReference: JsonObject;
  /** Base64, as written to the scale set's model (never returned over ARM). */
  customData?: string;
  /** The model's extensions as they were (ARM `extensionProfile.extensions`, protected settings included). */
  extensions: JsonObject[];
}

export interface ScaleSetInfo {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  orchestrationMode: OrchestrationMode;
  provisioningState: string;
  capacity: number;
  imageReference: JsonObject;
  bootsFromGalleryImage: boolean;
  /** The last customData written (base64), which ARM never returns. */
  customData?: string;
  extensions: ExtensionInfo[];
  bootstrapExtensionsRemain: boolean;
  upgradeMode: UpgradeMode;
  automaticOSUpgrade: boolean;
  ephemeralOsDisk: boolean;
  hyperVGeneration: HyperVGeneration;
  architecture: 'x64' | 'Arm64';
  tags: Record<string, string>;
  modelVersion: number;
  /** ARM `etag` (quoted), changed by every write to the scale set. */
  etag: string;
}

export interface DiskInfo {
  id: string;
  name: string;
  resourceGroup: string;
  location: string;
  diskSizeGB: number;
  hyperVGeneration: HyperVGeneration;
  osType: OsType;
  managedBy?: string;
  skuName: string;
  zone?: string;
  uniqueId: string;
  timeCreated: string;
  /** `FromImage` for OS disks, `Copy` for disks made from a snapshot. */
  createOption: 'FromImage' | 'Copy';
  sourceResourceId?: string;
  /** An OS disk built from a gallery image: the version it was built from (`latest` resolved). */
  galleryImageVersionId?: string;
  provisioningState: string;
  tags: Record<string, string>;
}

export interface SnapshotInfo {
  id: string;
  name: string;
  resourceGroup: string;
  location: string;
  tags: Record<string, string>;
  sourceResourceId: string;
  incremental: boolean;
  skuName: string;
  diskSizeGB: number;
  hyperVGeneration: HyperVGeneration;
  osType: OsType;
  provisioningState: string;
  /** Whether the source disk's VM was stopped or deallocated when the copy was taken (else crash-consistent). */
  sourceVmStopped: boolean;
  /** Whether the source's root filesystem was frozen when the copy was taken (the world says so). */
  sourceFrozen?: boolean;
  uniqueId: string;
  timeCreated: string;
}

export interface ReplicationStatus {
  region: string;
  state: 'Unknown' | 'Replicating' | 'Completed' | 'Failed';
  progress: number;
  details?: string;
}

export interface ImageVersionInfo {
  id: string;
  imageId: string;
  name: string;
  location: string;
  provisioningState: string;
  sourceId?: string;
  excludeFromLatest: boolean;
  storageAccountType: string;
  tags: Record<string, string>;
  replication: ReplicationStatus[];
}

export interface RunCommandRecord {
  instanceId: string;
  commandId: string;
  script: string[];
  parameters: { name: string; value: string }[];
  at: string;
}

/** What a run command printed; the world may also act on the script (e.g. power the guest off). */
export interface RunCommandOutput {
  stdout: string;
  stderr: string;
}

export type RunCommandHandler = (instance: InstanceInfo, record: RunCommandRecord) => RunCommandOutput;

export type ComputeEvent =
  | {
      type: 'instance-power-changed';
      instance: InstanceInfo;
      previous: PowerState;
      cause: PowerCause;
      /** False for a hard power-off (`skipShutdown`): the guest's shutdown did not run. */
      orderly: boolean;
    }
  | {
      type: 'instance-created';
      instance: InstanceInfo;
      /** The model pointed at a gallery image when the instance was built. */
      bootsFromGalleryImage: boolean;
      /** Bootstrap extensions (CustomScript…) were still in the model when the instance was built. */
      bootstrapExtensionsRemain: boolean;
    }
  | { type: 'instance-deleted'; instance: InstanceInfo }
  | {
      type: 'instance-data-disks-changed';
      instance: InstanceInfo;
      attached: DataDiskInfo[];
      detached: DataDiskInfo[];
    }
  | { type: 'scale-set-model-changed'; scaleSet: ScaleSetInfo };

export type ComputeListener = (event: ComputeEvent) => void;

/**
 * What the world keeps on an OS disk: the files that matter for a machine's identity (path → content)
 * and the container images the node has pulled. The compute state copies it with the disk (snapshot,
 * image version, a new instance's disk from a gallery image) and never interprets it.
 */
export interface DiskContent {
  files: Record<string, string>;
  images: string[];
  /** The root filesystem's identity (what boot and mount look disks up by), when the world models it. */
  filesystem?: FilesystemIdentity;
}

/**
 * The OS disk's root filesystem as block devices show it: its partition on the disk, the filesystem's
 * type, UUID and label, and the partition's GPT UUID (PARTUUID). A copy of the disk carries them all.
 */
export interface FilesystemIdentity {
  type: 'ext4' | 'xfs';
  uuid: string;
  label: string;
  partUuid: string;
  /** Partition number of the root filesystem on the disk. */
  partition: number;
  /** A crash-consistent copy: the journal must be replayed (by a mount) before its identity can change. */
  needsRecovery?: boolean;
}

export interface ComputeStateOptions {
  clock: SimClock;
  scheduler: Scheduler;
  latency: LatencyProfile;
  defaultLocation?: string;
  defaultSubscriptionId?: string;
}
