/**
 * Disk snapshots over @azure/arm-compute: the donor's OS disk copied into a full snapshot, read while it
 * is being made, deleted after the image version copied it. Requests are idempotent by name.
 */
import type { Snapshot } from '../../domain/compute.js';
import { ignoreNotFound } from '../../domain/errors.js';
import type { SnapshotRequest, SnapshotsPort } from '../../ports/compute/snapshots.js';
import type { ArmClients } from './arm-clients.js';
import { createByName } from './create-by-name.js';
import { withArmErrors } from './errors.js';
import { toSnapshot } from './to-domain-gallery.js';

export class ArmSnapshots implements SnapshotsPort {
  constructor(private readonly clients: ArmClients) {}

  async get(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot> {
    const action = `reading snapshot ${resourceGroup}/${name}`;
    const client = this.clients.client(subscriptionId, action);
    const snapshot = await withArmErrors(action, () => client.snapshots.get(resourceGroup, name));
    return toSnapshot(snapshot, resourceGroup);
  }

  async list(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]> {
    const action = `listing snapshots of resource group ${resourceGroup}`;
    const client = this.clients.client(subscriptionId, action);
    return withArmErrors(action, async () => {
      const snapshots: Snapshot[] = [];
      for await (const snapshot of client.snapshots.listByResourceGroup(resourceGroup)) {
        snapshots.push(toSnapshot(snapshot, resourceGroup));
      }
      return snapshots;
    });
  }

  async request(request: SnapshotRequest): Promise<void> {
    const action = `requesting snapshot ${request.resourceGroup}/${request.name}`;
    const client = this.clients.client(request.subscriptionId, action);
    await createByName({
      action,
      newName: request.newName === true,
      read: () => client.snapshots.get(request.resourceGroup, request.name),
      what: 'snapshot',
      nameTakenCode: 'SnapshotNameTaken',
      sourceId: request.sourceDiskId,
      existingOf: (existing) => ({
        provisioningState: existing.provisioningState,
        sourceId: existing.creationData?.sourceResourceId,
      }),
      create: () =>
        client.snapshots.beginCreateOrUpdate(request.resourceGroup, request.name, {
          location: request.location,
          tags: { ...request.tags },
          incremental: request.incremental,
          creationData: { createOption: 'Copy', sourceResourceId: request.sourceDiskId },
        }),
    });
  }

  async requestDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    const action = `requesting deletion of snapshot ${resourceGroup}/${name}`;
    const client = this.clients.client(subscriptionId, action);
    await withArmErrors(action, () => client.snapshots.beginDelete(resourceGroup, name)).catch(
      ignoreNotFound,
    );
  }
}
