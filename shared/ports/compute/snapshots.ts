/** The port to disk snapshots (contract: index.ts). */
import type { Snapshot } from '../../domain/compute.js';
import type { NamedByCaller } from './named-by-caller.js';

export interface SnapshotRequest extends NamedByCaller {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
  readonly location: string;
  readonly sourceDiskId: string;
  readonly incremental: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

export interface SnapshotsPort {
  get(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot>;
  /** Every snapshot of a resource group (the reaper finds ours by their tags). */
  list(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]>;
  request(request: SnapshotRequest): Promise<void>;
  requestDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void>;
}
