/**
 * The shared core of the simulated compute state: the record maps every resource part reads (scale
 * sets, instances, disks, snapshots, galleries, images, versions), event emission, preemption of a
 * pending transition, and the read-only views of scale sets and instances. `ComputeState` composes the
 * per-resource parts built on it; nothing outside sim/arm uses this module directly.
 */
import type { LatencyProfile, Scheduler, SimClock } from '../contracts.js';
import {
  deepCopy,
  idKey,
  isGalleryImageReference,
  isObject,
  objectAt,
  optionalObjectAt,
  stringAt,
  textOr,
} from './compute-json.js';
import {
  type Completion,
  ComputeError,
  type ComputeEvent,
  type ComputeListener,
  type DataDiskInfo,
  type DiskContent,
  type DiskInfo,
  type FailureCheck,
  type HyperVGeneration,
  type ImageVersionInfo,
  type InstanceBootModel,
  type InstanceInfo,
  type JsonObject,
  type OperationOutcome,
  type OrchestrationMode,
  type OsType,
  type PowerState,
  type ReplicationStatus,
  type ScaleSetInfo,
  type SnapshotInfo,
} from './compute-types.js';

export interface PendingTransition {
  kind: string;
  cancel: () => void;
  onComplete?: Completion;
}

export interface ScaleSetRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  tags: Record<string, string>;
  sku: { name: string; tier: string; capacity: number };
  zones?: string[];
  /** ARM `properties`, customData included (stripped when rendered). */
  properties: JsonObject;
  nextInstanceNumber: number;
  modelVersion: number;
  /** ARM `etag` counter: every write to the scale set resource (model, tags, capacity) bumps it. */
  etag: number;
  /** Not part of the VMSS model in ARM (it comes from the image); the disks and instance views report it. */
  hyperVGeneration: HyperVGeneration;
  architecture: 'x64' | 'Arm64';
  /** Seeded bootstrap flags by lower-cased extension name (else CustomScript types count as bootstrap). */
  bootstrapOverrides: Map<string, boolean>;
  uniqueId: string;
  timeCreated: string;
  pending?: PendingTransition;
}

export interface InstanceRecord {
  id: string;
  scaleSetId: string;
  mode: OrchestrationMode;
  instanceId: string;
  name: string;
  vmId: string;
  computerName: string;
  location: string;
  zone?: string;
  powerState: PowerState;
  provisioningState: string;
  modelVersion: number;
  imageReference: JsonObject;
  /** What the scale set's model held when the instance was built (InstanceBootModel). */
  bootModel: InstanceBootModel;
  osDiskId?: string;
  /** Managed data disks, by LUN (the OS disk is not among them). */
  dataDisks: DataDiskInfo[];
  /** An attach or detach under way (one at a time, like ARM's per-VM operation lock). */
  diskPending?: PendingTransition;
  ephemeralPlacement?: string;
  hyperVGeneration: HyperVGeneration;
  osType: OsType;
  vmSize: string;
  adminUsername: string;
  timeCreated: string;
  pending?: PendingTransition;
}

export interface DiskRecord extends DiskInfo {
  resourceKey: string;
  content?: DiskContent;
  pending?: PendingTransition;
}

export interface SnapshotRecord extends SnapshotInfo {
  pending?: PendingTransition;
  /** The source disk's content at the moment of the copy. */
  content?: DiskContent;
}

export interface GalleryRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  tags: Record<string, string>;
  properties: JsonObject;
}

export interface ImageRecord {
  id: string;
  galleryId: string;
  name: string;
  location: string;
  tags: Record<string, string>;
  properties: JsonObject;
}

export interface VersionRecord {
  id: string;
  imageId: string;
  name: string;
  location: string;
  tags: Record<string, string>;
  properties: JsonObject;
  replication: ReplicationStatus[];
  /** Simulated epoch ms the build started, for replication progress. */
  startedMs?: number;
  /** How long its creation takes (drawn by the timing model): what its replication progress is a share of. */
  durationSeconds?: number;
  pending?: PendingTransition;
  /** The source's content when the version was created (what new instances boot with). */
  content?: DiskContent;
}

const CUSTOM_SCRIPT_TYPES = new Set(['customscript', 'customscriptextension']);

function isBootstrapExtension(extension: JsonObject, overrides: ReadonlyMap<string, boolean>): boolean {
  const properties = isObject(extension.properties) ? extension.properties : {};
  const override = overrides.get(textOr(extension.name, '').toLowerCase());
  if (override !== undefined) return override;
  const type = typeof properties.type === 'string' ? properties.type.toLowerCase() : '';
  return CUSTOM_SCRIPT_TYPES.has(type);
}

/** The maps and services every part of the compute state shares (one instance per ComputeState). */
export interface ComputeShared {
  readonly clock: SimClock;
  readonly scheduler: Scheduler;
  readonly latency: LatencyProfile;
  readonly defaultLocation: string;
  readonly defaultSubscriptionId: string;
  readonly scaleSets: Map<string, ScaleSetRecord>;
  readonly instances: Map<string, InstanceRecord>;
  readonly disks: Map<string, DiskRecord>;
  readonly snapshots: Map<string, SnapshotRecord>;
  readonly galleries: Map<string, GalleryRecord>;
  readonly images: Map<string, ImageRecord>;
  readonly versions: Map<string, VersionRecord>;
  readonly listeners: Set<ComputeListener>;
}

/** Base of the per-resource parts: the shared maps under their usual names, and the common helpers. */
export class ComputeCore {
  readonly clock: SimClock;
  readonly scheduler: Scheduler;
  readonly latency: LatencyProfile;
  readonly defaultLocation: string;
  readonly defaultSubscriptionId: string;
  protected readonly scaleSets: Map<string, ScaleSetRecord>;
  protected readonly instances: Map<string, InstanceRecord>;
  protected readonly disks: Map<string, DiskRecord>;
  protected readonly snapshots: Map<string, SnapshotRecord>;
  protected readonly galleries: Map<string, GalleryRecord>;
  protected readonly images: Map<string, ImageRecord>;
  protected readonly versions: Map<string, VersionRecord>;
  protected readonly listeners: Set<ComputeListener>;

  constructor(shared: ComputeShared) {
    this.clock = shared.clock;
    this.scheduler = shared.scheduler;
    this.latency = shared.latency;
    this.defaultLocation = shared.defaultLocation;
    this.defaultSubscriptionId = shared.defaultSubscriptionId;
    this.scaleSets = shared.scaleSets;
    this.instances = shared.instances;
    this.disks = shared.disks;
    this.snapshots = shared.snapshots;
    this.galleries = shared.galleries;
    this.images = shared.images;
    this.versions = shared.versions;
    this.listeners = shared.listeners;
  }

  /**
   * The version an image reference boots: a version id itself, or for a definition id the newest
   * Succeeded version not excluded from latest (Major.Minor.Patch compared numerically).
   */
  resolveGalleryVersion(imageReferenceId: string): VersionRecord | undefined {
    if (/\/versions\/[^/]+$/i.test(imageReferenceId)) {
      const version = this.versions.get(idKey(imageReferenceId));
      return version?.properties.provisioningState === 'Succeeded' ? version : undefined;
    }
    const definition = idKey(imageReferenceId);
    const candidates = [...this.versions.values()].filter(
      (version) =>
        idKey(version.imageId) === definition &&
        version.properties.provisioningState === 'Succeeded' &&
        optionalObjectAt(version.properties, 'publishingProfile')?.excludeFromLatest !== true,
    );
    const numbers = (name: string): number[] => name.split('.').map((part) => Number(part));
    candidates.sort((a, b) => {
      const [left, right] = [numbers(a.name), numbers(b.name)];
      for (let index = 0; index < 3; index++) {
        const difference = (left[index] ?? 0) - (right[index] ?? 0);
        if (difference !== 0) return difference;
      }
      return 0;
    });
    return candidates.at(-1);
  }

  /** Resource groups that hold a scale set, VM, disk, snapshot or gallery, with the first resource's location. */
  resourceGroupsInUse(): { subscriptionId: string; name: string; location: string }[] {
    const found = new Map<string, { subscriptionId: string; name: string; location: string }>();
    const records: { id: string; location: string }[] = [
      ...this.scaleSets.values(),
      ...this.instances.values(),
      ...this.disks.values(),
      ...this.snapshots.values(),
      ...this.galleries.values(),
    ];
    for (const record of records) {
      const match = /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\//i.exec(record.id);
      if (!match?.[1] || !match[2]) continue;
      const key = `${match[1]}/${match[2]}`.toLowerCase();
      if (!found.has(key))
        found.set(key, { subscriptionId: match[1], name: match[2], location: record.location });
    }
    return [...found.values()];
  }

  protected emit(event: ComputeEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  protected nowIso(): string {
    return this.clock.now().toISOString();
  }

  protected preempt(pending: PendingTransition | undefined, by: string): void {
    if (!pending) return;
    pending.cancel();
    pending.onComplete?.({
      status: 'Canceled',
      error: {
        code: 'OperationPreempted',
        message: `Operation '${pending.kind}' was preempted by a later '${by}' operation.`,
      },
    });
  }

  protected requireInstance(id: string): InstanceRecord {
    const record = this.instances.get(idKey(id));
    if (!record)
      throw new ComputeError(
        404,
        'NotFound',
        `The entity was not found in this Azure location. Instance '${id}'.`,
      );
    return record;
  }

  protected requireScaleSet(id: string): ScaleSetRecord {
    const record = this.scaleSets.get(idKey(id));
    if (!record) {
      throw new ComputeError(
        404,
        'ResourceNotFound',
        `The Resource 'Microsoft.Compute/virtualMachineScaleSets/${id.split('/').pop() ?? ''}' under resource group was not found.`,
      );
    }
    return record;
  }

  protected bootstrapExtensionsRemain(record: ScaleSetRecord): boolean {
    return this.extensionArray(record).some((extension) =>
      isBootstrapExtension(extension, record.bootstrapOverrides),
    );
  }

  protected scaleSetInfo(record: ScaleSetRecord): ScaleSetInfo {
    const profile = objectAt(record.properties, 'virtualMachineProfile');
    const imageReference = deepCopy(objectAt(profile, 'storageProfile', 'imageReference'));
    const upgrade = optionalObjectAt(record.properties, 'upgradePolicy') ?? {};
    const mode = upgrade.mode === 'Automatic' || upgrade.mode === 'Rolling' ? upgrade.mode : 'Manual';
    const customData = stringAt(profile, ['osProfile'], 'customData');
    const info: ScaleSetInfo = {
      id: record.id,
      subscriptionId: record.subscriptionId,
      resourceGroup: record.resourceGroup,
      name: record.name,
      location: record.location,
      orchestrationMode: record.properties.orchestrationMode === 'Flexible' ? 'Flexible' : 'Uniform',
      provisioningState: textOr(record.properties.provisioningState, 'Succeeded'),
      capacity: record.sku.capacity,
      imageReference,
      bootsFromGalleryImage: isGalleryImageReference(imageReference),
      extensions: this.extensionArray(record).map((extension) => {
        const properties = isObject(extension.properties) ? extension.properties : {};
        return {
          name: String(extension.name),
          publisher: textOr(properties.publisher, ''),
          type: textOr(properties.type, ''),
          bootstrap: isBootstrapExtension(extension, record.bootstrapOverrides),
          provisioningState: textOr(properties.provisioningState, 'Succeeded'),
        };
      }),
      bootstrapExtensionsRemain: this.bootstrapExtensionsRemain(record),
      upgradeMode: mode,
      automaticOSUpgrade:
        optionalObjectAt(upgrade, 'automaticOSUpgradePolicy')?.enableAutomaticOSUpgrade === true,
      ephemeralOsDisk:
        optionalObjectAt(profile, 'storageProfile', 'osDisk', 'diffDiskSettings') !== undefined,
      hyperVGeneration: record.hyperVGeneration,
      architecture: record.architecture,
      tags: { ...record.tags },
      modelVersion: record.modelVersion,
      etag: etagOf(record),
    };
    if (customData !== undefined) info.customData = customData;
    return info;
  }

  protected instanceInfo(record: InstanceRecord): InstanceInfo {
    const scaleSet = this.scaleSets.get(idKey(record.scaleSetId));
    const info: InstanceInfo = {
      id: record.id,
      scaleSetId: record.scaleSetId,
      orchestrationMode: record.mode,
      instanceId: record.instanceId,
      name: record.name,
      vmId: record.vmId,
      computerName: record.computerName,
      providerId: `azure://${record.id}`,
      location: record.location,
      powerState: record.powerState,
      provisioningState: record.provisioningState,
      ephemeralOsDisk: record.ephemeralPlacement !== undefined,
      imageReference: deepCopy(record.imageReference),
      bootsFromGalleryImage: isGalleryImageReference(record.imageReference),
      latestModelApplied: scaleSet ? scaleSet.modelVersion === record.modelVersion : true,
      timeCreated: record.timeCreated,
      dataDisks: deepCopy(record.dataDisks),
    };
    if (record.zone) info.zone = record.zone;
    if (record.osDiskId) info.osDiskId = record.osDiskId;
    return info;
  }

  protected extensionArray(record: ScaleSetRecord): JsonObject[] {
    const profile = objectAt(record.properties, 'virtualMachineProfile', 'extensionProfile');
    if (!Array.isArray(profile.extensions)) profile.extensions = [];
    return (profile.extensions as unknown[]).filter(isObject);
  }
}

/** The scale set's ARM etag as Compute renders it: a quoted decimal counter, e.g. `"3"`. */
export function etagOf(record: ScaleSetRecord): string {
  return `"${record.etag}"`;
}

export function outcomeOf(failure: FailureCheck | undefined): OperationOutcome {
  const error = failure?.();
  return error ? { status: 'Failed', error } : { status: 'Succeeded' };
}

export function compareInstances(a: InstanceRecord, b: InstanceRecord): number {
  if (a.mode === 'Uniform' && b.mode === 'Uniform') return Number(a.instanceId) - Number(b.instanceId);
  return a.name.localeCompare(b.name);
}

export function snapshotInfo(record: SnapshotRecord): SnapshotInfo {
  const { pending: _pending, content: _content, ...info } = record;
  return deepCopy(info);
}

export function versionSourceId(record: VersionRecord): string | undefined {
  const storage = optionalObjectAt(record.properties, 'storageProfile');
  if (!storage) return undefined;
  return stringAt(storage, ['osDiskImage', 'source'], 'id') ?? stringAt(storage, ['source'], 'id');
}

export function versionInfo(record: VersionRecord): ImageVersionInfo {
  const publishing = optionalObjectAt(record.properties, 'publishingProfile') ?? {};
  const info: ImageVersionInfo = {
    id: record.id,
    imageId: record.imageId,
    name: record.name,
    location: record.location,
    provisioningState: textOr(record.properties.provisioningState, 'Succeeded'),
    excludeFromLatest: publishing.excludeFromLatest === true,
    storageAccountType:
      typeof publishing.storageAccountType === 'string' ? publishing.storageAccountType : 'Standard_LRS',
    tags: { ...record.tags },
    replication: deepCopy(record.replication),
  };
  const source = versionSourceId(record);
  if (source) info.sourceId = source;
  return info;
}

export function stripReadOnly(properties: JsonObject): JsonObject {
  const copy = deepCopy(properties);
  delete copy.provisioningState;
  return copy;
}
