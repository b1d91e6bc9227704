/**
 * The Azure and lease side of retiring one node: record the retirement on the pool lease,
 * scale the scale set out by one (surge), see the new instance and its node, and count what the window
 * retired. Each step is idempotent: a retried activity or a resumed run finds what the first try did.
 */
import { TerminalError } from '../domain/errors.js';
import { LEASE_ANNOTATIONS } from '../domain/ownership.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { sameResourceId } from '../domain/resource-id.js';
import { retiredInWindowRecord } from '../domain/retired-in-window.js';
import type { RetirementRecord } from '../domain/retirement-record.js';
import { parseRetirementRecord, writeRetirementRecord } from '../domain/retirement-record.js';
import { poolMemberNodes, resourceIdOfNode } from './node-scan.js';
import type { Fence } from './pool-lease.js';
import { writeLeaseRecord } from './pool-lease.js';
import type { ClusterHandle } from './refresh-dependencies.js';

/** Records the retirement on the lease, then asks for one more instance unless the scale set has it. */
export async function startSurge(
  handle: Pick<ClusterHandle, 'kube' | 'compute'>,
  fence: Fence,
  scaleSet: ScaleSetRef,
  record: RetirementRecord,
  surge: boolean,
  now: Date,
): Promise<void> {
  await writeLeaseRecord(
    handle.kube,
    fence,
    LEASE_ANNOTATIONS.retirement,
    (current) => {
      const existing = parseRetirementRecord(current);
      // A retried write keeps what the first one recorded (its prior capacity in particular).
      if (typeof existing === 'object' && existing.run === record.run && existing.node === record.node) {
        return current ?? writeRetirementRecord(record);
      }
      return writeRetirementRecord(record);
    },
    now,
  );
  if (!surge) return;
  const current = await handle.compute.scaleSets.get(scaleSet);
  if ((current.capacity ?? 0) > record.priorCapacity) return;
  await handle.compute.scaleSets.requestChange(scaleSet, {
    capacity: record.priorCapacity + 1,
    ...(current.etag === undefined ? {} : { ifMatch: current.etag }),
  });
}

export interface SurgeObservation {
  readonly instanceId: string;
  readonly provisioningState: string;
  readonly node?: { readonly name: string; readonly ready: boolean };
}

/** The instances not in `baseline` (the surge's), each with its node once it joined. */
export async function observeSurge(
  handle: Pick<ClusterHandle, 'kube' | 'compute'>,
  scaleSet: ScaleSetRef,
  baseline: readonly string[],
): Promise<SurgeObservation[]> {
  const instances = await handle.compute.instances.list(scaleSet);
  const added = instances.filter((instance) => !baseline.includes(instance.instanceId));
  if (added.length === 0) return [];
  const nodes = await poolMemberNodes(handle.kube, instances, added);
  return added.map((instance) => {
    const node = nodes.find((candidate) => sameResourceId(resourceIdOfNode(candidate), instance.resourceId));
    return {
      instanceId: instance.instanceId,
      provisioningState: instance.provisioningState,
      ...(node === undefined
        ? {}
        : {
            node: {
              name: node.name,
              ready:
                !node.unschedulable &&
                node.conditions.some(
                  (condition) => condition.type === 'Ready' && condition.status === 'True',
                ),
            },
          }),
    };
  });
}

/** Writes the surge's instance into the run's record (the reaper gives back exactly that one). */
export async function noteSurgeInstance(
  handle: Pick<ClusterHandle, 'kube'>,
  fence: Fence,
  instanceId: string,
  now: Date,
): Promise<void> {
  await writeLeaseRecord(
    handle.kube,
    fence,
    LEASE_ANNOTATIONS.retirement,
    (current) => {
      const record = parseRetirementRecord(current);
      if (typeof record !== 'object') {
        throw new TerminalError(
          'RetirementRecordMissing',
          `recording surge instance ${instanceId}: the pool lease has no readable retirement record`,
        );
      }
      return writeRetirementRecord({ ...record, surgeInstanceId: instanceId });
    },
    now,
  );
}

/** Removes the retirement record (the node is retired or given back, the pool has its size). */
export async function clearRetirementRecord(
  handle: Pick<ClusterHandle, 'kube'>,
  fence: Fence,
  now: Date,
): Promise<void> {
  await writeLeaseRecord(handle.kube, fence, LEASE_ANNOTATIONS.retirement, () => '', now);
}

/** Node `node` retired in the window that opened at `openedAt` (counted once however often recorded). */
export async function countRetired(
  handle: Pick<ClusterHandle, 'kube'>,
  fence: Fence,
  openedAt: string,
  node: string,
  now: Date,
): Promise<void> {
  await writeLeaseRecord(
    handle.kube,
    fence,
    LEASE_ANNOTATIONS.retiredInWindow,
    (current) => retiredInWindowRecord(current, openedAt, node),
    now,
  );
}

/** What a retirement record on the lease left: the record, and which of its instances still exist. */
export interface RetirementLeftover {
  readonly record: RetirementRecord;
  readonly retiredInstanceExists: boolean;
  /** The surge's instance and its node, when it still exists. */
  readonly surge?: { readonly instanceId: string; readonly node?: string };
}

/**
 * Reads the lease's retirement record of a run other than `holder` (a dead one) and what of it is left;
 * undefined when there is none (or it is the holder's own), `damaged` when it cannot be read.
 */
export async function readRetirementLeftover(
  handle: Pick<ClusterHandle, 'kube' | 'compute'>,
  lease: { readonly namespace: string; readonly name: string },
  scaleSet: ScaleSetRef,
  holder: string,
): Promise<RetirementLeftover | 'damaged' | undefined> {
  const value = (await handle.kube.leases.get(lease.namespace, lease.name))?.annotations[
    LEASE_ANNOTATIONS.retirement
  ];
  const record = parseRetirementRecord(value);
  if (record === undefined || record === 'damaged') return record;
  if (record.run === holder) return undefined;
  const instances = await handle.compute.instances.list(scaleSet);
  const retiredInstanceExists = instances.some((instance) => instance.instanceId === record.instanceId);
  let surgeInstance = instances.find((instance) => instance.instanceId === record.surgeInstanceId);
  if (surgeInstance === undefined && record.surgeInstanceId === undefined) {
    // The run died between its scale-out and seeing the new instance: the newest one created since.
    const since = Date.parse(record.startedAt);
    surgeInstance = instances
      .filter((instance) => instance.createdAt !== undefined && Date.parse(instance.createdAt) >= since)
      .sort((a, b) => Date.parse(b.createdAt ?? '') - Date.parse(a.createdAt ?? ''))[0];
  }
  if (surgeInstance === undefined) return { record, retiredInstanceExists };
  const [node] = await poolMemberNodes(handle.kube, instances, [surgeInstance]);
  return {
    record,
    retiredInstanceExists,
    surge: { instanceId: surgeInstance.instanceId, ...(node === undefined ? {} : { node: node.name }) },
  };
}
