/**
 * Managed disks over @azure/arm-compute: live capture's copy of the donor's OS disk, made from its
 * snapshot (`creationData.createOption: Copy`), read while it is being made or attached, and deleted once
 * the image version copied it. Requests are idempotent by name.
 */
import type { ManagedDisk } from '../../domain/compute.js';
import { ignoreNotFound, TerminalError } from '../../domain/errors.js';
import type { DiskFromSnapshotRequest, DisksPort } from '../../ports/compute/disks.js';
import type { ArmClients } from './arm-clients.js';
import { createByName } from './create-by-name.js';
import { withArmErrors } from './errors.js';
import { toManagedDisk } from './to-domain-gallery.js';

export class ArmDisks implements DisksPort {
  constructor(private readonly clients: ArmClients) {}

  async get(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk> {
    const action = `reading disk ${resourceGroup}/${name}`;
    const client = this.clients.client(subscriptionId, action);
    const disk = await withArmErrors(action, () => client.disks.get(resourceGroup, name));
    return toManagedDisk(disk, resourceGroup);
  }

  /** Every managed disk of a resource group (the reaper finds a dead run's copy disk by its tags). */
  async list(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]> {
    const action = `listing disks of resource group ${resourceGroup}`;
    const client = this.clients.client(subscriptionId, action);
    return withArmErrors(action, async () => {
      const disks: ManagedDisk[] = [];
      for await (const disk of client.disks.listByResourceGroup(resourceGroup)) {
        disks.push(toManagedDisk(disk, resourceGroup));
      }
      return disks;
    });
  }

  async requestFromSnapshot(request: DiskFromSnapshotRequest): Promise<void> {
    const action = `requesting disk ${request.resourceGroup}/${request.name}`;
    const client = this.clients.client(request.subscriptionId, action);
    await createByName({
      action,
      newName: request.newName === true,
      read: () => client.disks.get(request.resourceGroup, request.name),
      what: 'disk',
      nameTakenCode: 'DiskNameTaken',
      sourceId: request.sourceSnapshotId,
      existingOf: (existing) => ({
        provisioningState: existing.provisioningState,
        sourceId: existing.creationData?.sourceResourceId,
      }),
      create: () =>
        client.disks.beginCreateOrUpdate(request.resourceGroup, request.name, {
          location: request.location,
          tags: { ...request.tags },
          ...(request.zone === undefined ? {} : { zones: [request.zone] }),
          sku: { name: request.skuName },
          creationData: { createOption: 'Copy', sourceResourceId: request.sourceSnapshotId },
        }),
    });
  }

  async requestDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    const action = `requesting deletion of disk ${resourceGroup}/${name}`;
    const client = this.clients.client(subscriptionId, action);
    await withArmErrors(action, () => client.disks.beginDelete(resourceGroup, name)).catch(ignoreNotFound);
  }

  /** The gallery image version a managed disk was created from (`creationData.galleryImageReference.id`). */
  async getImageVersionId(diskId: string): Promise<string | undefined> {
    const action = `reading disk ${diskId}`;
    const parsed =
      /\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/disks\/([^/]+)$/i.exec(
        diskId,
      );
    if (parsed === null) {
      throw new TerminalError('InvalidDiskId', `${action}: not a managed disk id`);
    }
    const [, subscriptionId = '', resourceGroup = '', name = ''] = parsed;
    const client = this.clients.client(subscriptionId, action);
    const disk = await withArmErrors(action, () => client.disks.get(resourceGroup, name));
    const id = disk.creationData?.galleryImageReference?.id;
    return id === undefined || id === '' ? undefined : id;
  }
}
