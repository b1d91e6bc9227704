/**
 * Converters from @azure/arm-compute's storage and gallery resources to the domain's: managed disks,
 * snapshots, gallery image definitions and versions. Pure, as to-domain.ts.
 */
import type {
  Disk as ArmDisk,
  GalleryImage,
  GalleryImageVersion,
  Snapshot as ArmSnapshot,
} from '@azure/arm-compute';

import type {
  ImageDefinition,
  ImageDefinitionRef,
  ImageVersion,
  ImageVersionRef,
  ManagedDisk,
  ReplicationState,
  Snapshot,
  StorageAccountType,
} from '../../domain/compute.js';
import { definedOnly } from '../../domain/optional.js';
import { nonEmpty, toArchitecture, toHyperVGeneration } from './to-domain.js';

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
    ...definedOnly({ managedBy }),
    zones: [...(disk.zones ?? [])],
    ...definedOnly({ sourceResourceId }),
    tags: { ...disk.tags },
  };
}

export function toSnapshot(snapshot: ArmSnapshot, resourceGroup: string): Snapshot {
  const sourceResourceId = nonEmpty(snapshot.creationData?.sourceResourceId);
  return {
    id: snapshot.id ?? '',
    name: snapshot.name ?? '',
    resourceGroup: resourceGroupOf(snapshot.id) ?? resourceGroup,
    location: snapshot.location,
    provisioningState: snapshot.provisioningState ?? 'Unknown',
    ...definedOnly({ sourceResourceId }),
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
      ...definedOnly({ securityType }),
      identifier: {
        publisher: image.identifier?.publisher ?? '',
        offer: image.identifier?.offer ?? '',
        sku: image.identifier?.sku ?? '',
      },
      ...definedOnly({ description }),
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
  const replicationState = toReplicationState(version);
  return {
    id: version.id ?? '',
    ref,
    location: version.location,
    provisioningState: version.provisioningState ?? 'Unknown',
    excludeFromLatest: publishing?.excludeFromLatest === true,
    ...definedOnly({ storageAccountType }),
    replicationState,
    ...definedOnly({
      replicationProgress: replicationState === 'Replicating' ? toReplicationProgress(version) : undefined,
    }),
    ...definedOnly({ sourceId, publishedAt }),
    tags: { ...version.tags },
    regionalExclusion: (publishing?.targetRegions ?? []).some(
      (target) => target.excludeFromLatest !== undefined,
    ),
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

/** The least regional `progress` of `replicationStatus.summary`, when any region reports one. */
function toReplicationProgress(version: GalleryImageVersion): number | undefined {
  const progress = (version.replicationStatus?.summary ?? [])
    .map((region) => region.progress)
    .filter((value): value is number => typeof value === 'number');
  return progress.length === 0 ? undefined : Math.min(...progress);
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
