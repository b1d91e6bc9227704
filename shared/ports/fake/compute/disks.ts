/** The fake managed disks port: copies of snapshots, attached through the instances port, deleted when free. */
import type { ManagedDisk } from '../../../domain/compute.js';
import { NotFoundError, TerminalError, TransientError } from '../../../domain/errors.js';
import { sameResourceId } from '../../../domain/resource-id.js';
import type { DiskFromSnapshotRequest, DisksPort } from '../../compute/disks.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';
import { refuseIfDeleting, snapshotKey, snapshotKeyOfId } from './keys.js';

export class FakeDisks implements DisksPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  get(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk> {
    return this.log.call('disks.get', [subscriptionId, resourceGroup, name], () => {
      for (const record of this.estate.instances.values()) this.estate.settleInstance(record);
      const value = this.estate.settleKey(
        this.estate.disks,
        snapshotKey(subscriptionId, resourceGroup, name),
      );
      if (value === undefined) {
        throw new NotFoundError('ResourceNotFound', `reading disk ${resourceGroup}/${name}: not found`);
      }
      return value;
    });
  }

  list(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]> {
    return this.log.call('disks.list', [subscriptionId, resourceGroup], () => {
      for (const record of this.estate.instances.values()) this.estate.settleInstance(record);
      const prefix = `${subscriptionId}/${resourceGroup}/`.toLowerCase();
      return [...this.estate.disks.keys()].flatMap((key) => {
        if (!key.startsWith(prefix)) return [];
        const value = this.estate.settleKey(this.estate.disks, key);
        return value === undefined ? [] : [value];
      });
    });
  }

  requestFromSnapshot(request: DiskFromSnapshotRequest): Promise<void> {
    return this.log.call('disks.requestFromSnapshot', [request], () => {
      const action = `requesting disk ${request.resourceGroup}/${request.name}`;
      const key = snapshotKey(request.subscriptionId, request.resourceGroup, request.name);
      const existing = this.estate.settleKey(this.estate.disks, key);
      if (existing !== undefined) {
        refuseIfDeleting(existing.provisioningState, action, 'disk');
        if (!sameResourceId(existing.sourceResourceId, request.sourceSnapshotId)) {
          throw new TerminalError('DiskNameTaken', `${action}: a disk with this name already exists`);
        }
        return;
      }
      if (
        this.estate.settleKey(this.estate.snapshots, snapshotKeyOfId(request.sourceSnapshotId)) === undefined
      ) {
        throw new NotFoundError('NotFound', `${action}: snapshot ${request.sourceSnapshotId} was not found`);
      }
      const value: ManagedDisk = {
        id: `/subscriptions/${request.subscriptionId}/resourceGroups/${request.resourceGroup}/providers/Microsoft.Compute/disks/${request.name}`,
        name: request.name,
        resourceGroup: request.resourceGroup,
        location: request.location,
        provisioningState: 'Creating',
        zones: request.zone === undefined ? [] : [request.zone],
        sourceResourceId: request.sourceSnapshotId,
        tags: { ...request.tags },
      };
      this.estate.disks.set(key, {
        value,
        pending: {
          to: { ...value, provisioningState: 'Succeeded' },
          at: this.estate.now() + this.estate.timings.diskCreation,
        },
      });
    });
  }

  requestDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    return this.log.call('disks.requestDeletion', [subscriptionId, resourceGroup, name], () => {
      for (const instance of this.estate.instances.values()) this.estate.settleInstance(instance);
      const key = snapshotKey(subscriptionId, resourceGroup, name);
      const existing = this.estate.settleKey(this.estate.disks, key);
      const record = this.estate.disks.get(key);
      if (existing === undefined || record === undefined || existing.provisioningState === 'Deleting') return;
      if (existing.managedBy !== undefined) {
        throw new TransientError(
          'OperationNotAllowed',
          `deleting disk ${resourceGroup}/${name}: it is attached to ${existing.managedBy}`,
        );
      }
      record.value = { ...existing, provisioningState: 'Deleting' };
      record.pending = { to: 'gone', at: this.estate.now() + this.estate.timings.diskDeletion };
    });
  }

  getImageVersionId(diskId: string): Promise<string | undefined> {
    return this.log.call('disks.getImageVersionId', [diskId], () =>
      this.estate.diskVersions.get(diskId.toLowerCase()),
    );
  }
}
