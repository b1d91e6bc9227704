/**
 * The record of a VM a run stopped, kept in Azure itself (a tag on the scale set, like the canary record):
 * written before the power-off is asked for and removed once the VM runs again, so that a VM whose Node
 * object is gone (`kubectl delete node` while it was stopped) is still found, started and given back by
 * the reaper and `release`. The node's marker annotation is the other record; this one survives the node.
 * One tag per VM: `vmss-prototype.stopped.<instance id>` = the run id (Uniform instance ids and Flexible
 * VM names are valid in a tag name; Azure compares tag names case-insensitively).
 *
 * A CAPZ pool's scale set is CAPZ's (its PUT would drop a tag of ours, docs/capz.md), and Cluster API does
 * not start or replace a MachinePool machine whose VM is stopped and whose Node is deleted: the same
 * records are kept on the pool lease instead (LEASE_ANNOTATIONS.stoppedVms), one JSON object of
 * instance id → run id, read and changed through the tag form below so that both follow one rule.
 */

export const STOP_TAG_PREFIX = 'vmss-prototype.stopped.';

export interface StopRecord {
  /** Uniform: the instance id; Flexible: the member VM's name. */
  readonly instanceId: string;
  /** The run that stopped it (or was about to). */
  readonly runId: string;
}

/** The record as a tag, added to the scale set's own tags. */
export function stopRecordTag(record: StopRecord): Record<string, string> {
  if (record.instanceId === '' || /[<>%&\\?/]/.test(record.instanceId)) {
    throw new RangeError(`recording a stopped VM: ${JSON.stringify(record.instanceId)} cannot name a tag`);
  }
  return { [`${STOP_TAG_PREFIX}${record.instanceId}`]: record.runId };
}

/** Every stopped-VM record on a scale set's tags; one with no run id is read as the run `unknown`. */
export function parseStopRecords(tags: Readonly<Record<string, string>>): StopRecord[] {
  const records: StopRecord[] = [];
  for (const [key, value] of Object.entries(tags)) {
    if (!key.toLowerCase().startsWith(STOP_TAG_PREFIX)) continue;
    const instanceId = key.slice(STOP_TAG_PREFIX.length);
    if (instanceId === '') continue;
    records.push({ instanceId, runId: value === '' ? 'unknown' : value });
  }
  return records;
}

/**
 * The tags without the record of `instanceId`; with `runId`, only when the record is that run's (a
 * record another run wrote since stays).
 */
export function withoutStopRecord(
  tags: Readonly<Record<string, string>>,
  instanceId: string,
  runId?: string,
): Record<string, string> {
  const key = `${STOP_TAG_PREFIX}${instanceId}`.toLowerCase();
  return Object.fromEntries(
    Object.entries(tags).filter(
      ([name, value]) => name.toLowerCase() !== key || (runId !== undefined && value !== runId),
    ),
  );
}

/** Where a pool's stopped-VM records are kept: its scale set's tags, or its lease (a CAPZ pool). */
export type StopRecordPlace = 'scale-set' | 'pool-lease';

/** The records of the lease annotation's value (absent, empty or unreadable: none). */
export function parseLeaseStopRecords(value: string | undefined): StopRecord[] {
  return parseStopRecords(tagsOfLeaseRecords(value));
}

/** The lease annotation's value with `record` added (a record of the same VM replaced). */
export function withLeaseStopRecord(value: string | undefined, record: StopRecord): string {
  return leaseRecordsOfTags({
    ...withoutStopRecord(tagsOfLeaseRecords(value), record.instanceId),
    ...stopRecordTag(record),
  });
}

/**
 * The lease annotation's value without the record of `instanceId` (with `runId`, only that run's), as
 * withoutStopRecord; the empty string when no record is left.
 */
export function withoutLeaseStopRecord(
  value: string | undefined,
  instanceId: string,
  runId?: string,
): string {
  return leaseRecordsOfTags(withoutStopRecord(tagsOfLeaseRecords(value), instanceId, runId));
}

/** The annotation's records as tags (`vmss-prototype.stopped.<id>` = run id); unreadable JSON reads as none. */
function tagsOfLeaseRecords(value: string | undefined): Record<string, string> {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const tags: Record<string, string> = {};
  for (const [instanceId, runId] of Object.entries(parsed)) {
    if (instanceId !== '' && typeof runId === 'string') tags[`${STOP_TAG_PREFIX}${instanceId}`] = runId;
  }
  return tags;
}

function leaseRecordsOfTags(tags: Readonly<Record<string, string>>): string {
  const records = parseStopRecords(tags);
  if (records.length === 0) return '';
  return JSON.stringify(Object.fromEntries(records.map((r) => [r.instanceId, r.runId])));
}
