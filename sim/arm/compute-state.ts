/**
 * In-memory Microsoft.Compute world of the simulator: scale sets (Uniform and Flexible) and their
 * instances, OS disks, snapshots, galleries, image definitions and versions, with simulated-time
 * transitions. The ARM handler serves it over HTTP; the world drives it directly and listens to it.
 *
 * Public API (stable, the world codes against it):
 * - seeding: `addScaleSet`, `addGallery`, `setRegionCapabilities`, `setRunCommandHandler`
 * - queries: `getScaleSet`, `listScaleSets`, `getScaleSetModel` (customData included), `listInstances`,
 *   `getInstance`, `findInstanceByVmId`, `findInstanceByProviderId`, `findInstanceByComputerName`,
 *   `getDisk`, `listSnapshots`, `getSnapshot`, `getGallery`, `getImageDefinition`, `listImageVersions`,
 *   `getImageVersion`, `regionCapabilities`, `runCommandHistory`
 * - world-driven operations: `powerOffInstance` (cause 'guest' for a prep pod), `deallocateInstance`,
 *   `startInstance`, `restartInstance`, `scaleOut`, `deleteInstance`
 * - events: `subscribe(listener)` → instance power changes, instance created / deleted, model changes.
 * Long-running changes take an optional `onComplete` and `failure` check (asked when the change would
 * complete; the handler wires it to the fault injector's `<action>#lro`). A new power operation on an
 * instance preempts the pending one (Canceled, OperationPreempted).
 * All ids are ARM resource ids and compare case-insensitively. All time comes from the injected clock.
 */
import { createHash } from 'node:crypto';

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
}

export interface ExtensionInfo {
  name: string;
  publisher: string;
  type: string;
  bootstrap: boolean;
  provisioningState: string;
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
  | { type: 'instance-power-changed'; instance: InstanceInfo; previous: PowerState; cause: PowerCause }
  | {
      type: 'instance-created';
      instance: InstanceInfo;
      /** The model pointed at a gallery image when the instance was built. */
      bootsFromGalleryImage: boolean;
      /** Bootstrap extensions (CustomScript…) were still in the model when the instance was built. */
      bootstrapExtensionsRemain: boolean;
    }
  | { type: 'instance-deleted'; instance: InstanceInfo }
  | { type: 'scale-set-model-changed'; scaleSet: ScaleSetInfo };

export type ComputeListener = (event: ComputeEvent) => void;

export interface ComputeStateOptions {
  clock: SimClock;
  scheduler: Scheduler;
  latency: LatencyProfile;
  defaultLocation?: string;
  defaultSubscriptionId?: string;
}

interface PendingTransition {
  kind: string;
  cancel: () => void;
  onComplete?: Completion;
}

interface ScaleSetRecord {
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
  /** Not part of the VMSS model in ARM (it comes from the image); the disks and instance views report it. */
  hyperVGeneration: HyperVGeneration;
  architecture: 'x64' | 'Arm64';
  /** Seeded bootstrap flags by lower-cased extension name (else CustomScript types count as bootstrap). */
  bootstrapOverrides: Map<string, boolean>;
  uniqueId: string;
  timeCreated: string;
  pending?: PendingTransition;
}

interface InstanceRecord {
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
  osDiskId?: string;
  ephemeralPlacement?: string;
  hyperVGeneration: HyperVGeneration;
  osType: OsType;
  vmSize: string;
  adminUsername: string;
  timeCreated: string;
  pending?: PendingTransition;
}

interface DiskRecord extends DiskInfo {
  resourceKey: string;
}

interface SnapshotRecord extends SnapshotInfo {
  pending?: PendingTransition;
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
  pending?: PendingTransition;
}

const DEFAULT_SUBSCRIPTION = '00000000-0000-0000-0000-000000000000';
const CUSTOM_SCRIPT_TYPES = new Set(['customscript', 'customscriptextension']);

/** ARM ids are case-insensitive; every map is keyed by the lower-cased id. */
export function idKey(id: string): string {
  return id.replace(/\/+$/, '').toLowerCase();
}

/** A stable uuid-shaped id derived from a seed, so runs are reproducible. */
export function deterministicUuid(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(root: JsonObject, ...path: string[]): JsonObject {
  let current = root;
  for (const key of path) {
    const next = current[key];
    if (isObject(next)) {
      current = next;
    } else {
      const created: JsonObject = {};
      current[key] = created;
      current = created;
    }
  }
  return current;
}

/** The value when it is a string, else the fallback. */
export function textOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function optionalObjectAt(root: JsonObject, ...path: string[]): JsonObject | undefined {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return isObject(current) ? current : undefined;
}

function stringAt(root: JsonObject, path: string[], key: string): string | undefined {
  const value = optionalObjectAt(root, ...path)?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** Whether an imageReference points at a gallery image definition or version. */
export function isGalleryImageReference(imageReference: JsonObject): boolean {
  const id = imageReference.id;
  return typeof id === 'string' && /\/providers\/microsoft\.compute\/galleries\//i.test(id);
}

function isBootstrapExtension(extension: JsonObject, overrides: ReadonlyMap<string, boolean>): boolean {
  const properties = isObject(extension.properties) ? extension.properties : {};
  const override = overrides.get(textOr(extension.name, '').toLowerCase());
  if (override !== undefined) return override;
  const type = typeof properties.type === 'string' ? properties.type.toLowerCase() : '';
  return CUSTOM_SCRIPT_TYPES.has(type);
}

function powerDisplay(state: PowerState): string {
  return `VM ${state}`;
}

/** Parses `/subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Compute/{type}/{name}…` loosely. */
export function parseResourceId(
  id: string,
): { subscriptionId: string; resourceGroup: string; segments: string[] } | undefined {
  const match =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/(.+)$/i.exec(
      id.replace(/\/+$/, ''),
    );
  if (!match?.[1] || !match[2] || !match[3]) return undefined;
  return { subscriptionId: match[1], resourceGroup: match[2], segments: match[3].split('/') };
}

export class ComputeState {
  readonly clock: SimClock;
  readonly scheduler: Scheduler;
  readonly latency: LatencyProfile;
  readonly defaultLocation: string;
  readonly defaultSubscriptionId: string;

  private readonly scaleSets = new Map<string, ScaleSetRecord>();
  private readonly instances = new Map<string, InstanceRecord>();
  private readonly disks = new Map<string, DiskRecord>();
  private readonly snapshots = new Map<string, SnapshotRecord>();
  private readonly galleries = new Map<string, GalleryRecord>();
  private readonly images = new Map<string, ImageRecord>();
  private readonly versions = new Map<string, VersionRecord>();
  private readonly regions = new Map<string, RegionCapabilities>();
  private readonly listeners = new Set<ComputeListener>();
  private readonly runCommands: RunCommandRecord[] = [];
  private runCommandHandler: RunCommandHandler = () => ({ stdout: '', stderr: '' });

  constructor(options: ComputeStateOptions) {
    this.clock = options.clock;
    this.scheduler = options.scheduler;
    this.latency = options.latency;
    this.defaultLocation = options.defaultLocation ?? 'westeurope';
    this.defaultSubscriptionId = options.defaultSubscriptionId ?? DEFAULT_SUBSCRIPTION;
  }

  // ---------------------------------------------------------------- events

  /** Registers a listener for instance and model events; returns an unsubscribe function. */
  subscribe(listener: ComputeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: ComputeEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  private nowIso(): string {
    return this.clock.now().toISOString();
  }

  // ---------------------------------------------------------------- seeding

  /** Region capabilities (default: ZRS available everywhere). */
  setRegionCapabilities(location: string, capabilities: RegionCapabilities): void {
    this.regions.set(location.toLowerCase(), { ...capabilities });
  }

  regionCapabilities(location: string): RegionCapabilities {
    return this.regions.get(location.toLowerCase()) ?? { zrs: true };
  }

  /** What RunShellScript prints on an instance (and any side effect the world wants, e.g. power-off). */
  setRunCommandHandler(handler: RunCommandHandler): void {
    this.runCommandHandler = handler;
  }

  /** Creates a scale set with its instances (running unless seeded otherwise) and their OS disks. No events. */
  addScaleSet(seed: ScaleSetSeed): ScaleSetInfo {
    const subscriptionId = seed.subscriptionId ?? this.defaultSubscriptionId;
    const id = `/subscriptions/${subscriptionId}/resourceGroups/${seed.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${seed.name}`;
    if (this.scaleSets.has(idKey(id))) throw new Error(`adding scale set ${seed.name}: it exists already`);
    const mode = seed.orchestrationMode ?? 'Uniform';
    const ephemeral = seed.ephemeralOsDisk === true ? 'CacheDisk' : seed.ephemeralOsDisk || undefined;
    const osDisk: JsonObject = {
      createOption: 'FromImage',
      caching: ephemeral ? 'ReadOnly' : 'ReadWrite',
      osType: seed.osType ?? 'Linux',
      diskSizeGB: seed.osDiskSizeGB ?? 128,
      managedDisk: { storageAccountType: ephemeral ? 'Standard_LRS' : 'Premium_LRS' },
    };
    if (ephemeral) osDisk.diffDiskSettings = { option: 'Local', placement: ephemeral };
    const extensions = (seed.extensions ?? []).map((extension) => ({
      name: extension.name,
      properties: {
        publisher: extension.publisher,
        type: extension.type,
        typeHandlerVersion: extension.typeHandlerVersion ?? '2.1',
        autoUpgradeMinorVersion: true,
        settings: extension.settings ?? {},
        provisioningState: 'Succeeded',
      },
    }));
    const prefix = seed.computerNamePrefix ?? (mode === 'Uniform' ? `${seed.name}` : seed.name.slice(0, 9));
    const properties: JsonObject = {
      orchestrationMode: mode,
      singlePlacementGroup: mode === 'Uniform',
      upgradePolicy: {
        mode: seed.upgradePolicy?.mode ?? 'Manual',
        automaticOSUpgradePolicy: {
          enableAutomaticOSUpgrade: seed.upgradePolicy?.enableAutomaticOSUpgrade ?? false,
        },
      },
      virtualMachineProfile: {
        osProfile: {
          computerNamePrefix: prefix,
          adminUsername: seed.adminUsername ?? 'azureuser',
          ...(seed.customData === undefined ? {} : { customData: seed.customData }),
          linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [] } },
        },
        storageProfile: {
          imageReference: deepCopy(
            seed.imageReference ?? {
              publisher: 'Canonical',
              offer: 'ubuntu-24_04-lts',
              sku: 'server',
              version: 'latest',
            },
          ),
          osDisk,
        },
        networkProfile: {
          networkInterfaceConfigurations: [
            {
              name: `${seed.name}-nic`,
              properties: {
                primary: true,
                ipConfigurations: [
                  {
                    name: 'ipconfig1',
                    properties: {
                      subnet: {
                        id: `/subscriptions/${subscriptionId}/resourceGroups/${seed.resourceGroup}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
                      },
                    },
                  },
                ],
              },
            },
          ],
        },
        extensionProfile: { extensions },
        ...(seed.securityType && seed.securityType !== 'Standard'
          ? {
              securityProfile: {
                securityType: seed.securityType,
                uefiSettings: { secureBootEnabled: true, vTpmEnabled: true },
              },
            }
          : {}),
      },
      provisioningState: 'Succeeded',
      uniqueId: deterministicUuid(`vmss:${idKey(id)}`),
      timeCreated: this.nowIso(),
    };
    const count = typeof seed.instances === 'number' ? seed.instances : (seed.instances?.length ?? 0);
    const record: ScaleSetRecord = {
      id,
      subscriptionId,
      resourceGroup: seed.resourceGroup,
      name: seed.name,
      location: seed.location ?? this.defaultLocation,
      tags: { ...(seed.tags ?? {}) },
      sku: { name: seed.skuName ?? 'Standard_D4s_v5', tier: 'Standard', capacity: 0 },
      properties,
      nextInstanceNumber: 0,
      modelVersion: 1,
      hyperVGeneration: seed.hyperVGeneration ?? 'V2',
      architecture: seed.architecture ?? 'x64',
      bootstrapOverrides: new Map(
        (seed.extensions ?? [])
          .filter((extension) => extension.bootstrap !== undefined)
          .map((extension) => [extension.name.toLowerCase(), extension.bootstrap === true]),
      ),
      uniqueId: deterministicUuid(`vmss:${idKey(id)}`),
      timeCreated: this.nowIso(),
    };
    if (seed.zones) record.zones = [...seed.zones];
    this.scaleSets.set(idKey(id), record);
    for (let index = 0; index < count; index++) {
      const instanceSeed = Array.isArray(seed.instances) ? seed.instances[index] : undefined;
      this.createInstanceRecord(record, instanceSeed?.powerState ?? 'running', instanceSeed);
    }
    return this.scaleSetInfo(record);
  }

  /** Creates a gallery with image definitions and versions (all Succeeded unless seeded otherwise). */
  addGallery(seed: GallerySeed): GalleryRecord {
    const subscriptionId = seed.subscriptionId ?? this.defaultSubscriptionId;
    const location = seed.location ?? this.defaultLocation;
    const gallery = this.putGallery(
      subscriptionId,
      seed.resourceGroup,
      seed.name,
      { location, tags: seed.tags ?? {}, properties: {} },
      undefined,
    );
    for (const image of seed.images ?? []) {
      this.putImageDefinition(
        gallery.id,
        image.name,
        {
          location,
          tags: image.tags ?? {},
          properties: {
            osType: image.osType ?? 'Linux',
            osState: image.osState ?? 'Generalized',
            hyperVGeneration: image.hyperVGeneration ?? 'V2',
            architecture: image.architecture ?? 'x64',
            identifier: image.identifier ?? {
              publisher: 'VMSS-Prototype-Pattern',
              offer: seed.resourceGroup,
              sku: image.name,
            },
            ...(image.features ? { features: image.features } : {}),
          },
        },
        undefined,
      );
      const imageId = `${gallery.id}/images/${image.name}`;
      for (const version of image.versions ?? []) {
        const record: VersionRecord = {
          id: `${imageId}/versions/${version.name}`,
          imageId,
          name: version.name,
          location,
          tags: { ...(version.tags ?? {}) },
          properties: {
            publishingProfile: {
              targetRegions: [
                {
                  name: location,
                  regionalReplicaCount: 1,
                  storageAccountType: version.storageAccountType ?? 'Standard_LRS',
                },
              ],
              replicaCount: 1,
              storageAccountType: version.storageAccountType ?? 'Standard_LRS',
              excludeFromLatest: version.excludeFromLatest ?? false,
              publishedDate: this.nowIso(),
            },
            storageProfile: version.sourceId ? { osDiskImage: { source: { id: version.sourceId } } } : {},
            provisioningState: version.provisioningState ?? 'Succeeded',
          },
          replication: [
            {
              region: location,
              state:
                version.provisioningState === 'Creating'
                  ? 'Replicating'
                  : version.provisioningState === 'Failed'
                    ? 'Failed'
                    : 'Completed',
              progress: version.provisioningState === 'Creating' ? 0 : 100,
            },
          ],
        };
        this.versions.set(idKey(record.id), record);
      }
    }
    return deepCopy(gallery);
  }

  // ---------------------------------------------------------------- queries

  getScaleSet(id: string): ScaleSetInfo | undefined {
    const record = this.scaleSets.get(idKey(id));
    return record ? this.scaleSetInfo(record) : undefined;
  }

  listScaleSets(): ScaleSetInfo[] {
    return [...this.scaleSets.values()].map((record) => this.scaleSetInfo(record));
  }

  /** The full stored model (ARM `properties`, customData included), a deep copy. */
  getScaleSetModel(id: string): JsonObject | undefined {
    const record = this.scaleSets.get(idKey(id));
    return record ? deepCopy(record.properties) : undefined;
  }

  /** Instances of a scale set, Uniform by numeric instance id, Flexible by name. */
  listInstances(scaleSetId: string): InstanceInfo[] {
    const key = idKey(scaleSetId);
    return [...this.instances.values()]
      .filter((instance) => idKey(instance.scaleSetId) === key)
      .sort(compareInstances)
      .map((instance) => this.instanceInfo(instance));
  }

  getInstance(id: string): InstanceInfo | undefined {
    const record = this.instances.get(idKey(id));
    return record ? this.instanceInfo(record) : undefined;
  }

  findInstanceByVmId(vmId: string): InstanceInfo | undefined {
    const wanted = vmId.toLowerCase();
    for (const record of this.instances.values()) {
      if (record.vmId === wanted) return this.instanceInfo(record);
    }
    return undefined;
  }

  /** Accepts a node's `spec.providerID` (`azure:///subscriptions/…`) or a plain resource id. */
  findInstanceByProviderId(providerId: string): InstanceInfo | undefined {
    return this.getInstance(providerId.replace(/^azure:\/\//i, ''));
  }

  findInstanceByComputerName(computerName: string): InstanceInfo | undefined {
    const wanted = computerName.toLowerCase();
    for (const record of this.instances.values()) {
      if (record.computerName.toLowerCase() === wanted) return this.instanceInfo(record);
    }
    return undefined;
  }

  getDisk(id: string): DiskInfo | undefined {
    const record = this.disks.get(idKey(id));
    if (!record) return undefined;
    const { resourceKey: _key, ...info } = record;
    return deepCopy(info);
  }

  listSnapshots(resourceGroup?: string): SnapshotInfo[] {
    return [...this.snapshots.values()]
      .filter(
        (snapshot) => !resourceGroup || snapshot.resourceGroup.toLowerCase() === resourceGroup.toLowerCase(),
      )
      .map((snapshot) => snapshotInfo(snapshot));
  }

  getSnapshot(id: string): SnapshotInfo | undefined {
    const record = this.snapshots.get(idKey(id));
    return record ? snapshotInfo(record) : undefined;
  }

  getGallery(id: string): GalleryRecord | undefined {
    const record = this.galleries.get(idKey(id));
    return record ? deepCopy(record) : undefined;
  }

  listGalleries(subscriptionId: string, resourceGroup: string): GalleryRecord[] {
    const prefix = idKey(`/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/`);
    return [...this.galleries.values()]
      .filter((gallery) => idKey(gallery.id).startsWith(prefix))
      .map((g) => deepCopy(g));
  }

  getImageDefinition(id: string): ImageRecord | undefined {
    const record = this.images.get(idKey(id));
    return record ? deepCopy(record) : undefined;
  }

  listImageDefinitions(galleryId: string): ImageRecord[] {
    const key = idKey(galleryId);
    return [...this.images.values()]
      .filter((image) => idKey(image.galleryId) === key)
      .map((image) => deepCopy(image));
  }

  getImageVersionRecord(id: string): VersionRecord | undefined {
    const record = this.versions.get(idKey(id));
    if (!record) return undefined;
    const { pending: _pending, ...rest } = record;
    return deepCopy(rest);
  }

  getImageVersion(id: string): ImageVersionInfo | undefined {
    const record = this.versions.get(idKey(id));
    return record ? versionInfo(record) : undefined;
  }

  /** Versions of one image definition, in creation order. */
  listImageVersions(imageId: string): ImageVersionInfo[] {
    const key = idKey(imageId);
    return [...this.versions.values()]
      .filter((version) => idKey(version.imageId) === key)
      .map((v) => versionInfo(v));
  }

  listImageVersionRecords(imageId: string): VersionRecord[] {
    const key = idKey(imageId);
    return [...this.versions.values()]
      .filter((version) => idKey(version.imageId) === key)
      .map(({ pending: _pending, ...rest }) => deepCopy(rest));
  }

  runCommandHistory(): RunCommandRecord[] {
    return deepCopy(this.runCommands);
  }

  // ---------------------------------------------------------------- instance power

  /**
   * Powers an instance off (API call or guest shutdown): `stopping`, then `stopped` after
   * `instanceStopSeconds`. A stopped or deallocated instance is left as it is. A pending transition
   * of the instance is preempted (its completion reports Canceled/OperationPreempted).
   */
  powerOffInstance(id: string, options: PowerOptions & { skipShutdown?: boolean } = {}): void {
    const record = this.requireInstance(id);
    if (
      record.powerState === 'stopped' ||
      record.powerState === 'deallocated' ||
      record.powerState === 'deallocating'
    ) {
      options.onComplete?.({ status: 'Succeeded' });
      return;
    }
    this.transition(record, 'powerOff', 'stopping', 'stopped', this.latency.instanceStopSeconds, options);
  }

  /** Deallocates an instance: `deallocating`, then `deallocated` after `instanceDeallocateSeconds`. */
  deallocateInstance(id: string, options: PowerOptions = {}): void {
    const record = this.requireInstance(id);
    if (record.ephemeralPlacement) {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Operation 'deallocate' is not supported for VMs or VM Scale Set instances with ephemeral OS disks.`,
      );
    }
    if (record.powerState === 'deallocated') {
      options.onComplete?.({ status: 'Succeeded' });
      return;
    }
    this.transition(
      record,
      'deallocate',
      'deallocating',
      'deallocated',
      this.latency.instanceDeallocateSeconds,
      options,
    );
  }

  /** Starts a stopped or deallocated instance: `starting`, then `running` after `instanceStartSeconds`. */
  startInstance(id: string, options: PowerOptions = {}): void {
    const record = this.requireInstance(id);
    if (record.powerState === 'running') {
      options.onComplete?.({ status: 'Succeeded' });
      return;
    }
    this.transition(record, 'start', 'starting', 'running', this.latency.instanceStartSeconds, options);
  }

  /** Restarts a running instance (goes through `starting`); refused when the instance is not running. */
  restartInstance(id: string, options: PowerOptions = {}): void {
    const record = this.requireInstance(id);
    if (record.powerState !== 'running' && record.powerState !== 'starting') {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Operation 'restart' is not allowed on VM '${record.name}' since the VM is ${record.powerState}.`,
      );
    }
    this.transition(record, 'restart', 'starting', 'running', this.latency.instanceStartSeconds, options);
  }

  private transition(
    record: InstanceRecord,
    kind: string,
    during: PowerState,
    target: PowerState,
    seconds: number,
    options: PowerOptions,
  ): void {
    const cause = options.cause ?? 'api';
    const onComplete = options.onComplete;
    this.preempt(record.pending, kind);
    record.pending = undefined;
    const before = record.powerState;
    this.setPower(record, during, cause);
    const pending: PendingTransition = { kind, cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(seconds, `${kind} ${record.name}`, () => {
      if (record.pending !== pending) return;
      record.pending = undefined;
      const error = options.failure?.();
      if (error) {
        this.setPower(record, before, cause);
        onComplete?.({ status: 'Failed', error });
        return;
      }
      record.provisioningState = 'Succeeded';
      this.setPower(record, target, cause);
      onComplete?.({ status: 'Succeeded' });
    });
    record.pending = pending;
  }

  private preempt(pending: PendingTransition | undefined, by: string): void {
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

  private setPower(record: InstanceRecord, state: PowerState, cause: PowerCause): void {
    const previous = record.powerState;
    if (previous === state) return;
    record.powerState = state;
    const disk = record.osDiskId ? this.disks.get(idKey(record.osDiskId)) : undefined;
    if (disk) disk.managedBy = record.id;
    this.emit({ type: 'instance-power-changed', instance: this.instanceInfo(record), previous, cause });
  }

  // ---------------------------------------------------------------- instance lifecycle

  /**
   * Adds `count` instances built from the current model. Each is `Creating`/`starting` and turns
   * `running` after `instanceStartSeconds`; `instance-created` fires at once so the world can start
   * the node's join clock.
   */
  scaleOut(scaleSetId: string, count: number): InstanceInfo[] {
    const record = this.requireScaleSet(scaleSetId);
    const created: InstanceInfo[] = [];
    for (let index = 0; index < count; index++) {
      const instance = this.createInstanceRecord(record, 'starting', undefined);
      instance.provisioningState = 'Creating';
      const info = this.instanceInfo(instance);
      created.push(info);
      this.emit({
        type: 'instance-created',
        instance: info,
        bootsFromGalleryImage: info.bootsFromGalleryImage,
        bootstrapExtensionsRemain: this.bootstrapExtensionsRemain(record),
      });
      const pending: PendingTransition = { kind: 'create', cancel: () => undefined };
      pending.cancel = this.scheduler.after(
        this.latency.instanceStartSeconds,
        `create ${instance.name}`,
        () => {
          if (instance.pending !== pending) return;
          instance.pending = undefined;
          instance.provisioningState = 'Succeeded';
          this.setPower(instance, 'running', 'world');
        },
      );
      instance.pending = pending;
    }
    return created;
  }

  /** Removes an instance and its OS disk at once (the world's "node deleted mid-run"). */
  deleteInstance(id: string): void {
    const record = this.requireInstance(id);
    this.preempt(record.pending, 'delete');
    record.pending = undefined;
    const info = this.instanceInfo(record);
    this.instances.delete(idKey(id));
    if (record.osDiskId) this.disks.delete(idKey(record.osDiskId));
    const scaleSet = this.scaleSets.get(idKey(record.scaleSetId));
    if (scaleSet) scaleSet.sku.capacity = Math.max(0, scaleSet.sku.capacity - 1);
    this.emit({ type: 'instance-deleted', instance: info });
  }

  private createInstanceRecord(
    scaleSet: ScaleSetRecord,
    powerState: PowerState,
    seed: InstanceSeed | undefined,
  ): InstanceRecord {
    const number = scaleSet.nextInstanceNumber++;
    const profile = objectAt(scaleSet.properties, 'virtualMachineProfile');
    const prefix = stringAt(profile, ['osProfile'], 'computerNamePrefix') ?? scaleSet.name;
    const mode = scaleSet.properties.orchestrationMode === 'Flexible' ? 'Flexible' : 'Uniform';
    const suffixHex = createHash('sha256')
      .update(`${idKey(scaleSet.id)}#${number}`)
      .digest('hex');
    const name =
      seed?.name ??
      (mode === 'Uniform' ? `${scaleSet.name}_${number}` : `${scaleSet.name}_${suffixHex.slice(0, 8)}`);
    const id =
      mode === 'Uniform'
        ? `${scaleSet.id}/virtualMachines/${number}`
        : `/subscriptions/${scaleSet.subscriptionId}/resourceGroups/${scaleSet.resourceGroup}/providers/Microsoft.Compute/virtualMachines/${name}`;
    if (this.instances.has(idKey(id))) throw new Error(`creating instance ${name}: it exists already`);
    const computerName =
      mode === 'Uniform'
        ? `${prefix}${number.toString(36).padStart(6, '0')}`
        : `${prefix}${suffixHex.slice(8, 14)}`;
    const osDisk = objectAt(profile, 'storageProfile', 'osDisk');
    const ephemeral = optionalObjectAt(osDisk, 'diffDiskSettings');
    const hyperV = scaleSet.hyperVGeneration;
    const osType = osDisk.osType === 'Windows' ? 'Windows' : 'Linux';
    const zones = scaleSet.zones ?? [];
    const zone = seed?.zone ?? (zones.length > 0 ? zones[number % zones.length] : undefined);
    const record: InstanceRecord = {
      id,
      scaleSetId: scaleSet.id,
      mode,
      instanceId: mode === 'Uniform' ? String(number) : name,
      name,
      vmId: deterministicUuid(`vm:${idKey(id)}`),
      computerName,
      location: scaleSet.location,
      powerState,
      provisioningState: 'Succeeded',
      modelVersion: scaleSet.modelVersion,
      imageReference: deepCopy(objectAt(profile, 'storageProfile', 'imageReference')),
      hyperVGeneration: hyperV,
      osType,
      vmSize: scaleSet.sku.name,
      adminUsername: stringAt(profile, ['osProfile'], 'adminUsername') ?? 'azureuser',
      timeCreated: this.nowIso(),
    };
    if (zone) record.zone = zone;
    if (ephemeral) {
      record.ephemeralPlacement = typeof ephemeral.placement === 'string' ? ephemeral.placement : 'CacheDisk';
    } else {
      const diskName = `${name}_OsDisk_1_${suffixHex.slice(14, 46)}`;
      const diskId = `/subscriptions/${scaleSet.subscriptionId}/resourceGroups/${scaleSet.resourceGroup}/providers/Microsoft.Compute/disks/${diskName}`;
      record.osDiskId = diskId;
      const disk: DiskRecord = {
        resourceKey: idKey(diskId),
        id: diskId,
        name: diskName,
        resourceGroup: scaleSet.resourceGroup,
        location: scaleSet.location,
        diskSizeGB: typeof osDisk.diskSizeGB === 'number' ? osDisk.diskSizeGB : 128,
        hyperVGeneration: hyperV,
        osType,
        managedBy: id,
        skuName: stringAt(osDisk, ['managedDisk'], 'storageAccountType') ?? 'Premium_LRS',
        uniqueId: deterministicUuid(`disk:${idKey(diskId)}`),
        timeCreated: this.nowIso(),
      };
      if (zone) disk.zone = zone;
      this.disks.set(idKey(diskId), disk);
    }
    this.instances.set(idKey(id), record);
    scaleSet.sku.capacity += 1;
    return record;
  }

  // ---------------------------------------------------------------- scale set model (used by the ARM handler)

  /**
   * Replaces the stored model after a PUT/PATCH: `Updating` for `scaleSetUpdateSeconds`, then
   * `Succeeded`. A changed `virtualMachineProfile` bumps the model version, so existing instances
   * report `latestModelApplied: false`. A larger `capacity` scales out. A `failure` ends the
   * operation Failed but keeps the new model (ARM has reported failure for updates that worked).
   */
  replaceScaleSet(
    id: string,
    next: { properties: JsonObject; tags: Record<string, string>; capacity?: number },
    onComplete?: Completion,
    failure?: FailureCheck,
  ): void {
    const record = this.requireScaleSet(id);
    const profileChanged =
      JSON.stringify(record.properties.virtualMachineProfile) !==
      JSON.stringify(next.properties.virtualMachineProfile);
    record.properties = deepCopy(next.properties);
    record.tags = { ...next.tags };
    if (profileChanged) record.modelVersion += 1;
    this.preempt(record.pending, 'update');
    record.properties.provisioningState = 'Updating';
    const pending: PendingTransition = { kind: 'update', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(this.latency.scaleSetUpdateSeconds, `update ${record.name}`, () => {
      if (record.pending !== pending) return;
      record.pending = undefined;
      record.properties.provisioningState = 'Succeeded';
      const error = failure?.();
      onComplete?.(error ? { status: 'Failed', error } : { status: 'Succeeded' });
    });
    record.pending = pending;
    if (next.capacity !== undefined && next.capacity > record.sku.capacity) {
      this.scaleOut(id, next.capacity - record.sku.capacity);
    } else if (next.capacity !== undefined && next.capacity < record.sku.capacity) {
      const surplus = this.listInstances(id).slice(next.capacity);
      for (const instance of surplus) this.deleteInstance(instance.id);
    }
    this.emit({ type: 'scale-set-model-changed', scaleSet: this.scaleSetInfo(record) });
  }

  /** Raw ARM view of a scale set for rendering: sku, zones, tags, properties (customData included). */
  scaleSetResource(id: string):
    | {
        id: string;
        name: string;
        location: string;
        tags: Record<string, string>;
        sku: JsonObject;
        zones?: string[];
        properties: JsonObject;
      }
    | undefined {
    const record = this.scaleSets.get(idKey(id));
    if (!record) return undefined;
    return deepCopy({
      id: record.id,
      name: record.name,
      location: record.location,
      tags: record.tags,
      sku: record.sku,
      ...(record.zones ? { zones: record.zones } : {}),
      properties: record.properties,
    });
  }

  listScaleSetIds(subscriptionId: string, resourceGroup: string): string[] {
    const prefix = idKey(`/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/`);
    return [...this.scaleSets.values()].filter((s) => idKey(s.id).startsWith(prefix)).map((s) => s.id);
  }

  /** Flexible VMs in a resource group, for `virtualMachines.list`. */
  listVirtualMachineIds(subscriptionId: string, resourceGroup: string): string[] {
    const prefix = idKey(
      `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/`,
    );
    return [...this.instances.values()]
      .filter((instance) => idKey(instance.id).startsWith(prefix))
      .sort(compareInstances)
      .map((instance) => instance.id);
  }

  /**
   * Deletes a scale-set extension from the model after a deterministic 13–67 s (per the latency
   * profile). On `failure` the extension stays, with provisioningState Failed.
   */
  deleteExtension(scaleSetId: string, name: string, onComplete?: Completion, failure?: FailureCheck): void {
    const record = this.requireScaleSet(scaleSetId);
    const extensions = this.extensionArray(record);
    const extension = extensions.find(
      (candidate) => textOr(candidate.name, '').toLowerCase() === name.toLowerCase(),
    );
    if (!extension) {
      onComplete?.({ status: 'Succeeded' });
      return;
    }
    const properties = objectAt(extension, 'properties');
    properties.provisioningState = 'Deleting';
    this.scheduler.after(this.extensionDeleteSeconds(name), `delete extension ${name}`, () => {
      const error = failure?.();
      if (error) {
        // The extension stays in the model, marked Failed, as after a failed delete in Azure.
        properties.provisioningState = 'Failed';
        onComplete?.({ status: 'Failed', error });
        return;
      }
      // Splice the model's own array: a PUT may have replaced it since, then there is nothing to remove.
      const profile = objectAt(record.properties, 'virtualMachineProfile', 'extensionProfile');
      const current: unknown[] = Array.isArray(profile.extensions) ? (profile.extensions as unknown[]) : [];
      const index = current.findIndex(
        (candidate) => isObject(candidate) && textOr(candidate.name, '').toLowerCase() === name.toLowerCase(),
      );
      if (index >= 0) {
        current.splice(index, 1);
        record.modelVersion += 1;
        this.emit({ type: 'scale-set-model-changed', scaleSet: this.scaleSetInfo(record) });
      }
      onComplete?.({ status: 'Succeeded' });
    });
  }

  /** Deterministic extension delete time within the profile's bounds, keyed by the extension name. */
  extensionDeleteSeconds(name: string): number {
    const [low, high] = this.latency.extensionDeleteSeconds;
    const hash = createHash('sha256').update(name.toLowerCase()).digest();
    return low + (hash.readUInt32BE(0) % (high - low + 1));
  }

  private extensionArray(record: ScaleSetRecord): JsonObject[] {
    const profile = objectAt(record.properties, 'virtualMachineProfile', 'extensionProfile');
    if (!Array.isArray(profile.extensions)) profile.extensions = [];
    return (profile.extensions as unknown[]).filter(isObject);
  }

  // ---------------------------------------------------------------- run command

  /**
   * Runs a RunShellScript on a running instance; completes after `runCommandSeconds` with the
   * handler's output. The script is recorded even when the command then fails.
   */
  runCommand(
    instanceId: string,
    input: { commandId: string; script: string[]; parameters: { name: string; value: string }[] },
    onComplete: (outcome: OperationOutcome, output?: RunCommandOutput) => void,
    failure?: FailureCheck,
  ): void {
    const record = this.requireInstance(instanceId);
    if (record.powerState !== 'running') {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        'The operation requires the VM to be running (or set to run).',
      );
    }
    const entry: RunCommandRecord = { instanceId: record.id, ...deepCopy(input), at: this.nowIso() };
    this.runCommands.push(entry);
    this.scheduler.after(this.latency.runCommandSeconds, `runCommand ${record.name}`, () => {
      const current = this.instances.get(idKey(record.id));
      if (!current) {
        onComplete({
          status: 'Failed',
          error: { code: 'NotFound', message: `The VM '${record.name}' was deleted.` },
        });
        return;
      }
      // A failed run command never reached the guest: the world's handler does not run.
      const error = failure?.();
      if (error) {
        onComplete({ status: 'Failed', error });
        return;
      }
      const output = this.runCommandHandler(this.instanceInfo(current), deepCopy(entry));
      onComplete({ status: 'Succeeded' }, output);
    });
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * Creates a snapshot copying a managed disk (or another snapshot). Refuses a missing source and
   * an ephemeral disk. Succeeds after `snapshotCreateSeconds`; records whether the VM was stopped.
   */
  createSnapshot(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    input: {
      location: string;
      sourceResourceId: string;
      incremental: boolean;
      skuName?: string;
      tags: Record<string, string>;
    },
    onComplete?: Completion,
    failure?: FailureCheck,
  ): SnapshotInfo {
    const id = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/snapshots/${name}`;
    const existing = this.snapshots.get(idKey(id));
    if (existing) {
      if (idKey(existing.sourceResourceId) !== idKey(input.sourceResourceId)) {
        throw new ComputeError(
          409,
          'PropertyChangeNotAllowed',
          "Changing property 'sourceResourceId' is not allowed.",
          [
            {
              code: 'PropertyChangeNotAllowed',
              target: 'sourceResourceId',
              message: "Changing property 'sourceResourceId' is not allowed.",
            },
          ],
        );
      }
      existing.tags = { ...input.tags };
      const pending = existing.pending;
      if (pending && onComplete) {
        // A repeated PUT while the copy runs completes with it (idempotent retries).
        const earlier = pending.onComplete;
        pending.onComplete = (outcome) => {
          earlier?.(outcome);
          onComplete(outcome);
        };
      } else if (existing.provisioningState === 'Failed') {
        onComplete?.({
          status: 'Failed',
          error: { code: 'SnapshotFailed', message: `Snapshot ${name} is in a failed state.` },
        });
      } else {
        onComplete?.({ status: 'Succeeded' });
      }
      return snapshotInfo(existing);
    }
    const sourceDisk = this.disks.get(idKey(input.sourceResourceId));
    const sourceSnapshot = this.snapshots.get(idKey(input.sourceResourceId));
    if (!sourceDisk && !sourceSnapshot) {
      throw new ComputeError(404, 'NotFound', `Resource '${input.sourceResourceId}' was not found.`);
    }
    const instance = sourceDisk?.managedBy ? this.instances.get(idKey(sourceDisk.managedBy)) : undefined;
    const record: SnapshotRecord = {
      id,
      name,
      resourceGroup,
      location: input.location,
      tags: { ...input.tags },
      sourceResourceId: sourceDisk?.id ?? sourceSnapshot?.id ?? input.sourceResourceId,
      incremental: input.incremental,
      skuName: input.skuName ?? (input.incremental ? 'Standard_ZRS' : 'Standard_LRS'),
      diskSizeGB: sourceDisk?.diskSizeGB ?? sourceSnapshot?.diskSizeGB ?? 128,
      hyperVGeneration: sourceDisk?.hyperVGeneration ?? sourceSnapshot?.hyperVGeneration ?? 'V2',
      osType: sourceDisk?.osType ?? sourceSnapshot?.osType ?? 'Linux',
      provisioningState: 'Creating',
      sourceVmStopped: instance
        ? instance.powerState === 'stopped' || instance.powerState === 'deallocated'
        : true,
      uniqueId: deterministicUuid(`snapshot:${idKey(id)}`),
      timeCreated: this.nowIso(),
    };
    this.snapshots.set(idKey(id), record);
    const pending: PendingTransition = { kind: 'snapshot', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(this.latency.snapshotCreateSeconds, `snapshot ${name}`, () => {
      if (record.pending !== pending) return;
      record.pending = undefined;
      const error = failure?.();
      record.provisioningState = error ? 'Failed' : 'Succeeded';
      pending.onComplete?.(error ? { status: 'Failed', error } : { status: 'Succeeded' });
    });
    record.pending = pending;
    return snapshotInfo(record);
  }

  /**
   * Deletes a snapshot after `snapshotDeleteSeconds` (a pending creation is preempted); refused while
   * an image version is being built from it. On `failure` the snapshot stays.
   */
  deleteSnapshot(id: string, onComplete?: Completion, failure?: FailureCheck): boolean {
    const record = this.snapshots.get(idKey(id));
    if (!record) return false;
    const user = [...this.versions.values()].find(
      (version) =>
        version.properties.provisioningState === 'Creating' &&
        idKey(versionSourceId(version) ?? '') === idKey(id),
    );
    if (user) {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Snapshot ${record.name} is in use by gallery image version '${user.id}' that is being created.`,
      );
    }
    this.preempt(record.pending, 'delete');
    record.pending = undefined;
    const before = record.provisioningState;
    record.provisioningState = 'Deleting';
    this.scheduler.after(this.latency.snapshotDeleteSeconds, `delete snapshot ${record.name}`, () => {
      const error = failure?.();
      if (error) {
        record.provisioningState = before === 'Creating' ? 'Failed' : before;
        onComplete?.({ status: 'Failed', error });
        return;
      }
      this.snapshots.delete(idKey(id));
      onComplete?.({ status: 'Succeeded' });
    });
    return true;
  }

  // ---------------------------------------------------------------- galleries

  /** Creates or updates a gallery (Succeeded after `galleryCreateSeconds` when new). */
  putGallery(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    body: { location: string; tags: Record<string, string>; properties: JsonObject },
    onComplete: Completion | undefined,
    failure?: FailureCheck,
  ): GalleryRecord {
    const id = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/galleries/${name}`;
    const existing = this.galleries.get(idKey(id));
    if (existing) {
      existing.tags = { ...body.tags };
      existing.properties = {
        ...existing.properties,
        ...stripReadOnly(body.properties),
        provisioningState: 'Succeeded',
      };
      onComplete?.(outcomeOf(failure));
      return deepCopy(existing);
    }
    const record: GalleryRecord = {
      id,
      subscriptionId,
      resourceGroup,
      name,
      location: body.location,
      tags: { ...body.tags },
      properties: {
        ...stripReadOnly(body.properties),
        identifier: { uniqueName: `${subscriptionId}-${name.toUpperCase()}` },
        provisioningState: onComplete ? 'Creating' : 'Succeeded',
      },
    };
    this.galleries.set(idKey(id), record);
    if (onComplete) {
      this.scheduler.after(this.latency.galleryCreateSeconds, `gallery ${name}`, () => {
        const outcome = outcomeOf(failure);
        record.properties.provisioningState = outcome.status;
        onComplete(outcome);
      });
    }
    return deepCopy(record);
  }

  /**
   * Creates or updates an image definition. Immutable properties (osType, osState, hyperVGeneration,
   * identifier, architecture, features without allowUpdateImage) refuse a change like ARM does.
   */
  putImageDefinition(
    galleryId: string,
    name: string,
    body: { location: string; tags: Record<string, string>; properties: JsonObject },
    onComplete: Completion | undefined,
    failure?: FailureCheck,
  ): ImageRecord {
    const gallery = this.galleries.get(idKey(galleryId));
    if (!gallery)
      throw new ComputeError(
        404,
        'ParentResourceNotFound',
        `Can not perform requested operation on nested resource. Parent resource '${galleryId.split('/').pop() ?? ''}' not found.`,
      );
    const id = `${gallery.id}/images/${name}`;
    const existing = this.images.get(idKey(id));
    const properties = stripReadOnly(body.properties);
    if (existing) {
      const allowUpdate = properties.allowUpdateImage === true;
      for (const key of ['osType', 'osState', 'hyperVGeneration', 'identifier', 'architecture', 'features']) {
        if (key === 'features' && allowUpdate) continue;
        const before = normalizeImmutable(key, existing.properties[key]);
        const after = normalizeImmutable(key, properties[key]);
        if (after !== undefined && before !== after) {
          const message = `Changing property 'galleryImage.properties.${key}' is not allowed.`;
          throw new ComputeError(409, 'PropertyChangeNotAllowed', message, [
            { code: 'PropertyChangeNotAllowed', target: `galleryImage.properties.${key}`, message },
          ]);
        }
      }
      existing.tags = { ...body.tags };
      existing.properties = { ...existing.properties, ...properties, provisioningState: 'Succeeded' };
      onComplete?.(outcomeOf(failure));
      return deepCopy(existing);
    }
    const record: ImageRecord = {
      id,
      galleryId: gallery.id,
      name,
      location: body.location,
      tags: { ...body.tags },
      properties: {
        hyperVGeneration: 'V1',
        architecture: 'x64',
        ...properties,
        provisioningState: onComplete ? 'Creating' : 'Succeeded',
      },
    };
    this.images.set(idKey(id), record);
    if (onComplete) {
      this.scheduler.after(this.latency.imageDefinitionCreateSeconds, `image ${name}`, () => {
        const outcome = outcomeOf(failure);
        record.properties.provisioningState = outcome.status;
        onComplete(outcome);
      });
    }
    return deepCopy(record);
  }

  /**
   * Creates an image version from a snapshot or disk: `Creating` with replication `Replicating`,
   * then `Succeeded`/`Completed` after `imageVersionCreateSeconds`. With `fail`, it ends `Failed`
   * with that error instead (ZRS refusal, injected LRO failure); the failed version stays, as in Azure.
   */
  createImageVersion(
    imageId: string,
    name: string,
    body: { location: string; tags: Record<string, string>; properties: JsonObject },
    options: {
      fail?: ArmErrorBody;
      failAfterSeconds?: number;
      onComplete?: Completion;
      failure?: FailureCheck;
    },
  ): VersionRecord {
    const image = this.images.get(idKey(imageId));
    if (!image)
      throw new ComputeError(
        404,
        'ParentResourceNotFound',
        `Can not perform requested operation on nested resource. Parent resource '${imageId.split('/').slice(-3).join('/')}' not found.`,
      );
    const id = `${image.id}/versions/${name}`;
    const properties = stripReadOnly(body.properties);
    const publishing = objectAt(properties, 'publishingProfile');
    const regions = Array.isArray(publishing.targetRegions)
      ? (publishing.targetRegions as unknown[]).filter(isObject).map((region) => String(region.name))
      : [body.location];
    if (!Array.isArray(publishing.targetRegions)) {
      publishing.targetRegions = [
        {
          name: body.location,
          regionalReplicaCount: publishing.replicaCount ?? 1,
          storageAccountType: publishing.storageAccountType ?? 'Standard_LRS',
        },
      ];
    }
    publishing.storageAccountType ??= 'Standard_LRS';
    publishing.replicaCount ??= 1;
    publishing.excludeFromLatest ??= false;
    publishing.publishedDate = this.nowIso();
    properties.provisioningState = 'Creating';
    const record: VersionRecord = {
      id,
      imageId: image.id,
      name,
      location: body.location,
      tags: { ...body.tags },
      properties,
      replication: regions.map((region) => ({ region, state: 'Replicating', progress: 0 })),
      startedMs: this.clock.nowMs(),
    };
    this.versions.set(idKey(id), record);
    const seconds = options.fail ? (options.failAfterSeconds ?? 0) : this.latency.imageVersionCreateSeconds;
    const pending: PendingTransition = { kind: 'imageVersion', cancel: () => undefined };
    if (options.onComplete) pending.onComplete = options.onComplete;
    pending.cancel = this.scheduler.after(seconds, `image version ${name}`, () => {
      if (record.pending !== pending) return;
      record.pending = undefined;
      const error = options.fail ?? options.failure?.();
      if (error) {
        record.properties.provisioningState = 'Failed';
        record.replication = record.replication.map((status) => ({
          ...status,
          state: 'Failed',
          details: error.message,
        }));
        options.onComplete?.({ status: 'Failed', error });
        return;
      }
      record.properties.provisioningState = 'Succeeded';
      record.replication = record.replication.map((status) => ({
        ...status,
        state: 'Completed',
        progress: 100,
      }));
      options.onComplete?.({ status: 'Succeeded' });
    });
    record.pending = pending;
    return deepCopy({ ...record, pending: undefined });
  }

  /** Replication progress of a version in `Creating`, proportional to elapsed simulated time. */
  replicationProgress(id: string): ReplicationStatus[] {
    const record = this.versions.get(idKey(id));
    if (!record) return [];
    if (record.properties.provisioningState !== 'Creating') return deepCopy(record.replication);
    const published = record.startedMs ?? this.clock.nowMs();
    const elapsed = (this.clock.nowMs() - published) / 1000;
    const progress = Math.min(
      99,
      Math.floor((elapsed / Math.max(1, this.latency.imageVersionCreateSeconds)) * 100),
    );
    return record.replication.map((status) => ({ ...status, progress }));
  }

  /** Applies an updatable change to a version (publishingProfile.excludeFromLatest, endOfLifeDate, tags). */
  updateImageVersion(
    id: string,
    change: { properties: JsonObject; tags?: Record<string, string> },
  ): VersionRecord {
    const record = this.versions.get(idKey(id));
    if (!record) throw new ComputeError(404, 'ResourceNotFound', `The Resource '${id}' was not found.`);
    record.properties = change.properties;
    if (change.tags) record.tags = { ...change.tags };
    return deepCopy({ ...record, pending: undefined });
  }

  /** Deletes a version after `imageVersionDeleteSeconds` (a pending creation is preempted); on `failure` it stays. */
  deleteImageVersion(id: string, onComplete?: Completion, failure?: FailureCheck): boolean {
    const record = this.versions.get(idKey(id));
    if (!record) return false;
    this.preempt(record.pending, 'delete');
    record.pending = undefined;
    const before = record.properties.provisioningState;
    record.properties.provisioningState = 'Deleting';
    this.scheduler.after(
      this.latency.imageVersionDeleteSeconds,
      `delete image version ${record.name}`,
      () => {
        const error = failure?.();
        if (error) {
          record.properties.provisioningState = before === 'Creating' ? 'Failed' : before;
          onComplete?.({ status: 'Failed', error });
          return;
        }
        this.versions.delete(idKey(id));
        onComplete?.({ status: 'Succeeded' });
      },
    );
    return true;
  }

  // ---------------------------------------------------------------- helpers

  private requireInstance(id: string): InstanceRecord {
    const record = this.instances.get(idKey(id));
    if (!record)
      throw new ComputeError(
        404,
        'NotFound',
        `The entity was not found in this Azure location. Instance '${id}'.`,
      );
    return record;
  }

  private requireScaleSet(id: string): ScaleSetRecord {
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

  private bootstrapExtensionsRemain(record: ScaleSetRecord): boolean {
    return this.extensionArray(record).some((extension) =>
      isBootstrapExtension(extension, record.bootstrapOverrides),
    );
  }

  private scaleSetInfo(record: ScaleSetRecord): ScaleSetInfo {
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
    };
    if (customData !== undefined) info.customData = customData;
    return info;
  }

  private instanceInfo(record: InstanceRecord): InstanceInfo {
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
    };
    if (record.zone) info.zone = record.zone;
    if (record.osDiskId) info.osDiskId = record.osDiskId;
    return info;
  }

  /** ARM JSON of an instance's model and (optionally) instance view, shared by Uniform and Flexible renderers. */
  instanceDetails(id: string):
    | {
        record: InstanceInfo;
        vmSize: string;
        osType: OsType;
        hyperVGeneration: HyperVGeneration;
        adminUsername: string;
        ephemeralPlacement?: string;
        diskSizeGB?: number;
        osDiskName?: string;
        statuses: JsonObject[];
        scaleSetName: string;
      }
    | undefined {
    const record = this.instances.get(idKey(id));
    if (!record) return undefined;
    const disk = record.osDiskId ? this.disks.get(idKey(record.osDiskId)) : undefined;
    const provisioningCode =
      record.provisioningState === 'Succeeded' ? 'succeeded' : record.provisioningState.toLowerCase();
    const statuses: JsonObject[] = [
      {
        code: `ProvisioningState/${provisioningCode}`,
        level: 'Info',
        displayStatus:
          record.provisioningState === 'Succeeded' ? 'Provisioning succeeded' : `${record.provisioningState}`,
        time: record.timeCreated,
      },
      {
        code: `PowerState/${record.powerState}`,
        level: 'Info',
        displayStatus: powerDisplay(record.powerState),
      },
    ];
    const scaleSet = this.scaleSets.get(idKey(record.scaleSetId));
    return {
      record: this.instanceInfo(record),
      vmSize: record.vmSize,
      osType: record.osType,
      hyperVGeneration: record.hyperVGeneration,
      adminUsername: record.adminUsername,
      ...(record.ephemeralPlacement ? { ephemeralPlacement: record.ephemeralPlacement } : {}),
      ...(disk ? { diskSizeGB: disk.diskSizeGB, osDiskName: disk.name } : {}),
      statuses,
      scaleSetName: scaleSet?.name ?? '',
    };
  }
}

function outcomeOf(failure: FailureCheck | undefined): OperationOutcome {
  const error = failure?.();
  return error ? { status: 'Failed', error } : { status: 'Succeeded' };
}

function compareInstances(a: InstanceRecord, b: InstanceRecord): number {
  if (a.mode === 'Uniform' && b.mode === 'Uniform') return Number(a.instanceId) - Number(b.instanceId);
  return a.name.localeCompare(b.name);
}

function snapshotInfo(record: SnapshotRecord): SnapshotInfo {
  const { pending: _pending, ...info } = record;
  return deepCopy(info);
}

function versionSourceId(record: VersionRecord): string | undefined {
  const storage = optionalObjectAt(record.properties, 'storageProfile');
  if (!storage) return undefined;
  return stringAt(storage, ['osDiskImage', 'source'], 'id') ?? stringAt(storage, ['source'], 'id');
}

function versionInfo(record: VersionRecord): ImageVersionInfo {
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

function stripReadOnly(properties: JsonObject): JsonObject {
  const copy = deepCopy(properties);
  delete copy.provisioningState;
  return copy;
}

function normalizeImmutable(key: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (key === 'features' && Array.isArray(value)) {
    const features = value
      .filter(isObject)
      .map((feature) => `${String(feature.name).toLowerCase()}=${String(feature.value).toLowerCase()}`)
      .sort();
    return features.join(',');
  }
  if (typeof value === 'string') return value.toLowerCase();
  if (isObject(value)) {
    return JSON.stringify(
      Object.fromEntries(
        Object.entries(value)
          .map(([k, v]) => [k, String(v).toLowerCase()])
          .sort(),
      ),
    );
  }
  return JSON.stringify(value);
}
