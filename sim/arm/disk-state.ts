/**
 * Managed disks (OS disks of instances, created with them) and snapshots of the simulated compute
 * state: lookups, snapshot copies on simulated time, and deletes.
 */
import { durationOf } from '../contracts.js';
import {
  ComputeCore,
  type DiskRecord,
  type PendingTransition,
  snapshotInfo,
  type SnapshotRecord,
  versionSourceId,
} from './compute-core.js';
import { deepCopy, deterministicUuid, idKey } from './compute-json.js';
import {
  type Completion,
  ComputeError,
  type DiskContent,
  type DiskInfo,
  type FailureCheck,
  type SnapshotInfo,
} from './compute-types.js';

/**
 * What the world makes of a copy of a managed disk at the instant it is taken (e.g. a snapshot of a
 * running VM's disk whose filesystem is not frozen is only crash-consistent); `frozen` is recorded.
 */
export type CopyObserver = (
  sourceDiskId: string,
  content: DiskContent,
) => { content: DiskContent; frozen: boolean } | undefined;

export class DiskState extends ComputeCore {
  private copyObserver: CopyObserver | undefined;

  /** Lets the world judge copies of disks (snapshots) as they are taken. */
  setCopyObserver(observer: CopyObserver): void {
    this.copyObserver = observer;
  }

  /** What the world keeps on a disk (identity files, pulled images); a copy. */
  getDiskContent(id: string): DiskContent | undefined {
    const content = this.disks.get(idKey(id))?.content;
    return content ? deepCopy(content) : undefined;
  }

  /** The images a disk's container runtime holds, as stored (not a copy: to compare, not to change). */
  peekDiskImages(id: string): readonly string[] | undefined {
    return this.disks.get(idKey(id))?.content?.images;
  }

  /** Replaces a disk's content (the world writing to the disk: a prep script, a boot, pulled images). */
  setDiskContent(id: string, content: DiskContent): void {
    const record = this.disks.get(idKey(id));
    if (!record) throw new ComputeError(404, 'NotFound', `Resource '${id}' was not found.`);
    record.content = deepCopy(content);
  }

  /** The content a snapshot copied from its source; a copy. */
  getSnapshotContent(id: string): DiskContent | undefined {
    const content = this.snapshots.get(idKey(id))?.content;
    return content ? deepCopy(content) : undefined;
  }

  /** Managed disks of a resource group, by name. */
  listDisks(subscriptionId: string, resourceGroup: string): DiskInfo[] {
    const prefix = idKey(`/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/`);
    return [...this.disks.values()]
      .filter((disk) => disk.resourceKey.startsWith(prefix))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((record) => diskInfo(record));
  }

  getDisk(id: string): DiskInfo | undefined {
    const record = this.disks.get(idKey(id));
    return record ? diskInfo(record) : undefined;
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
    // A snapshot is a point-in-time copy: what the disk holds now, whatever happens to it later.
    const sourceContent = sourceDisk?.content ?? sourceSnapshot?.content;
    if (sourceContent) record.content = deepCopy(sourceContent);
    if (sourceDisk && record.content) {
      const judged = this.copyObserver?.(sourceDisk.id, deepCopy(record.content));
      if (judged) {
        record.content = judged.content;
        record.sourceFrozen = judged.frozen;
      }
    }
    this.snapshots.set(idKey(id), record);
    const pending: PendingTransition = { kind: 'snapshot', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(
      durationOf(this.latency, 'snapshotCreateSeconds'),
      `snapshot ${name}`,
      () => {
        if (record.pending !== pending) return;
        record.pending = undefined;
        const error = failure?.();
        record.provisioningState = error ? 'Failed' : 'Succeeded';
        pending.onComplete?.(error ? { status: 'Failed', error } : { status: 'Succeeded' });
      },
    );
    record.pending = pending;
    return snapshotInfo(record);
  }

  // ---------------------------------------------------------------- managed disks from snapshots

  /**
   * Creates a managed disk copying a snapshot (`createOption: Copy`), with the snapshot's content, in the
   * zone given; Succeeded after `diskCreateSeconds`. A repeated PUT of the same copy is idempotent; one
   * from another source is refused (the source is immutable). The snapshot must have Succeeded.
   */
  createDiskFromSnapshot(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    input: {
      location: string;
      zone?: string;
      sourceResourceId: string;
      skuName?: string;
      tags: Record<string, string>;
    },
    onComplete?: Completion,
    failure?: FailureCheck,
  ): DiskInfo {
    const id = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/disks/${name}`;
    const existing = this.disks.get(idKey(id));
    if (existing) {
      if (
        existing.createOption !== 'Copy' ||
        idKey(existing.sourceResourceId ?? '') !== idKey(input.sourceResourceId)
      ) {
        throw new ComputeError(
          409,
          'PropertyChangeNotAllowed',
          "Changing property 'creationData.sourceResourceId' is not allowed.",
        );
      }
      existing.tags = { ...input.tags };
      const pending = existing.pending;
      if (pending && onComplete) {
        const earlier = pending.onComplete;
        pending.onComplete = (outcome) => {
          earlier?.(outcome);
          onComplete(outcome);
        };
      } else {
        onComplete?.({ status: 'Succeeded' });
      }
      return diskInfo(existing);
    }
    const snapshot = this.snapshots.get(idKey(input.sourceResourceId));
    if (!snapshot) {
      throw new ComputeError(404, 'NotFound', `Resource '${input.sourceResourceId}' was not found.`);
    }
    if (snapshot.provisioningState !== 'Succeeded') {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Snapshot ${snapshot.name} is ${snapshot.provisioningState}; a disk can be created from it once it Succeeded.`,
      );
    }
    const record: DiskRecord = {
      resourceKey: idKey(id),
      id,
      name,
      resourceGroup,
      location: input.location,
      diskSizeGB: snapshot.diskSizeGB,
      hyperVGeneration: snapshot.hyperVGeneration,
      osType: snapshot.osType,
      skuName: input.skuName ?? 'Standard_LRS',
      uniqueId: deterministicUuid(`disk:${idKey(id)}`),
      timeCreated: this.nowIso(),
      createOption: 'Copy',
      sourceResourceId: snapshot.id,
      provisioningState: 'Creating',
      tags: { ...input.tags },
    };
    if (input.zone) record.zone = input.zone;
    if (snapshot.content) record.content = deepCopy(snapshot.content);
    this.disks.set(idKey(id), record);
    const pending: PendingTransition = { kind: 'disk', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(
      durationOf(this.latency, 'diskCreateSeconds'),
      `disk ${name}`,
      () => {
        if (record.pending !== pending) return;
        record.pending = undefined;
        const error = failure?.();
        record.provisioningState = error ? 'Failed' : 'Succeeded';
        pending.onComplete?.(error ? { status: 'Failed', error } : { status: 'Succeeded' });
      },
    );
    record.pending = pending;
    return diskInfo(record);
  }

  /**
   * Deletes a managed disk after `diskDeleteSeconds`; refused while it is attached to a VM (an OS disk
   * always is) or an image version is being built from it. On `failure` the disk stays.
   */
  deleteDisk(id: string, onComplete?: Completion, failure?: FailureCheck): boolean {
    const record = this.disks.get(idKey(id));
    if (!record) return false;
    if (record.managedBy) {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Disk ${record.name} is attached to VM ${record.managedBy}.`,
      );
    }
    const user = [...this.versions.values()].find(
      (version) =>
        version.properties.provisioningState === 'Creating' &&
        idKey(versionSourceId(version) ?? '') === idKey(id),
    );
    if (user) {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Disk ${record.name} is in use by gallery image version '${user.id}' that is being created.`,
      );
    }
    this.preempt(record.pending, 'delete');
    record.pending = undefined;
    const before = record.provisioningState;
    record.provisioningState = 'Deleting';
    this.scheduler.after(durationOf(this.latency, 'diskDeleteSeconds'), `delete disk ${record.name}`, () => {
      const error = failure?.();
      if (error) {
        record.provisioningState = before === 'Creating' ? 'Failed' : before;
        onComplete?.({ status: 'Failed', error });
        return;
      }
      this.disks.delete(idKey(id));
      onComplete?.({ status: 'Succeeded' });
    });
    return true;
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
    this.scheduler.after(
      durationOf(this.latency, 'snapshotDeleteSeconds'),
      `delete snapshot ${record.name}`,
      () => {
        const error = failure?.();
        if (error) {
          record.provisioningState = before === 'Creating' ? 'Failed' : before;
          onComplete?.({ status: 'Failed', error });
          return;
        }
        this.snapshots.delete(idKey(id));
        onComplete?.({ status: 'Succeeded' });
      },
    );
    return true;
  }
}

function diskInfo(record: DiskRecord): DiskInfo {
  const { resourceKey: _key, content: _content, pending: _pending, ...info } = record;
  return deepCopy(info);
}
