// Persistent state of one orchestration instance and the pluggable store that keeps it
// (an in-memory store here; the crash-safe file store lives in file-store.ts).
import { z } from 'zod';

import { FailureDetails, HistoryEvent } from './history.js';

export const RuntimeStatus = z.enum(['Pending', 'Running', 'Completed', 'Failed', 'Terminated']);
export type RuntimeStatus = z.infer<typeof RuntimeStatus>;

/** One orchestrator action as recorded for the non-determinism check. */
export const RecordedAction = z.object({
  type: z.string(),
  name: z.string().optional(),
  input: z.string().optional(),
  fireAt: z.string().optional(),
  instanceId: z.string().optional(),
});
export type RecordedAction = z.infer<typeof RecordedAction>;

export const InstanceRecord = z.object({
  formatVersion: z.literal(1),
  instanceId: z.string().min(1),
  name: z.string().min(1),
  /** New for every start and every continue-as-new, like DTFx's ExecutionId. */
  executionId: z.string().min(1),
  parentInstanceId: z.string().optional(),
  /** The parent's sequence number of the SubOrchestrationInstanceCreated event. */
  parentTaskId: z.number().int().optional(),
  /** The parent's execution that created this child (ids repeat across executions). */
  parentExecutionId: z.string().optional(),
  /** JSON text of the current generation's input. */
  input: z.string().optional(),
  runtimeStatus: RuntimeStatus,
  createdTime: z.string(),
  lastUpdatedTime: z.string(),
  customStatus: z.string().optional(),
  output: z.string().optional(),
  failure: FailureDetails.optional(),
  /** How many times the instance continued as new. */
  generation: z.number().int().min(0),
  history: z.array(HistoryEvent),
  /** Events delivered but not yet replayed (they open the next episode). */
  inbox: z.array(HistoryEvent),
  actions: z.array(RecordedAction),
});
export type InstanceRecord = z.infer<typeof InstanceRecord>;

/** Where instance records live. `save` must replace the whole record atomically. */
export interface InstanceStore {
  load(instanceId: string): Promise<InstanceRecord | undefined>;
  save(record: InstanceRecord): Promise<void>;
  list(): Promise<string[]>;
  /** Forgets an instance (pruning finished runs); no-op when absent. */
  remove(instanceId: string): Promise<void>;
}

/** Keeps deep copies in memory (tests, dry runs). */
export function createMemoryStore(): InstanceStore & { readonly saves: number } {
  const records = new Map<string, string>();
  let saves = 0;
  return {
    get saves() {
      return saves;
    },
    load(instanceId) {
      const text = records.get(instanceId);
      return Promise.resolve(text === undefined ? undefined : InstanceRecord.parse(JSON.parse(text)));
    },
    save(record) {
      saves += 1;
      records.set(record.instanceId, JSON.stringify(record));
      return Promise.resolve();
    },
    list() {
      return Promise.resolve([...records.keys()].sort());
    },
    remove(instanceId) {
      records.delete(instanceId);
      return Promise.resolve();
    },
  };
}
