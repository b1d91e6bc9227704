/**
 * The state dir keeps the history of every refresh the CLI started, so an interrupted one can be resumed.
 * Finished runs older than a week are pruned when a refresh starts: their history serves nothing (a failed
 * run has already given its node back; what a run left behind is found from the cluster and Azure by
 * `release`), and the directory would grow forever.
 */
import type { InstanceRecord, InstanceStore } from './runner/index.js';

export const FINISHED_RUN_RETENTION_MS = 7 * 24 * 60 * 60_000;

const FINISHED = new Set(['Completed', 'Failed', 'Terminated']);

/** Removes finished runs last updated before `now - retention`; returns the ids removed. */
export async function pruneFinishedRuns(
  store: InstanceStore,
  nowMs: number,
  retentionMs = FINISHED_RUN_RETENTION_MS,
): Promise<string[]> {
  const records = new Map<string, InstanceRecord>();
  for (const instanceId of await store.list()) {
    try {
      const record = await store.load(instanceId);
      if (record !== undefined) records.set(instanceId, record);
    } catch {
      // Unreadable: left for a person to look at.
    }
  }
  const removed: string[] = [];
  const remove = async (instanceId: string): Promise<void> => {
    await store.remove(instanceId);
    removed.push(instanceId);
    // Its sub-orchestrations go with it (resuming a parent reloads its children).
    for (const [id, child] of records) if (child.parentInstanceId === instanceId) await remove(id);
  };
  for (const [instanceId, record] of records) {
    if (!FINISHED.has(record.runtimeStatus) || record.parentInstanceId !== undefined) continue;
    if (Date.parse(record.lastUpdatedTime) > nowMs - retentionMs) continue;
    await remove(instanceId);
  }
  return removed;
}
