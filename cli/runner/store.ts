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

/** A saved record: its fields as JSON text, its events each as the JSON text of that event. */
interface SavedRecord {
  readonly fields: string;
  readonly history: readonly string[];
  readonly inbox: readonly string[];
}

/**
 * Keeps deep copies in memory (tests, dry runs, the fleet bench). A run saves after every event, and its
 * history only grows (the runner appends events and never changes one it recorded), so each event's text
 * is kept by the event object itself: a save writes the new events and the record's other fields, not
 * the whole history again (which made a run's saves quadratic in its length).
 */
export function createMemoryStore(): InstanceStore & { readonly saves: number } {
  const records = new Map<string, SavedRecord>();
  const textOfEvent = new WeakMap<object, string>();
  let saves = 0;
  const eventText = (event: HistoryEvent): string => {
    let text = textOfEvent.get(event);
    if (text === undefined) {
      text = JSON.stringify(event);
      textOfEvent.set(event, text);
    }
    return text;
  };
  return {
    get saves() {
      return saves;
    },
    load(instanceId) {
      const saved = records.get(instanceId);
      if (saved === undefined) return Promise.resolve(undefined);
      const parseEvents = (texts: readonly string[]): unknown[] =>
        texts.map((text): unknown => JSON.parse(text));
      return Promise.resolve(
        InstanceRecord.parse({
          ...(JSON.parse(saved.fields) as object),
          history: parseEvents(saved.history),
          inbox: parseEvents(saved.inbox),
        }),
      );
    },
    save(record) {
      saves += 1;
      const { history, inbox, ...fields } = record;
      records.set(record.instanceId, {
        fields: JSON.stringify(fields),
        history: history.map(eventText),
        inbox: inbox.map(eventText),
      });
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

/**
 * Keeps the runner's own record objects, copied only when loaded: for a command that keeps no run (plan,
 * status, release, cancel), whose runner holds every instance it runs in memory until it exits and never
 * loads one back. The memory store's copy of every event as JSON text doubled what such a run holds:
 * `status` at 20 000 nodes carries its 20 000 rows (4.7 MB of JSON) in an activity's result and in the
 * orchestration's output, and the copies added 11 MiB to the heap a full collection leaves, which V8's
 * next limit grows from (docs/scale.md, "The commands at 20 000 nodes"). A load gives the record as it is
 * now, which may include changes the runner made since its last save.
 */
export function createReferenceStore(): InstanceStore {
  const records = new Map<string, InstanceRecord>();
  return {
    load(instanceId) {
      const record = records.get(instanceId);
      return Promise.resolve(
        record === undefined ? undefined : InstanceRecord.parse(structuredClone(record)),
      );
    },
    save(record) {
      records.set(record.instanceId, record);
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
