// What the local runner keeps per orchestration instance while it runs (its record, the work its last
// replay waits for) and how an instance is shown (OrchestrationStatus). Shared by the runner's modules.
import { randomUUID } from 'node:crypto';

// @azure/functions is a bundled CommonJS module: Node cannot see its named exports from ESM.
import azureFunctions from '@azure/functions';
import type { OrchestrationHandler } from 'durable-functions';

import { LOCAL_DURABLE_CLIENT_INPUT } from '../../functions/instance-status.activity.js';
import type { OrchestrationStatus, RunnerOptions } from './api.js';
import type { Clock } from './clock.js';
import type { SdkReplay } from './durable-internals.js';
import type { HistoryEvent } from './history.js';
import { failureDetailsOf, fromPayload, historyEvent } from './history.js';
import type { InstanceRecord, InstanceStore, RuntimeStatus } from './store.js';

export type PendingWork =
  | { kind: 'activity'; id: number; name: string; input: string | undefined }
  | { kind: 'timer'; id: number; fireAt: number; canceled: () => boolean }
  | { kind: 'sub-orchestration'; id: number; name: string; input: string | undefined; childId: string };

export interface Live {
  record: InstanceRecord;
  fn: OrchestrationHandler;
  /** Work the last replay waits for, by sequence number. */
  pending: Map<number, PendingWork>;
  /** External event names the last replay waits for. */
  events: string[];
  /** Sequence numbers whose work this process already started (in the current execution). */
  dispatched: Set<number>;
  needsEpisode: boolean;
  /** A new execution of the same instance id replaced this one: nothing of it is saved or run again. */
  superseded?: boolean;
  saveChain: Promise<void>;
  /**
   * The last episode's replay, alive, while nothing but episodes changed the history: the next episode
   * continues it with its new events (episode.ts). Absent after a load, a failure or a continue-as-new.
   */
  session?: ReplaySession;
}

export interface ReplaySession {
  readonly fn: OrchestrationHandler;
  readonly executionId: string;
  /** The history's length when the replay had processed all of it. */
  readonly historyLength: number;
  readonly replay: SdkReplay;
}

/** Keeps a replay of the whole recorded history for the next episode to continue (extended sessions). */
export function keepSession(options: RunnerOptions, live: Live, replay: SdkReplay): void {
  if (options.extendedSessions !== true) return;
  live.session = {
    fn: live.fn,
    executionId: live.record.executionId,
    historyLength: live.record.history.length,
    replay,
  };
}

/** Takes the kept replay when it still stands for the recorded history (nothing but episodes changed it). */
export function takeSession(live: Live): SdkReplay | undefined {
  const session = live.session;
  live.session = undefined;
  const current =
    session !== undefined &&
    session.fn === live.fn &&
    session.executionId === live.record.executionId &&
    session.historyLength === live.record.history.length;
  return current ? session.replay : undefined;
}

const TERMINAL: ReadonlySet<RuntimeStatus> = new Set(['Completed', 'Failed', 'Terminated']);
const MAX_INSTANCE_ID_LENGTH = 256;

/** Azure rejects these in instance ids (DurableClient.cs IsInvalidCharacter). */
export function validateInstanceId(instanceId: string): void {
  const invalid = [...instanceId].some(
    (char) => '/\\?#'.includes(char) || char.charCodeAt(0) < 0x20 || char === '\u007f',
  );
  if (instanceId.length === 0 || instanceId.length > MAX_INSTANCE_ID_LENGTH || invalid) {
    throw new Error(
      `validating instance id '${instanceId}': must be 1-${MAX_INSTANCE_ID_LENGTH} characters without / \\ ? # or control characters`,
    );
  }
}

export function isTerminal(record: InstanceRecord): boolean {
  return TERMINAL.has(record.runtimeStatus);
}

export function played(event: HistoryEvent): HistoryEvent {
  return { ...event, IsPlayed: true };
}

/**
 * A copy of an event the SDK may change without changing ours: it turns each `Timestamp` string into a
 * Date, at the top and inside nested objects (Utils.parseTimestampsAsDates). Top-level fields are copied;
 * nested objects (failure details) are cloned. Events are flat, so this is most of the price of
 * structuredClone, which each episode paid for the whole history.
 */
export function sdkCopy(event: HistoryEvent): HistoryEvent {
  const copy: Record<string, unknown> = { ...event };
  for (const [key, value] of Object.entries(copy)) {
    if (typeof value === 'object' && value !== null) copy[key] = structuredClone(value);
  }
  return copy as HistoryEvent;
}

export function toStatus(record: InstanceRecord, live: Live | undefined): OrchestrationStatus {
  const waitingFor: OrchestrationStatus['waitingFor'] = {
    activities: [],
    timers: [],
    subOrchestrations: [],
    events: [],
  };
  if (live !== undefined && !isTerminal(record)) {
    for (const work of live.pending.values()) {
      if (work.kind === 'activity') waitingFor.activities.push(work.name);
      else if (work.kind === 'timer' && !work.canceled())
        waitingFor.timers.push(new Date(work.fireAt).toISOString());
      else if (work.kind === 'sub-orchestration') waitingFor.subOrchestrations.push(work.childId);
    }
    waitingFor.events.push(...live.events);
  }
  return {
    name: record.name,
    instanceId: record.instanceId,
    parentInstanceId: record.parentInstanceId,
    runtimeStatus: record.runtimeStatus,
    input: fromPayload(record.input),
    output: fromPayload(record.output),
    customStatus: fromPayload(record.customStatus),
    createdTime: new Date(record.createdTime),
    lastUpdatedTime: new Date(record.lastUpdatedTime),
    failure: record.failure,
    generation: record.generation,
    historyLength: record.history.length,
    waitingFor,
  };
}

/** A new instance: top-level or the child of a sub-orchestration call. */
export interface NewInstance {
  readonly instanceId: string;
  readonly name: string;
  readonly fn: OrchestrationHandler;
  readonly input: string | undefined;
  readonly parent?: { instanceId: string; taskId: number; executionId: string };
}

/** What the runner's modules (episodes, sub-orchestrations) need from the runner. */
export interface InstanceHost {
  readonly options: RunnerOptions;
  readonly clock: Clock;
  readonly store: InstanceStore;
  readonly live: Map<string, Live>;
  persist(live: Live): Promise<void>;
  setStatus(live: Live, status: RuntimeStatus): void;
  emitEvents(live: Live, events: HistoryEvent[]): void;
  emitStatus(live: Live): void;
  /** Appends an event to the instance's inbox and persists it; the next episode replays it. */
  deliver(live: Live, executionId: string, event: HistoryEvent): Promise<void>;
  /** Wakes the loop. */
  signal(): void;
  getStatus(instanceId: string): Promise<OrchestrationStatus | undefined>;
  /** Loads an instance into this process and works out what it waits for. */
  ensureLive(instanceId: string): Promise<Live>;
  createInstance(init: NewInstance): Live;
}

/** The record of an instance about to start: Pending, its ExecutionStarted waiting in the inbox. */
export function newInstanceRecord(init: NewInstance, nowMs: number): InstanceRecord {
  const now = new Date(nowMs).toISOString();
  const record: InstanceRecord = {
    formatVersion: 1,
    instanceId: init.instanceId,
    name: init.name,
    executionId: randomUUID(),
    runtimeStatus: 'Pending',
    createdTime: now,
    lastUpdatedTime: now,
    generation: 0,
    history: [],
    inbox: [historyEvent('ExecutionStarted', nowMs, { Name: init.name, Input: init.input })],
    actions: [],
  };
  if (init.input !== undefined) record.input = init.input;
  if (init.parent !== undefined) {
    record.parentInstanceId = init.parent.instanceId;
    record.parentTaskId = init.parent.taskId;
    record.parentExecutionId = init.parent.executionId;
  }
  return record;
}

/** Runs one activity the instance waits for and delivers its completion (or failure) event. */
export async function runActivity(
  host: InstanceHost,
  live: Live,
  work: Extract<PendingWork, { kind: 'activity' }>,
): Promise<void> {
  const executionId = live.record.executionId;
  const instanceId = live.record.instanceId;
  const handler = host.options.activities[work.name];
  let event: HistoryEvent;
  try {
    if (handler === undefined) throw new Error(`no activity named '${work.name}' is registered`);
    const context = new azureFunctions.InvocationContext({
      functionName: work.name,
      invocationId: randomUUID(),
      logHandler: (level, ...args) => host.options.onLog?.(level, instanceId, args),
      triggerMetadata: { instanceId },
    });
    // What the host's durable client input binding gives an activity that declares it: here, a client
    // that reads this runner's instances (functions/instance-status.activity.ts).
    context.extraInputs.set(LOCAL_DURABLE_CLIENT_INPUT, new LocalDurableClient(host));
    const result: unknown = await handler(fromPayload(work.input), context);
    event = historyEvent('TaskCompleted', host.clock.now(), {
      TaskScheduledId: work.id,
      Result: JSON.stringify(result ?? null),
    });
  } catch (error) {
    const details = failureDetailsOf(error, host.options.exceptionProperties);
    event = historyEvent('TaskFailed', host.clock.now(), {
      TaskScheduledId: work.id,
      Reason: details.ErrorMessage,
      Details: details.StackTrace ?? details.ErrorMessage,
      FailureDetails: details,
    });
  }
  await host.deliver(live, executionId, event);
}

/**
 * The durable client the runner hands its activities: shaped like durable-functions' DurableClient, with
 * `getStatus` on the prototype and an unknown id reported as the same HTTP 404 error, so an activity that
 * would mishandle the real client (copy it with a spread, take a 404 for something else) fails here too.
 */
class LocalDurableClient {
  constructor(private readonly host: Pick<InstanceHost, 'getStatus'>) {}

  async getStatus(instanceId: string): Promise<OrchestrationStatus> {
    const status = await this.host.getStatus(instanceId);
    if (status === undefined) {
      throw new Error(
        'DurableClient error: Durable Functions extension replied with HTTP 404 response. This usually means ' +
          `we could not find any data associated with the instanceId provided: ${instanceId}.`,
      );
    }
    return status;
  }
}
