/**
 * The record of a VM a run stopped, kept in Azure itself (a tag on the scale set, like the canary record):
 * written before the power-off is asked for and removed once the VM runs again, so that a VM whose Node
 * object is gone (`kubectl delete node` while it was stopped) is still found, started and given back by
 * the reaper and `release`. The node's marker annotation is the other record; this one survives the node.
 * One tag per VM: `vmss-prototype.stopped.<instance id>` = the run id (Uniform instance ids and Flexible
 * VM names are valid in a tag name; Azure compares tag names case-insensitively).
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
