/**
 * Renders the simulator's compute state as ARM JSON, in the wire shape the Compute, Disk and
 * Gallery resource providers return (what @azure/arm-compute deserializes). Write-only fields
 * such as `osProfile.customData` and an extension's `protectedSettings` never leave here: ARM keeps them
 * encrypted and never returns them (learn.microsoft.com/azure/virtual-machines/extensions/features-linux,
 * "protected settings").
 */
import {
  type ComputeState,
  deepCopy,
  type GalleryRecord,
  type ImageRecord,
  isObject,
  type JsonObject,
  type SnapshotInfo,
  textOr,
  type VersionRecord,
} from './compute-state.js';

/** Copies a scale set's properties without write-only secrets. */
export function publicScaleSetProperties(properties: JsonObject): JsonObject {
  const copy = deepCopy(properties);
  const profile = isObject(copy.virtualMachineProfile) ? copy.virtualMachineProfile : undefined;
  const osProfile = profile && isObject(profile.osProfile) ? profile.osProfile : undefined;
  if (osProfile) {
    delete osProfile.customData;
    delete osProfile.adminPassword;
  }
  const extensionProfile =
    profile && isObject(profile.extensionProfile) ? profile.extensionProfile : undefined;
  if (extensionProfile && Array.isArray(extensionProfile.extensions)) {
    for (const extension of extensionProfile.extensions) {
      if (isObject(extension) && isObject(extension.properties))
        withoutProtectedSettings(extension.properties);
    }
  }
  return copy;
}

/** Drops an extension's write-only settings from a copy of its properties (the reference to a Key Vault stays). */
function withoutProtectedSettings(properties: JsonObject): JsonObject {
  delete properties.protectedSettings;
  return properties;
}

export function renderScaleSet(state: ComputeState, id: string): JsonObject | undefined {
  const resource = state.scaleSetResource(id);
  if (!resource) return undefined;
  return {
    id: resource.id,
    name: resource.name,
    type: 'Microsoft.Compute/virtualMachineScaleSets',
    location: resource.location,
    etag: resource.etag,
    tags: resource.tags,
    sku: resource.sku,
    ...(resource.zones ? { zones: resource.zones } : {}),
    properties: publicScaleSetProperties(resource.properties),
  };
}

export function renderExtension(scaleSetId: string, extension: JsonObject): JsonObject {
  const name = textOr(extension.name, '');
  return {
    id: `${scaleSetId}/extensions/${name}`,
    name,
    type: 'Microsoft.Compute/virtualMachineScaleSets/extensions',
    properties: withoutProtectedSettings(
      deepCopy(isObject(extension.properties) ? extension.properties : {}),
    ),
  };
}

/** The extensions of a scale set model, as ARM lists them. */
export function scaleSetExtensions(state: ComputeState, scaleSetId: string): JsonObject[] {
  const resource = state.scaleSetResource(scaleSetId);
  const profile = resource?.properties.virtualMachineProfile;
  const extensionProfile =
    isObject(profile) && isObject(profile.extensionProfile) ? profile.extensionProfile : {};
  const extensions = Array.isArray(extensionProfile.extensions)
    ? (extensionProfile.extensions as unknown[])
    : [];
  return extensions
    .filter(isObject)
    .map((extension) => renderExtension(resource?.id ?? scaleSetId, extension));
}

/** Instance view of a VMSS VM or a VM (`statuses` with ProvisioningState and PowerState). */
export function renderInstanceView(state: ComputeState, id: string): JsonObject | undefined {
  const details = state.instanceDetails(id);
  if (!details) return undefined;
  const { record } = details;
  const agentReady = record.powerState === 'running';
  const view: JsonObject = {
    computerName: record.computerName,
    osName: details.osType === 'Linux' ? 'ubuntu' : 'Windows Server 2022 Datacenter',
    osVersion: details.osType === 'Linux' ? '24.04' : '10.0.20348',
    hyperVGeneration: details.hyperVGeneration,
    vmAgent: {
      vmAgentVersion: agentReady ? '2.12.0.2' : 'Unknown',
      statuses: [
        agentReady
          ? {
              code: 'ProvisioningState/succeeded',
              level: 'Info',
              displayStatus: 'Ready',
              message: 'GuestAgent is running and processing the extensions.',
            }
          : {
              code: 'ProvisioningState/Unavailable',
              level: 'Warning',
              displayStatus: 'Not Ready',
              message: 'VM status blob is found but not yet populated.',
            },
      ],
    },
    disks: details.osDiskName
      ? [
          {
            name: details.osDiskName,
            statuses: [
              { code: 'ProvisioningState/succeeded', level: 'Info', displayStatus: 'Provisioning succeeded' },
            ],
          },
        ]
      : [],
    statuses: details.statuses,
  };
  if (record.orchestrationMode === 'Uniform') {
    const number = Number(record.instanceId);
    view.platformUpdateDomain = number % 5;
    view.platformFaultDomain = number % 2;
  }
  return view;
}

function instanceStorageProfile(
  details: NonNullable<ReturnType<ComputeState['instanceDetails']>>,
): JsonObject {
  const { record } = details;
  const osDisk: JsonObject = {
    osType: details.osType,
    name: details.osDiskName ?? `${record.name}_OsDisk_ephemeral`,
    createOption: 'FromImage',
    caching: details.ephemeralPlacement ? 'ReadOnly' : 'ReadWrite',
    diskSizeGB: details.diskSizeGB ?? 128,
    managedDisk: record.osDiskId
      ? { storageAccountType: 'Premium_LRS', id: record.osDiskId }
      : { storageAccountType: 'Standard_LRS' },
    deleteOption: 'Delete',
  };
  if (details.ephemeralPlacement)
    osDisk.diffDiskSettings = { option: 'Local', placement: details.ephemeralPlacement };
  const dataDisks = record.dataDisks.map((disk) => ({
    lun: disk.lun,
    name: disk.name,
    createOption: 'Attach',
    caching: disk.caching,
    managedDisk: { id: disk.diskId, storageAccountType: 'StandardSSD_LRS' },
    deleteOption: 'Detach',
    toBeDetached: disk.toBeDetached === true,
  }));
  return { imageReference: deepCopy(record.imageReference), osDisk, dataDisks };
}

/** A Uniform scale-set VM (`Microsoft.Compute/virtualMachineScaleSets/virtualMachines`). */
export function renderScaleSetVm(
  state: ComputeState,
  id: string,
  withInstanceView: boolean,
): JsonObject | undefined {
  const details = state.instanceDetails(id);
  if (!details) return undefined;
  const { record } = details;
  const properties: JsonObject = {
    latestModelApplied: record.latestModelApplied,
    modelDefinitionApplied: 'VirtualMachineScaleSet',
    vmId: record.vmId,
    hardwareProfile: { vmSize: details.vmSize },
    storageProfile: instanceStorageProfile(details),
    osProfile: instanceOsProfile(details),
    networkProfile: { networkInterfaces: [] },
    provisioningState: record.provisioningState,
    timeCreated: record.timeCreated,
  };
  if (withInstanceView) properties.instanceView = renderInstanceView(state, id);
  return {
    id: record.id,
    name: record.name,
    type: 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines',
    location: record.location,
    instanceId: record.instanceId,
    sku: { name: details.vmSize, tier: 'Standard' },
    ...(record.zone ? { zones: [record.zone] } : {}),
    properties,
  };
}

/** The OS profile ARM shows on an instance or member VM (the same for Uniform and Flexible). */
function instanceOsProfile(details: NonNullable<ReturnType<ComputeState['instanceDetails']>>): JsonObject {
  return {
    computerName: details.record.computerName,
    adminUsername: details.adminUsername,
    linuxConfiguration: { disablePasswordAuthentication: true, provisionVMAgent: true },
    allowExtensionOperations: true,
    requireGuestProvisionSignal: true,
  };
}

/** A Flexible scale-set member (`Microsoft.Compute/virtualMachines` with `virtualMachineScaleSet.id`). */
export function renderVirtualMachine(
  state: ComputeState,
  id: string,
  withInstanceView: boolean,
): JsonObject | undefined {
  const details = state.instanceDetails(id);
  if (!details) return undefined;
  const { record } = details;
  const properties: JsonObject = {
    vmId: record.vmId,
    hardwareProfile: { vmSize: details.vmSize },
    storageProfile: instanceStorageProfile(details),
    osProfile: instanceOsProfile(details),
    networkProfile: { networkInterfaces: [] },
    virtualMachineScaleSet: { id: record.scaleSetId },
    provisioningState: record.provisioningState,
    timeCreated: record.timeCreated,
  };
  if (withInstanceView) properties.instanceView = renderInstanceView(state, id);
  return {
    id: record.id,
    name: record.name,
    type: 'Microsoft.Compute/virtualMachines',
    location: record.location,
    ...(record.zone ? { zones: [record.zone] } : {}),
    properties,
  };
}

export function renderDisk(state: ComputeState, id: string): JsonObject | undefined {
  const disk = state.getDisk(id);
  if (!disk) return undefined;
  const instance = disk.managedBy ? state.getInstance(disk.managedBy) : undefined;
  const diskState = !instance
    ? 'Unattached'
    : instance.powerState === 'deallocated'
      ? 'Reserved'
      : 'Attached';
  return {
    id: disk.id,
    name: disk.name,
    type: 'Microsoft.Compute/disks',
    location: disk.location,
    ...(disk.zone ? { zones: [disk.zone] } : {}),
    ...(instance ? { managedBy: instance.id } : {}),
    sku: { name: disk.skuName, tier: disk.skuName.startsWith('Premium') ? 'Premium' : 'Standard' },
    tags: { ...disk.tags },
    properties: {
      osType: disk.osType,
      hyperVGeneration: disk.hyperVGeneration,
      creationData:
        disk.createOption === 'Copy'
          ? { createOption: 'Copy', sourceResourceId: disk.sourceResourceId }
          : {
              createOption: 'FromImage',
              ...(instance && instance.osDiskId?.toLowerCase() === disk.id.toLowerCase()
                ? { imageReference: instance.imageReference }
                : {}),
              // ARM names the exact gallery image version a disk was built from, `latest` resolved.
              ...(disk.galleryImageVersionId === undefined
                ? {}
                : { galleryImageReference: { id: disk.galleryImageVersionId } }),
            },
      diskSizeGB: disk.diskSizeGB,
      diskSizeBytes: disk.diskSizeGB * 1024 ** 3,
      uniqueId: disk.uniqueId,
      encryption: { type: 'EncryptionAtRestWithPlatformKey' },
      networkAccessPolicy: 'AllowAll',
      publicNetworkAccess: 'Enabled',
      provisioningState: disk.provisioningState,
      diskState,
      timeCreated: disk.timeCreated,
    },
  };
}

export function renderSnapshot(snapshot: SnapshotInfo): JsonObject {
  return {
    id: snapshot.id,
    name: snapshot.name,
    type: 'Microsoft.Compute/snapshots',
    location: snapshot.location,
    tags: snapshot.tags,
    sku: { name: snapshot.skuName, tier: 'Standard' },
    properties: {
      osType: snapshot.osType,
      hyperVGeneration: snapshot.hyperVGeneration,
      creationData: { createOption: 'Copy', sourceResourceId: snapshot.sourceResourceId },
      diskSizeGB: snapshot.diskSizeGB,
      diskSizeBytes: snapshot.diskSizeGB * 1024 ** 3,
      uniqueId: snapshot.uniqueId,
      incremental: snapshot.incremental,
      encryption: { type: 'EncryptionAtRestWithPlatformKey' },
      networkAccessPolicy: 'AllowAll',
      publicNetworkAccess: 'Enabled',
      diskState: 'Unattached',
      provisioningState: snapshot.provisioningState,
      snapshotAccessState: snapshot.provisioningState === 'Succeeded' ? 'Available' : 'Pending',
      timeCreated: snapshot.timeCreated,
    },
  };
}

export function renderGallery(gallery: GalleryRecord): JsonObject {
  return {
    id: gallery.id,
    name: gallery.name,
    type: 'Microsoft.Compute/galleries',
    location: gallery.location,
    tags: gallery.tags,
    properties: deepCopy(gallery.properties),
  };
}

export function renderImageDefinition(image: ImageRecord): JsonObject {
  return {
    id: image.id,
    name: image.name,
    type: 'Microsoft.Compute/galleries/images',
    location: image.location,
    tags: image.tags,
    properties: deepCopy(image.properties),
  };
}

/** An image version; with `expandReplication`, `properties.replicationStatus` as `$expand=ReplicationStatus` returns it. */
export function renderImageVersion(
  state: ComputeState,
  version: VersionRecord,
  expandReplication: boolean,
): JsonObject {
  const properties = deepCopy(version.properties);
  if (expandReplication) {
    const summary = state.replicationProgress(version.id);
    const states = summary.map((status) => status.state);
    const aggregatedState = states.includes('Failed')
      ? 'Failed'
      : states.every((status) => status === 'Completed')
        ? 'Completed'
        : states.includes('Replicating')
          ? 'InProgress'
          : 'Unknown';
    properties.replicationStatus = {
      aggregatedState,
      summary: summary.map((status) => ({
        region: status.region,
        state: status.state,
        progress: status.progress,
        ...(status.details ? { details: status.details } : {}),
      })),
    };
  }
  return {
    id: version.id,
    name: version.name,
    type: 'Microsoft.Compute/galleries/images/versions',
    location: version.location,
    tags: version.tags,
    properties,
  };
}
