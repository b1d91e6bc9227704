/**
 * Converters from @azure/arm-compute models to the domain's compute types. Pure: no I/O, no clock; the
 * gateway fetches, these functions interpret (ARM defaults, casing quirks, what "absent" means).
 * Over 400 lines on purpose: every converter shares the small normalisers at the end of the file.
 */
import type {
  Disk as ArmDisk,
  GalleryImage,
  GalleryImageVersion,
  ImageReference as ArmImageReference,
  InstanceViewStatus,
  Snapshot as ArmSnapshot,
  VirtualMachine,
  VirtualMachineImage,
  VirtualMachineScaleSet,
  VirtualMachineScaleSetExtension,
  VirtualMachineScaleSetVM,
} from '@azure/arm-compute';

import { IMAGE_REFERENCE_FIELDS } from '../../domain/canary-record.js';
import type {
  ImageDefinition,
  ImageDefinitionRef,
  ImageVersion,
  ImageVersionRef,
  ManagedDisk,
  PowerState,
  ReplicationState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
  StorageAccountType,
} from '../../domain/compute.js';
import {
  parseScaleSetResourceId,
  scaleSetInstanceResourceId,
  type ScaleSetRef,
  scaleSetResourceId,
  virtualMachineResourceId,
} from '../../domain/resource-id.js';
import type {
  Architecture,
  HyperVGeneration,
  ImageReference,
  OrchestrationMode,
  OsType,
  ScaleSet,
  UpgradePolicyMode,
} from '../../domain/scale-set.js';

/** Facts about the scale set's image that the scale set model itself does not carry. */
export interface ImageFacts {
  readonly hyperVGeneration?: HyperVGeneration;
  readonly architecture?: Architecture;
}

/**
 * The domain view of a scale set model. `ref` is what the caller asked for; names come from ARM's own id
 * when it parses (ARM may return different casing), else from `ref`.
 */
export function toScaleSet(
  model: VirtualMachineScaleSet,
  ref: ScaleSetRef,
  facts: ImageFacts = {},
): ScaleSet {
  const fromId = model.id === undefined ? undefined : parseScaleSetResourceId(model.id);
  const names = fromId ?? ref;
  const profile = model.virtualMachineProfile;
  const storage = profile?.storageProfile;
  const osDisk = storage?.osDisk;
  const diffDisk = osDisk?.diffDiskSettings;
  // ARM only accepts option `Local`: any diffDiskSettings means the OS disk lives on the host.
  const ephemeral = diffDisk !== undefined && diffDisk !== null;
  const imageReference = toImageReference(storage?.imageReference);
  const securityType = nonEmpty(profile?.securityProfile?.securityType);
  const upgradePolicyMode = toUpgradePolicyMode(model.upgradePolicy?.mode);
  const placement = nonEmpty(diffDisk?.placement);
  const hyperVGeneration = facts.hyperVGeneration ?? hyperVGenerationFromSecurityType(securityType);
  const architecture = facts.architecture ?? architectureFromVmSize(model.sku?.name);
  const vmSize = nonEmpty(model.sku?.name);
  const encryptionSet =
    nonEmpty(osDisk?.managedDisk?.diskEncryptionSet?.id) ??
    nonEmpty(osDisk?.managedDisk?.securityProfile?.diskEncryptionSet?.id);
  return {
    subscriptionId: names.subscriptionId,
    resourceGroup: names.resourceGroup,
    name: model.name ?? names.name,
    id: model.id ?? scaleSetResourceId(ref),
    location: model.location,
    orchestrationMode: toOrchestrationMode(model.orchestrationMode),
    osType: toOsType(model),
    ...(upgradePolicyMode === undefined ? {} : { upgradePolicyMode }),
    automaticOsUpgrade: model.upgradePolicy?.automaticOSUpgradePolicy?.enableAutomaticOSUpgrade === true,
    ephemeralOsDisk: ephemeral,
    ...(ephemeral && placement !== undefined ? { ephemeralOsDiskPlacement: placement } : {}),
    ...(imageReference === undefined ? {} : { imageReference }),
    tags: { ...model.tags },
    ...(hyperVGeneration === undefined ? {} : { hyperVGeneration }),
    ...(securityType === undefined ? {} : { securityType }),
    ...(architecture === undefined ? {} : { architecture }),
    zones: [...(model.zones ?? [])],
    ...(model.provisioningState === undefined ? {} : { provisioningState: model.provisioningState }),
    ...(nonEmpty(model.etag) === undefined ? {} : { etag: model.etag }),
    ...(model.sku?.capacity === undefined ? {} : { capacity: model.sku.capacity }),
    ...imageReferenceFieldsOf(storage?.imageReference),
    ...(vmSize === undefined ? {} : { vmSize }),
    ...(encryptionSet === undefined ? {} : { osDiskEncryptionSetId: encryptionSet }),
    extensions: (profile?.extensionProfile?.extensions ?? []).map(toExtension),
  };
}

/** The writable image reference fields present in the model, exactly as ARM returned them. */
function imageReferenceFieldsOf(reference: ArmImageReference | undefined): {
  imageReferenceFields?: Record<string, string>;
} {
  if (reference === undefined || reference === null) return {};
  const fields: Record<string, string> = {};
  for (const field of IMAGE_REFERENCE_FIELDS) {
    const value = reference[field];
    if (typeof value === 'string' && value !== '') fields[field] = value;
  }
  return Object.keys(fields).length === 0 ? {} : { imageReferenceFields: fields };
}

/** Classifies an ARM image reference; undefined when it names no image at all. */
export function toImageReference(reference: ArmImageReference | undefined): ImageReference | undefined {
  if (reference === undefined || reference === null) {
    return undefined;
  }
  const id = nonEmpty(reference.id);
  if (id !== undefined) {
    const lower = id.toLowerCase();
    if (lower.includes('/providers/microsoft.compute/galleries/')) {
      return { kind: 'gallery', id };
    }
    if (lower.includes('/providers/microsoft.compute/images/')) {
      return { kind: 'managed-image', id };
    }
  }
  const shared = nonEmpty(reference.sharedGalleryImageId);
  if (shared !== undefined) {
    return { kind: 'shared-gallery', id: shared };
  }
  const community = nonEmpty(reference.communityGalleryImageId);
  if (community !== undefined) {
    return { kind: 'community-gallery', id: community };
  }
  const publisher = nonEmpty(reference.publisher);
  const offer = nonEmpty(reference.offer);
  const sku = nonEmpty(reference.sku);
  if (publisher !== undefined && offer !== undefined && sku !== undefined) {
    return { kind: 'marketplace', publisher, offer, sku, version: nonEmpty(reference.version) ?? 'latest' };
  }
  // An id that is neither a gallery nor a managed image (e.g. a future image source) is still an id.
  return id === undefined ? undefined : { kind: 'gallery', id };
}

/** Reads `PowerState/<state>` from instance view statuses (ARM lists ProvisioningState first). */
export function toPowerState(statuses: readonly InstanceViewStatus[] | undefined): PowerState {
  for (const status of statuses ?? []) {
    const code = status.code?.toLowerCase();
    if (code?.startsWith('powerstate/') === true) {
      return POWER_STATES.get(code.slice('powerstate/'.length)) ?? 'unknown';
    }
  }
  return 'unknown';
}

const POWER_STATES: ReadonlyMap<string, PowerState> = new Map<string, PowerState>([
  ['starting', 'starting'],
  ['running', 'running'],
  ['stopping', 'stopping'],
  ['stopped', 'stopped'],
  ['deallocating', 'deallocating'],
  ['deallocated', 'deallocated'],
]);

/** A Uniform instance (`virtualMachineScaleSetVMs.get` with `$expand=instanceView`). */
export function toUniformInstance(scaleSet: ScaleSetRef, vm: VirtualMachineScaleSetVM): ScaleSetInstance {
  const instanceId = vm.instanceId ?? vm.name ?? '';
  return toInstance(scaleSet, instanceId, vm.id ?? scaleSetInstanceResourceId(scaleSet, instanceId), vm);
}

/** A Flexible member (`virtualMachines.get` with `$expand=instanceView`); its instance id is the VM name. */
export function toFlexibleInstance(scaleSet: ScaleSetRef, vm: VirtualMachine): ScaleSetInstance {
  const name = vm.name ?? '';
  return toInstance(scaleSet, name, vm.id ?? virtualMachineResourceId({ ...scaleSet, name }), vm);
}

/** What Uniform instances and Flexible members share (both carry a VM model with its instance view). */
function toInstance(
  scaleSet: ScaleSetRef,
  instanceId: string,
  resourceId: string,
  vm: VirtualMachineScaleSetVM | VirtualMachine,
): ScaleSetInstance {
  const osDisk = vm.storageProfile?.osDisk;
  const ephemeral = osDisk?.diffDiskSettings !== undefined && osDisk.diffDiskSettings !== null;
  const osDiskId = ephemeral ? undefined : nonEmpty(osDisk?.managedDisk?.id);
  const osDiskType = ephemeral ? undefined : nonEmpty(osDisk?.managedDisk?.storageAccountType);
  const vmId = nonEmpty(vm.vmId);
  const computerName = nonEmpty(vm.osProfile?.computerName) ?? nonEmpty(vm.instanceView?.computerName);
  return {
    scaleSet,
    instanceId,
    resourceId,
    ...(vmId === undefined ? {} : { vmId }),
    ...(computerName === undefined ? {} : { computerName }),
    powerState: toPowerState(vm.instanceView?.statuses),
    provisioningState: vm.provisioningState ?? provisioningStateFromStatuses(vm.instanceView?.statuses),
    ...(osDiskId === undefined ? {} : { osDiskId }),
    ...(osDiskType === undefined ? {} : { osDiskType }),
    ephemeralOsDisk: ephemeral,
    location: vm.location,
    zones: [...(vm.zones ?? [])],
    ...instanceHyperVGeneration(vm.instanceView?.hyperVGeneration),
    ...instanceImage(vm.storageProfile?.imageReference),
    ...(vm.timeCreated === undefined ? {} : { createdAt: toIso(vm.timeCreated) }),
    dataDisks: (vm.storageProfile?.dataDisks ?? []).map((disk) => {
      const diskId = nonEmpty(disk.managedDisk?.id);
      return {
        lun: disk.lun,
        name: disk.name ?? '',
        ...(diskId === undefined ? {} : { diskId }),
        ...(disk.toBeDetached === true ? { toBeDetached: true } : {}),
      };
    }),
  };
}

/** A managed disk (`disks.get`). */
export function toManagedDisk(disk: ArmDisk, resourceGroup: string): ManagedDisk {
  const managedBy = nonEmpty(disk.managedBy);
  const sourceResourceId = nonEmpty(disk.creationData?.sourceResourceId);
  return {
    id: disk.id ?? '',
    name: disk.name ?? '',
    resourceGroup: resourceGroupOf(disk.id) ?? resourceGroup,
    location: disk.location,
    provisioningState: disk.provisioningState ?? 'Unknown',
    ...(managedBy === undefined ? {} : { managedBy }),
    zones: [...(disk.zones ?? [])],
    ...(sourceResourceId === undefined ? {} : { sourceResourceId }),
    tags: { ...disk.tags },
  };
}

/** The image an instance was built from, and the version ARM resolved `latest` to where it says so. */
function instanceImage(reference: ArmImageReference | undefined): {
  imageId?: string;
  exactVersion?: string;
} {
  const imageId = nonEmpty(reference?.id);
  const exactVersion = nonEmpty(reference?.exactVersion);
  return {
    ...(imageId === undefined ? {} : { imageId }),
    ...(exactVersion === undefined ? {} : { exactVersion }),
  };
}

function toIso(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

/** The instance view reports the VM's Hyper-V generation; the model does not (docs/design.md#gallery-and-image-definition). */
function instanceHyperVGeneration(value: string | undefined): { hyperVGeneration?: HyperVGeneration } {
  const generation = toHyperVGeneration(value);
  return generation === undefined ? {} : { hyperVGeneration: generation };
}

/** True when a VM's `virtualMachineScaleSet.id` names `scaleSet` (ARM ids compare case-insensitively). */
export function isMemberOf(vm: VirtualMachine, scaleSet: ScaleSetRef): boolean {
  const owner = vm.virtualMachineScaleSet?.id;
  return owner !== undefined && owner.toLowerCase() === scaleSetResourceId(scaleSet).toLowerCase();
}

export function toSnapshot(snapshot: ArmSnapshot, resourceGroup: string): Snapshot {
  const sourceResourceId = nonEmpty(snapshot.creationData?.sourceResourceId);
  return {
    id: snapshot.id ?? '',
    name: snapshot.name ?? '',
    resourceGroup: resourceGroupOf(snapshot.id) ?? resourceGroup,
    location: snapshot.location,
    provisioningState: snapshot.provisioningState ?? 'Unknown',
    ...(sourceResourceId === undefined ? {} : { sourceResourceId }),
    incremental: snapshot.incremental === true,
    tags: { ...snapshot.tags },
  };
}

export function toImageDefinition(image: GalleryImage, ref: ImageDefinitionRef): ImageDefinition {
  const securityType = nonEmpty(
    image.features?.find((feature) => feature.name?.toLowerCase() === 'securitytype')?.value,
  );
  const description = nonEmpty(image.description);
  return {
    id: image.id ?? '',
    ref,
    location: image.location,
    provisioningState: image.provisioningState ?? 'Unknown',
    spec: {
      osType: image.osType?.toLowerCase() === 'windows' ? 'Windows' : 'Linux',
      osState: image.osState?.toLowerCase() === 'specialized' ? 'Specialized' : 'Generalized',
      // ARM's defaults when the fields are absent (API versions before they existed).
      hyperVGeneration: toHyperVGeneration(image.hyperVGeneration) ?? 'V1',
      architecture: toArchitecture(image.architecture) ?? 'x64',
      ...(securityType === undefined ? {} : { securityType }),
      identifier: {
        publisher: image.identifier?.publisher ?? '',
        offer: image.identifier?.offer ?? '',
        sku: image.identifier?.sku ?? '',
      },
      ...(description === undefined ? {} : { description }),
      tags: { ...image.tags },
    },
  };
}

export function toImageVersion(version: GalleryImageVersion, ref: ImageVersionRef): ImageVersion {
  const publishing = version.publishingProfile;
  const region = publishing?.targetRegions?.find((target) => sameRegion(target.name, version.location));
  const storageAccountType = toStorageAccountType(
    publishing?.storageAccountType ?? region?.storageAccountType,
  );
  const sourceId =
    nonEmpty(version.storageProfile?.osDiskImage?.source?.id) ?? nonEmpty(version.storageProfile?.source?.id);
  const publishedAt = toIsoString(publishing?.publishedDate);
  return {
    id: version.id ?? '',
    ref,
    location: version.location,
    provisioningState: version.provisioningState ?? 'Unknown',
    excludeFromLatest: publishing?.excludeFromLatest === true,
    ...(storageAccountType === undefined ? {} : { storageAccountType }),
    replicationState: toReplicationState(version),
    ...(sourceId === undefined ? {} : { sourceId }),
    ...(publishedAt === undefined ? {} : { publishedAt }),
    tags: { ...version.tags },
  };
}

/**
 * `aggregatedState` (InProgress/Completed/Failed/Unknown) when ARM sent it ($expand=ReplicationStatus),
 * else the worst regional state; Unknown when neither is there (plain GET or list).
 */
function toReplicationState(version: GalleryImageVersion): ReplicationState {
  const status = version.replicationStatus;
  switch ((status?.aggregatedState ?? '').toLowerCase()) {
    case 'inprogress':
      return 'Replicating';
    case 'completed':
      return 'Completed';
    case 'failed':
      return 'Failed';
    default:
      break;
  }
  const states = (status?.summary ?? []).map((region) => region.state?.toLowerCase());
  if (states.length === 0) {
    return 'Unknown';
  }
  if (states.includes('failed')) {
    return 'Failed';
  }
  if (states.includes('replicating')) {
    return 'Replicating';
  }
  return states.every((state) => state === 'completed') ? 'Completed' : 'Unknown';
}

export function toExtension(extension: VirtualMachineScaleSetExtension): ScaleSetExtension {
  return {
    name: extension.name ?? '',
    publisher: extension.publisher ?? '',
    type: extension.typePropertiesType ?? '',
    ...(extension.provisioningState === undefined ? {} : { provisioningState: extension.provisioningState }),
  };
}

export function imageFactsFromGalleryImage(image: GalleryImage): ImageFacts {
  const hyperVGeneration = toHyperVGeneration(image.hyperVGeneration) ?? 'V1';
  const architecture = toArchitecture(image.architecture) ?? 'x64';
  return { hyperVGeneration, architecture };
}

export function imageFactsFromMarketplaceImage(image: VirtualMachineImage): ImageFacts {
  const hyperVGeneration = toHyperVGeneration(image.hyperVGeneration);
  const architecture = toArchitecture(image.architecture);
  return {
    ...(hyperVGeneration === undefined ? {} : { hyperVGeneration }),
    ...(architecture === undefined ? {} : { architecture }),
  };
}

/**
 * Azure VM size names mark Arm-based (Ampere) sizes with the `p` additive feature letter
 * (`Standard_D4ps_v5`, `Standard_E8pds_v6`); used only when the image did not say.
 */
export function architectureFromVmSize(size: string | undefined): Architecture | undefined {
  if (size === undefined) {
    return undefined;
  }
  const match = /^Standard_[A-Z]+\d+(?:-\d+)?([a-z]*)_v\d+$/.exec(size);
  if (match === null) {
    return undefined;
  }
  return (match[1] ?? '').includes('p') ? 'Arm64' : 'x64';
}

/** Trusted Launch and confidential VMs only exist on generation 2. */
function hyperVGenerationFromSecurityType(securityType: string | undefined): HyperVGeneration | undefined {
  const lower = securityType?.toLowerCase();
  return lower === 'trustedlaunch' || lower === 'confidentialvm' ? 'V2' : undefined;
}

function toOrchestrationMode(mode: string | undefined): OrchestrationMode {
  // Scale sets created before orchestration modes existed report none and are Uniform.
  return mode?.toLowerCase() === 'flexible' ? 'Flexible' : 'Uniform';
}

function toUpgradePolicyMode(mode: string | undefined): UpgradePolicyMode | undefined {
  switch ((mode ?? '').toLowerCase()) {
    case 'manual':
      return 'Manual';
    case 'automatic':
      return 'Automatic';
    case 'rolling':
      return 'Rolling';
    default:
      return undefined;
  }
}

/**
 * `osDisk.osType` when present; otherwise which OS configuration the osProfile carries. Linux is the
 * last resort because a Windows scale set always has `windowsConfiguration` or a Windows osType.
 */
function toOsType(model: VirtualMachineScaleSet): OsType {
  const profile = model.virtualMachineProfile;
  const declared = profile?.storageProfile?.osDisk?.osType?.toLowerCase();
  if (declared === 'windows') {
    return 'Windows';
  }
  if (declared === 'linux') {
    return 'Linux';
  }
  const osProfile = profile?.osProfile;
  if (osProfile?.windowsConfiguration !== undefined && osProfile.windowsConfiguration !== null) {
    return 'Windows';
  }
  return 'Linux';
}

function toHyperVGeneration(value: string | undefined): HyperVGeneration | undefined {
  const lower = value?.toLowerCase();
  return lower === 'v1' ? 'V1' : lower === 'v2' ? 'V2' : undefined;
}

function toArchitecture(value: string | undefined): Architecture | undefined {
  const lower = value?.toLowerCase();
  return lower === 'x64' ? 'x64' : lower === 'arm64' ? 'Arm64' : undefined;
}

function toStorageAccountType(value: string | undefined): StorageAccountType | undefined {
  switch ((value ?? '').toLowerCase()) {
    case 'standard_zrs':
      return 'Standard_ZRS';
    case 'standard_lrs':
      return 'Standard_LRS';
    case 'premium_lrs':
      return 'Premium_LRS';
    default:
      return undefined;
  }
}

function provisioningStateFromStatuses(statuses: readonly InstanceViewStatus[] | undefined): string {
  for (const status of statuses ?? []) {
    const code = status.code;
    if (code?.toLowerCase().startsWith('provisioningstate/') === true) {
      const state = code.slice('provisioningstate/'.length).split('/')[0] ?? '';
      return state.charAt(0).toUpperCase() + state.slice(1);
    }
  }
  return 'Unknown';
}

/** Region names compare without case or spaces (`West Europe` is `westeurope`). */
function sameRegion(a: string | undefined, b: string | undefined): boolean {
  const normalise = (value: string | undefined): string => (value ?? '').replaceAll(' ', '').toLowerCase();
  return a !== undefined && b !== undefined && normalise(a) === normalise(b);
}

function resourceGroupOf(id: string | undefined): string | undefined {
  const match = id === undefined ? null : /\/resourceGroups\/([^/]+)/i.exec(id);
  return match?.[1];
}

function toIsoString(value: Date | string | undefined): string | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return value === undefined || value === null || value === '' ? undefined : value;
}
