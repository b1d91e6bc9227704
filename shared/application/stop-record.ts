/**
 * Writes and removes the record of a VM a run stops (domain/stop-record.ts) on the scale set's tags: from
 * a fresh read, conditional on its etag (writeTags). Both are idempotent: a retry finds its work done.
 * The removal can start from what the record's write left (its tags and etag) instead of a read: one
 * request instead of two when nobody wrote the scale set in between, the read when somebody did.
 * A CAPZ pool's records are on its lease instead (recordStopOnLease, clearLeaseStopRecord): written
 * conditional on the lease's resourceVersion, like every lease record (pool-lease.ts writeLeaseRecord).
 */
import { isConcurrentChange } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import { LEASE_ANNOTATIONS } from '../domain/ownership.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import type { StopRecord } from '../domain/stop-record.js';
import {
  stopRecordTag,
  withLeaseStopRecord,
  withoutLeaseStopRecord,
  withoutStopRecord,
} from '../domain/stop-record.js';
import type { ComputePorts } from '../ports/compute/index.js';
import type { KubernetesPorts } from '../ports/kubernetes/index.js';
import { writeTags, type WrittenTags } from './canary.js';
import { type Fence, type LeaseRef, writeLeaseRecord } from './pool-lease.js';

export type { WrittenTags } from './canary.js';

/**
 * Records that `record.runId` stops `record.instanceId`: before the power-off is asked for. Returns the
 * tags written and the scale set's etag after the write (for `clearStopRecord`'s `written`). With
 * `known` (tags and etag read earlier), written from them unread; a stale etag (412) reads them.
 */
export async function recordStop(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  record: StopRecord,
  known?: WrittenTags,
): Promise<WrittenTags> {
  return writeTags(
    compute,
    scaleSet,
    (tags) => ({
      ...withoutStopRecord(tags, record.instanceId),
      ...stopRecordTag(record),
    }),
    known,
  );
}

/**
 * Removes the record once the VM runs again (or is gone); with `runId`, only that run's record (the run
 * giving its own donor back), without it whatever run wrote it (the reaper, which judged that run dead).
 * With `written` (what `recordStop` returned), the tags are rewritten from it, conditional on its etag:
 * a scale set written since (412) is read again. Returns what it wrote, as recordStop does.
 */
export async function clearStopRecord(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  instanceId: string,
  runId?: string,
  written?: WrittenTags,
): Promise<WrittenTags> {
  const change = (tags: Readonly<Record<string, string>>) => withoutStopRecord(tags, instanceId, runId);
  if (written?.etag !== undefined) {
    const tags = change(written.tags);
    try {
      const answered = await compute.scaleSets.requestChange(scaleSet, { tags, ifMatch: written.etag });
      return { tags, ...definedOnly({ etag: answered.etag, image: written.image }) };
    } catch (error) {
      if (!isConcurrentChange(error)) throw error;
    }
  }
  return writeTags(compute, scaleSet, change);
}

/**
 * Records on the pool lease that `record.runId` stops `record.instanceId` (a CAPZ pool): before the
 * power-off is asked for, while `fence.runId` holds the lease (terminal `LeaseLost` otherwise).
 */
export async function recordStopOnLease(
  kube: KubernetesPorts,
  fence: Fence,
  record: StopRecord,
  now: Date,
): Promise<void> {
  await writeLeaseRecord(
    kube,
    fence,
    LEASE_ANNOTATIONS.stoppedVms,
    (current) => withLeaseStopRecord(current, record),
    now,
  );
}

/**
 * Removes the lease's record of `instanceId` once its VM runs again (or is gone); with `runId`, only that
 * run's. Whoever holds the lease: it only takes a record away. Nothing to do on an absent lease.
 */
export async function clearLeaseStopRecord(
  kube: KubernetesPorts,
  lease: LeaseRef,
  instanceId: string,
  now: Date,
  runId?: string,
): Promise<void> {
  await writeLeaseRecord(
    kube,
    { ...lease, runId: runId ?? '' },
    LEASE_ANNOTATIONS.stoppedVms,
    (current) => withoutLeaseStopRecord(current, instanceId, runId),
    now,
    { anyHolder: true },
  );
}
