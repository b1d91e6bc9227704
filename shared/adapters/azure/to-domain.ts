/**
 * Converters from @azure/arm-compute's scale set models to the domain's: the scale set, its image
 * reference and image facts, its extensions, and the small normalisers the other converters share
 * (to-domain-instances.ts: instances; to-domain-gallery.ts: disks, snapshots, gallery). Pure: no I/O, no
 * clock; the adapters fetch, these functions interpret (ARM defaults, casing quirks, what "absent" means).
 */
import type {
  GalleryImage,
  ImageReference as ArmImageReference,
  VirtualMachineImage,
  VirtualMachineScaleSet,
  VirtualMachineScaleSetExtension,
} from '@azure/arm-compute';

import { IMAGE_REFERENCE_FIELDS } from '../../domain/canary-record.js';
import type { ScaleSetExtension } from '../../domain/compute.js';
import { definedOnly } from '../../domain/optional.js';
import { parseScaleSetResourceId, type ScaleSetRef, scaleSetResourceId } from '../../domain/resource-id.js';
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
    ...definedOnly({ upgradePolicyMode }),
    automaticOsUpgrade: model.upgradePolicy?.automaticOSUpgradePolicy?.enableAutomaticOSUpgrade === true,
    ephemeralOsDisk: ephemeral,
    ...(ephemeral && placement !== undefined ? { ephemeralOsDiskPlacement: placement } : {}),
    ...definedOnly({ imageReference }),
    tags: { ...model.tags },
    ...definedOnly({ hyperVGeneration, securityType, architecture }),
    zones: [...(model.zones ?? [])],
    ...definedOnly({ provisioningState: model.provisioningState }),
    ...(nonEmpty(model.etag) === undefined ? {} : { etag: model.etag }),
    ...definedOnly({ capacity: model.sku?.capacity }),
    ...imageReferenceFieldsOf(storage?.imageReference),
    ...definedOnly({ vmSize, osDiskEncryptionSetId: encryptionSet }),
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

export function toExtension(extension: VirtualMachineScaleSetExtension): ScaleSetExtension {
  return {
    name: extension.name ?? '',
    publisher: extension.publisher ?? '',
    type: extension.typePropertiesType ?? '',
    ...definedOnly({ provisioningState: extension.provisioningState }),
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
    ...definedOnly({ hyperVGeneration, architecture }),
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

export function toHyperVGeneration(value: string | undefined): HyperVGeneration | undefined {
  const lower = value?.toLowerCase();
  return lower === 'v1' ? 'V1' : lower === 'v2' ? 'V2' : undefined;
}

export function toArchitecture(value: string | undefined): Architecture | undefined {
  const lower = value?.toLowerCase();
  return lower === 'x64' ? 'x64' : lower === 'arm64' ? 'Arm64' : undefined;
}

export function nonEmpty(value: string | null | undefined): string | undefined {
  return value === undefined || value === null || value === '' ? undefined : value;
}
