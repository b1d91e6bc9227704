/**
 * The Azure and lease side of retiring one node: record the retirement on the pool lease,
 * scale the scale set out by one (surge), see the new instance and its node, and count what the window
 * retired. Each step is idempotent: a retried activity or a resumed run finds what the first try did.
 */
import type { ScaleSetInstance } from '../domain/compute.js';
import { isBeingDeleted } from '../domain/compute.js';
import {
  CONCURRENT_CHANGE,
  isConcurrentChange,
  messageOf,
  TerminalError,
  TransientError,
} from '../domain/errors.js';
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

/** What a node's surge start left: how to tell its instance, and what it asked for. */
export interface SurgeStart {
  /** The scale set's instance ids before the surge was asked: its instance is a new id not among them. */
  readonly baseline: readonly string[];
  /** The capacity the scale-out asked for; absent when none was asked (a spare stands in, surge off). */
  readonly capacityAsked?: number;
}

/**
 * Records the retirement on the lease, then — for a surge — scales the scale set out by one from the
 * capacity it has now (an autoscaler's or admin's scale-out meanwhile is their demand, not our surge: never
 * counted as one). The record keeps the instance ids before the scale-out (baseline) and, once ARM took
 * it, the capacity asked: the surge is a new instance not in the baseline, seen after our scale-out. The
 * record is written first, fenced by the lease: a run that lost its lease asks for nothing.
 *
 * Without a surge (a spare stands in), `plannedInstanceIds` (the run's plan's) is the baseline, unread:
 * no instance is told apart from it, since no scale-out of ours is recorded.
 *
 * Idempotent: a retry whose scale-out ARM took (capacity asked recorded) asks for nothing more. One whose
 * first try failed after ARM took the scale-out but before it was recorded asks again (the pool then ends
 * one node larger, never one short). A concurrent change (412 on If-Match) is retried from a new read.
 */
export async function startSurge(
  handle: Pick<ClusterHandle, 'kube' | 'compute'>,
  fence: Fence,
  scaleSet: ScaleSetRef,
  record: RetirementRecord,
  surge: boolean,
  now: Date,
  plannedInstanceIds?: readonly string[],
): Promise<SurgeStart> {
  const lease = await handle.kube.leases.get(fence.namespace, fence.name);
  const existing = parseRetirementRecord(lease?.annotations[LEASE_ANNOTATIONS.retirement]);
  const retried =
    typeof existing === 'object' && existing.run === record.run && existing.node === record.node
      ? existing
      : undefined;
  if (retried?.baseline !== undefined && (retried.capacityAsked !== undefined || !surge)) {
    return {
      baseline: retried.baseline,
      ...(retried.capacityAsked === undefined ? {} : { capacityAsked: retried.capacityAsked }),
    };
  }
  // A retried write keeps what the first one recorded (its prior capacity in particular).
  const kept = { ...record, ...(retried === undefined ? {} : { priorCapacity: retried.priorCapacity }) };
  // Without a surge of its own (a spare stands in) no instance is ever told apart from the baseline: the
  // ids the run's plan listed do, unread.
  const baseline =
    !surge && plannedInstanceIds !== undefined
      ? [...plannedInstanceIds]
      : (await handle.compute.instances.list(scaleSet)).map((instance) => instance.instanceId);
  await putRecord(handle, fence, { ...kept, baseline }, now);
  // The model only for the capacity to ask for: a retirement with a spare (keep-size's canary) reads none.
  if (!surge) return { baseline };
  const current = await handle.compute.scaleSets.get(scaleSet);
  const capacityAsked = (current.capacity ?? baseline.length) + 1;
  try {
    await handle.compute.scaleSets.requestChange(scaleSet, {
      capacity: capacityAsked,
      ...(current.etag === undefined ? {} : { ifMatch: current.etag }),
    });
  } catch (error) {
    // Someone scaled (or wrote) the scale set between our read and our request: read and decide again.
    if (isConcurrentChange(error))
      throw new TransientError(CONCURRENT_CHANGE, messageOf(error), { cause: error });
    throw error;
  }
  await putRecord(handle, fence, { ...kept, baseline, capacityAsked }, now);
  return { baseline, capacityAsked };
}

function putRecord(
  handle: Pick<ClusterHandle, 'kube'>,
  fence: Fence,
  record: RetirementRecord,
  now: Date,
): Promise<void> {
  return writeLeaseRecord(
    handle.kube,
    fence,
    LEASE_ANNOTATIONS.retirement,
    () => writeRetirementRecord(record),
    now,
  );
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
  // One ARM is deleting is gone already: the retired node's (the surge is then its replacement, it stays)
  // and the surge's (its give-back was asked, not to be asked again).
  const retiredInstanceExists = instances.some(
    (instance) => instance.instanceId === record.instanceId && !isBeingDeleted(instance),
  );
  const surgeInstance =
    record.surgeInstanceId !== undefined
      ? instances.find((instance) => instance.instanceId === record.surgeInstanceId)
      : unnotedSurge(record, instances);
  if (surgeInstance === undefined || isBeingDeleted(surgeInstance)) return { record, retiredInstanceExists };
  const [node] = await poolMemberNodes(handle.kube, instances, [surgeInstance]);
  return {
    record,
    retiredInstanceExists,
    surge: { instanceId: surgeInstance.instanceId, ...(node === undefined ? {} : { node: node.name }) },
  };
}

/**
 * The surge of a run that died between its scale-out and noting the new instance. With a baseline: none
 * unless ARM took the scale-out (capacity asked recorded), then the newest instance not in the baseline —
 * an outsider's instance is never taken for it when no surge was asked. A record written before baselines
 * were kept: the newest instance created since the record.
 */
function unnotedSurge(
  record: RetirementRecord,
  instances: readonly ScaleSetInstance[],
): ScaleSetInstance | undefined {
  const newest = (candidates: readonly ScaleSetInstance[]) =>
    [...candidates].sort((a, b) => Date.parse(b.createdAt ?? '') - Date.parse(a.createdAt ?? ''))[0];
  const baseline = record.baseline;
  if (baseline !== undefined) {
    if (record.capacityAsked === undefined) return undefined;
    return newest(instances.filter((instance) => !baseline.includes(instance.instanceId)));
  }
  const since = Date.parse(record.startedAt);
  return newest(
    instances.filter(
      (instance) => instance.createdAt !== undefined && Date.parse(instance.createdAt) >= since,
    ),
  );
}
