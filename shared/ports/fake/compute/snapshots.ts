/** The fake snapshots port: a snapshot ends as `nextOutcome` says once its time has passed. */
import type { Snapshot } from '../../../domain/compute.js';
import { NotFoundError, TerminalError } from '../../../domain/errors.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { SnapshotRequest, SnapshotsPort } from '../../compute/snapshots.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';
import { refuseIfDeleting, snapshotKey } from './keys.js';

export class FakeSnapshots implements SnapshotsPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  get(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot> {
    return this.log.call('snapshots.get', [subscriptionId, resourceGroup, name], () => {
      const key = snapshotKey(subscriptionId, resourceGroup, name);
      const value = this.estate.settleKey(this.estate.snapshots, key);
      if (value === undefined) {
        throw new NotFoundError('ResourceNotFound', `reading snapshot ${resourceGroup}/${name}: not found`);
      }
      return value;
    });
  }

  list(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]> {
    return this.log.call('snapshots.list', [subscriptionId, resourceGroup], () => {
      const prefix = `${subscriptionId}/${resourceGroup}/`.toLowerCase();
      return [...this.estate.snapshots.keys()].flatMap((key) => {
        if (!key.startsWith(prefix)) return [];
        const value = this.estate.settleKey(this.estate.snapshots, key);
        return value === undefined ? [] : [value];
      });
    });
  }

  request(request: SnapshotRequest): Promise<void> {
    return this.log.call('snapshots.request', [request], () => {
      const action = `requesting snapshot ${request.resourceGroup}/${request.name}`;
      const key = snapshotKey(request.subscriptionId, request.resourceGroup, request.name);
      const existing = this.estate.settleKey(this.estate.snapshots, key);
      if (existing !== undefined) {
        refuseIfDeleting(existing.provisioningState, action, 'snapshot');
        if (existing.sourceResourceId?.toLowerCase() !== request.sourceDiskId.toLowerCase()) {
          throw new TerminalError('SnapshotNameTaken', `${action}: a snapshot with this name already exists`);
        }
        return;
      }
      const outcome = this.estate.outcomes.snapshot.shift() ?? 'Succeeded';
      const value: Snapshot = {
        id: `/subscriptions/${request.subscriptionId}/resourceGroups/${request.resourceGroup}/providers/Microsoft.Compute/snapshots/${request.name}`,
        name: request.name,
        resourceGroup: request.resourceGroup,
        location: request.location,
        provisioningState: 'Creating',
        sourceResourceId: request.sourceDiskId,
        incremental: request.incremental,
        tags: { ...request.tags },
      };
      this.estate.snapshots.set(key, {
        value,
        pending: {
          to: { ...value, provisioningState: outcome },
          at: this.estate.now() + this.estate.timings.snapshot,
        },
      });
    });
  }

  requestDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    return this.log.call('snapshots.requestDeletion', [subscriptionId, resourceGroup, name], () => {
      const key = snapshotKey(subscriptionId, resourceGroup, name);
      const existing = this.estate.settleKey(this.estate.snapshots, key);
      const record = this.estate.snapshots.get(key);
      if (existing === undefined || record === undefined || existing.provisioningState === 'Deleting') return;
      record.value = { ...existing, provisioningState: 'Deleting' };
      record.pending = { to: 'gone', at: this.estate.now() + this.estate.timings.snapshotDeletion };
    });
  }
}
