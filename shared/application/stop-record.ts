/**
 * Writes and removes the record of a VM a run stops (domain/stop-record.ts) on the scale set's tags: from
 * a fresh read, conditional on its etag (writeTags). Both are idempotent: a retry finds its work done.
 */
import type { ScaleSetRef } from '../domain/resource-id.js';
import type { StopRecord } from '../domain/stop-record.js';
import { stopRecordTag, withoutStopRecord } from '../domain/stop-record.js';
import type { ComputePorts } from '../ports/compute/index.js';
import { writeTags } from './canary.js';

/** Records that `record.runId` stops `record.instanceId`: before the power-off is asked for. */
export async function recordStop(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  record: StopRecord,
): Promise<void> {
  await writeTags(compute, scaleSet, (tags) => ({
    ...withoutStopRecord(tags, record.instanceId),
    ...stopRecordTag(record),
  }));
}

/**
 * Removes the record once the VM runs again (or is gone); with `runId`, only that run's record (the run
 * giving its own donor back), without it whatever run wrote it (the reaper, which judged that run dead).
 */
export async function clearStopRecord(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  instanceId: string,
  runId?: string,
): Promise<void> {
  await writeTags(compute, scaleSet, (tags) => withoutStopRecord(tags, instanceId, runId));
}
