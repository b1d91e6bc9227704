// Local durable runner: plays the Durable Functions host for the product's orchestrators without
// Azure. It keeps each instance's history, replays the orchestrator through durable-functions' own
// engine (durable-internals.ts), executes the actions it asks for, appends the result events and
// replays again, persisting after every event batch so a killed process can resume.
//
// Host behaviour it reproduces (research/durable.md §2-§4): one episode = OrchestratorStarted + the
// events delivered since the last one + the events scheduling new work + OrchestratorCompleted;
// activities are at-least-once (scheduled but unrecorded completions run again after a crash);
// retries are host-side timers (DTFx RetryInterceptor, with the dummy timer after the last attempt);
// sub-orchestrations are instances of their own (default id `<parent>:<sequence>`); external events
// are buffered in the history until awaited; continue-as-new restarts the history (a new execution
// id) and drops events not yet awaited.
//
// Deliberate differences: the runner compares every replay with the recorded actions (type, name,
// input, timer time, child id) and fails the instance with a NonDeterminismError, where the host
// only compares kind and name. A retry whose retryTimeoutInMilliseconds elapsed fails the instance
// with an explanation instead of hanging as on Azure (durable-js #629). With the virtual clock
// activities take no time and timers fire only when nothing else runs. Entities and callHttp are
// not supported (the instance fails saying so).
import { randomUUID } from 'node:crypto';

// @azure/functions is a bundled CommonJS module: Node cannot see its named exports from ESM.
import azureFunctions, { type LogLevel } from '@azure/functions';
import type { ActivityHandler, OrchestrationHandler } from 'durable-functions';

import { type Clock, createVirtualClock } from './clock.js';
import { replayWithSdk, type SdkAction, type SdkReplay, type SdkTask } from './durable-internals.js';
import {
  actionInputToPayload,
  completedTaskId,
  FailureDetails,
  failureDetailsOf,
  fromPayload,
  type HistoryEvent,
  historyEvent,
  historyEventName,
  isSchedulingEvent,
  toPayload,
} from './history.js';
import {
  actionTypeName,
  findDivergence,
  flattenActions,
  NonDeterminismError,
  recordAction,
  UNSUPPORTED_ACTIONS,
} from './non-determinism.js';
import { decideRetry } from './retry.js';
import { createMemoryStore, type InstanceRecord, type InstanceStore, type RuntimeStatus } from './store.js';

export interface RunnerRegistry {
  /** Generator functions exactly as passed to `df.app.orchestration(name, fn)`. */
  orchestrators: Readonly<Record<string, OrchestrationHandler>>;
  /** Activity handlers exactly as passed to `df.app.activity(name, { handler })`. */
  activities: Readonly<Record<string, ActivityHandler>>;
}

export interface RunnerOptions extends RunnerRegistry {
  /** Default: in-memory. Use createFileStore(dir) to survive process death. */
  store?: InstanceStore;
  /** Default: a virtual clock starting now, so durable timers cost no wall time. */
  clock?: Clock;
  /** Activities running at once across all instances (the host's maxConcurrentActivityFunctions). */
  maxConcurrentActivities?: number;
  /** Timers due after this epoch-ms instant are left pending (bounds eternal orchestrations). */
  timerHorizonMs?: number;
  /**
   * Called for every event once it is persisted. Events persisted but not yet replayed when a
   * process died are reported again by the process that resumes the instance.
   */
  onEvent?: (instanceId: string, event: HistoryEvent) => void;
  /** Called whenever an instance's status changed and was persisted. */
  onStatus?: (status: OrchestrationStatus) => void;
  /** Receives `context.log` output of orchestrators and activities. Default: discarded. */
  onLog?: (level: LogLevel, instanceId: string, args: unknown[]) => void;
  /** Extra FailureDetails.Properties for an activity error (df.app.setExceptionPropertiesProvider). */
  exceptionProperties?: (error: Error) => Record<string, unknown> | undefined;
}

/** Mirrors durable-functions' DurableOrchestrationStatus, plus what a local operator wants to see. */
export interface OrchestrationStatus {
  name: string;
  instanceId: string;
  parentInstanceId: string | undefined;
  runtimeStatus: RuntimeStatus;
  input: unknown;
  output: unknown;
  customStatus: unknown;
  createdTime: Date;
  lastUpdatedTime: Date;
  failure: FailureDetails | undefined;
  /** How many times the instance continued as new. */
  generation: number;
  historyLength: number;
  /** What a non-terminal instance waits for (from its last replay). */
  waitingFor: { activities: string[]; timers: string[]; subOrchestrations: string[]; events: string[] };
}

export interface DurableRunner {
  /**
   * Starts an instance and runs it until it completes, fails, or only waits for external events
   * (or timers beyond the horizon). Refuses an id whose instance is still Pending or Running.
   */
  startOrchestration(name: string, input?: unknown, instanceId?: string): Promise<OrchestrationStatus>;
  /** Loads an instance (and its sub-orchestrations) from the store and runs it as far as it goes. */
  resume(instanceId: string): Promise<OrchestrationStatus>;
  /** Delivers an external event (buffered until the orchestrator waits for it) and runs on. */
  raiseEvent(instanceId: string, eventName: string, data?: unknown): Promise<OrchestrationStatus>;
  terminate(instanceId: string, reason: string): Promise<OrchestrationStatus>;
  getStatus(instanceId: string): Promise<OrchestrationStatus | undefined>;
  getHistory(instanceId: string): Promise<HistoryEvent[] | undefined>;
  /** Every instance in the store (sub-orchestrations included), sorted by instance id. */
  listInstances(): Promise<OrchestrationStatus[]>;
}

type PendingWork =
  | { kind: 'activity'; id: number; name: string; input: string | undefined }
  | { kind: 'timer'; id: number; fireAt: number; canceled: () => boolean }
  | { kind: 'sub-orchestration'; id: number; name: string; input: string | undefined; childId: string };

interface Live {
  record: InstanceRecord;
  fn: OrchestrationHandler;
  /** Work the last replay waits for, by sequence number. */
  pending: Map<number, PendingWork>;
  /** External event names the last replay waits for. */
  events: string[];
  /** Sequence numbers whose work this process already started (in the current execution). */
  dispatched: Set<number>;
  needsEpisode: boolean;
  saveChain: Promise<void>;
}

const TERMINAL: ReadonlySet<RuntimeStatus> = new Set(['Completed', 'Failed', 'Terminated']);
const MAX_INSTANCE_ID_LENGTH = 256;

/** Azure rejects these in instance ids (DurableClient.cs IsInvalidCharacter). */
function validateInstanceId(instanceId: string): void {
  const invalid = [...instanceId].some(
    (char) => '/\\?#'.includes(char) || char.charCodeAt(0) < 0x20 || char === '\u007f',
  );
  if (instanceId.length === 0 || instanceId.length > MAX_INSTANCE_ID_LENGTH || invalid) {
    throw new Error(
      `validating instance id '${instanceId}': must be 1-${MAX_INSTANCE_ID_LENGTH} characters without / \\ ? # or control characters`,
    );
  }
}

function isTerminal(record: InstanceRecord): boolean {
  return TERMINAL.has(record.runtimeStatus);
}

export function createDurableRunner(options: RunnerOptions): DurableRunner {
  return new Runner(options);
}

class Runner implements DurableRunner {
  private readonly store: InstanceStore;
  private readonly clock: Clock;
  private readonly maxConcurrent: number;
  private readonly live = new Map<string, Live>();
  private readonly background = new Set<Promise<void>>();
  private readonly reported = new WeakSet<HistoryEvent>();
  private runningActivities = 0;
  private loop: Promise<void> | undefined;
  private fatal: Error | undefined;
  private signalled = false;
  private wake: (() => void) | undefined;

  constructor(private readonly options: RunnerOptions) {
    this.store = options.store ?? createMemoryStore();
    this.clock = options.clock ?? createVirtualClock({ startMs: Date.now() });
    this.maxConcurrent = Math.max(1, options.maxConcurrentActivities ?? 8);
  }

  async startOrchestration(
    name: string,
    input?: unknown,
    instanceId: string = randomUUID(),
  ): Promise<OrchestrationStatus> {
    validateInstanceId(instanceId);
    const fn = this.orchestrator(name, `starting orchestration ${name}`);
    const loaded = this.live.get(instanceId)?.record ?? (await this.store.load(instanceId));
    // A concurrent start of the same id may have created it while the store was read: refuse it too.
    const existing = this.live.get(instanceId)?.record ?? loaded;
    if (existing !== undefined && !isTerminal(existing)) {
      throw new Error(
        `starting orchestration ${name}: instance ${instanceId} is already ${existing.runtimeStatus}`,
      );
    }
    const live = this.createInstance({ instanceId, name, fn, input: toPayload(input) });
    await this.persist(live);
    this.emitStatus(live);
    await this.run();
    return this.statusOf(instanceId);
  }

  async resume(instanceId: string): Promise<OrchestrationStatus> {
    await this.ensureLive(instanceId);
    await this.run();
    return this.statusOf(instanceId);
  }

  async raiseEvent(instanceId: string, eventName: string, data?: unknown): Promise<OrchestrationStatus> {
    const live = await this.ensureLive(instanceId);
    if (isTerminal(live.record)) {
      throw new Error(
        `raising event ${eventName} on instance ${instanceId}: instance is ${live.record.runtimeStatus}`,
      );
    }
    const event = historyEvent('EventRaised', this.clock.now(), { Name: eventName, Input: toPayload(data) });
    await this.deliver(live, live.record.executionId, event);
    await this.run();
    return this.statusOf(instanceId);
  }

  async terminate(instanceId: string, reason: string): Promise<OrchestrationStatus> {
    const live = await this.ensureLive(instanceId);
    if (!isTerminal(live.record)) {
      const event = historyEvent('ExecutionTerminated', this.clock.now(), { Input: toPayload(reason) });
      live.record.history.push(event);
      live.record.inbox = [];
      live.record.output = toPayload(reason);
      this.setStatus(live, 'Terminated');
      live.pending.clear();
      await this.persist(live);
      this.emitEvents(live, [event]);
      this.emitStatus(live);
    }
    return this.statusOf(instanceId);
  }

  async getStatus(instanceId: string): Promise<OrchestrationStatus | undefined> {
    const live = this.live.get(instanceId);
    if (live !== undefined) return toStatus(live.record, live);
    const record = await this.store.load(instanceId);
    return record === undefined ? undefined : toStatus(record, undefined);
  }

  async getHistory(instanceId: string): Promise<HistoryEvent[] | undefined> {
    const record = this.live.get(instanceId)?.record ?? (await this.store.load(instanceId));
    return record === undefined ? undefined : structuredClone(record.history);
  }

  async listInstances(): Promise<OrchestrationStatus[]> {
    const ids = new Set([...(await this.store.list()), ...this.live.keys()]);
    const statuses = await Promise.all([...ids].sort().map((id) => this.getStatus(id)));
    return statuses.filter((status) => status !== undefined);
  }

  // ---- instances -------------------------------------------------------------------------------

  private orchestrator(name: string, doing: string): OrchestrationHandler {
    const fn = this.options.orchestrators[name];
    if (fn === undefined) throw new Error(`${doing}: no orchestrator named '${name}' is registered`);
    return fn;
  }

  private createInstance(init: {
    instanceId: string;
    name: string;
    fn: OrchestrationHandler;
    input: string | undefined;
    parent?: { instanceId: string; taskId: number; executionId: string };
  }): Live {
    const now = new Date(this.clock.now()).toISOString();
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
      inbox: [historyEvent('ExecutionStarted', this.clock.now(), { Name: init.name, Input: init.input })],
      actions: [],
    };
    if (init.input !== undefined) record.input = init.input;
    if (init.parent !== undefined) {
      record.parentInstanceId = init.parent.instanceId;
      record.parentTaskId = init.parent.taskId;
      record.parentExecutionId = init.parent.executionId;
    }
    const live = this.makeLive(record, init.fn);
    live.needsEpisode = true;
    return live;
  }

  private makeLive(record: InstanceRecord, fn: OrchestrationHandler): Live {
    const live: Live = {
      record,
      fn,
      pending: new Map(),
      events: [],
      dispatched: new Set(),
      needsEpisode: false,
      saveChain: Promise.resolve(),
    };
    this.live.set(record.instanceId, live);
    return live;
  }

  /** Loads an instance into this process and works out what it waits for. */
  private async ensureLive(instanceId: string): Promise<Live> {
    const known = this.live.get(instanceId);
    if (known !== undefined) return known;
    const record = await this.store.load(instanceId);
    if (record === undefined) throw new Error(`loading instance ${instanceId}: no such instance`);
    const again = this.live.get(instanceId);
    if (again !== undefined) return again;
    const live = this.makeLive(record, this.orchestrator(record.name, `loading instance ${instanceId}`));
    if (this.clock.virtual) {
      // A fresh virtual clock continues from where the instance's history left off.
      const last = [...record.history, ...record.inbox].reduce(
        (t, e) => Math.max(t, Date.parse(e.Timestamp)),
        0,
      );
      await this.clock.sleepUntil(last);
    }
    if (isTerminal(record)) {
      await this.notifyParent(live);
      return live;
    }
    if (record.inbox.length > 0 || record.history.length === 0) {
      live.needsEpisode = true;
      return live;
    }
    // Nothing new to replay: a replay of the recorded history tells what is still outstanding.
    const replay = await this.replay(live, record.history.map(played));
    const divergence = this.checkReplay(live, replay);
    if (divergence !== undefined) {
      await this.failInstance(live, divergence);
      throw divergence;
    }
    if (replay.failed || replay.state.isDone) {
      // Crashed between the deciding replay and saving its outcome: one more episode records it.
      live.needsEpisode = true;
      return live;
    }
    const failure = this.collectPending(live, replay, this.clock.now(), record.history);
    if (failure !== undefined) {
      await this.failInstance(live, failure);
      if (failure instanceof NonDeterminismError) throw failure;
      return live;
    }
    await this.startChildren(live);
    return live;
  }

  // ---- the loop --------------------------------------------------------------------------------

  /** Runs until nothing can progress without an external event (or a timer past the horizon). */
  private async run(): Promise<void> {
    do {
      this.loop ??= this.loopOnce().finally(() => {
        this.loop = undefined;
      });
      await this.loop;
    } while (this.hasReadyWork());
    this.throwFatal();
  }

  private throwFatal(): void {
    const fatal = this.fatal;
    if (fatal !== undefined) {
      this.fatal = undefined;
      throw fatal;
    }
  }

  private hasReadyWork(): boolean {
    if (this.fatal !== undefined) return false;
    for (const live of this.live.values()) if (live.needsEpisode && !isTerminal(live.record)) return true;
    return false;
  }

  private async loopOnce(): Promise<void> {
    for (;;) {
      if (this.fatal !== undefined) return;
      this.fireDueTimers();
      const ready = [...this.live.values()].filter((live) => live.needsEpisode && !isTerminal(live.record));
      if (ready.length > 0) {
        for (const live of ready) {
          try {
            await this.episode(live);
          } catch (error) {
            this.fatal = error instanceof Error ? error : new Error(String(error));
            return;
          }
        }
        continue;
      }
      this.dispatchActivities();
      const next = this.nextTimer();
      const busy = this.background.size > 0;
      if (!busy && this.signalled) {
        this.signalled = false;
        continue;
      }
      if (!busy && next === undefined) return;
      if (next === undefined || (busy && this.clock.virtual)) {
        // Virtual time stands still while work is in flight, so in-flight work always beats a timer.
        await this.waitForSignal();
      } else if (this.clock.virtual) {
        await this.clock.sleepUntil(next.fireAt);
      } else {
        // Real time: a timer can fire while activities run, and an event can arrive while we sleep.
        const abort = new AbortController();
        await Promise.race([this.waitForSignal(), this.clock.sleepUntil(next.fireAt, abort.signal)]);
        abort.abort();
        this.wake = undefined;
      }
    }
  }

  private waitForSignal(): Promise<void> {
    if (this.signalled) {
      this.signalled = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  private signal(): void {
    if (this.wake !== undefined) this.wake();
    else this.signalled = true;
  }

  /** Tracks a background job; its failure stops the loop with the error. */
  private track(job: Promise<void>): void {
    const tracked = job
      .catch((error: unknown) => {
        this.fatal ??= error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => {
        this.background.delete(tracked);
        this.signal();
      });
    this.background.add(tracked);
  }

  private nextTimer(): { live: Live; fireAt: number } | undefined {
    let best: { live: Live; fireAt: number } | undefined;
    const horizon = this.options.timerHorizonMs ?? Number.POSITIVE_INFINITY;
    for (const live of this.live.values()) {
      if (isTerminal(live.record)) continue;
      for (const work of live.pending.values()) {
        if (work.kind !== 'timer' || live.dispatched.has(work.id) || work.canceled()) continue;
        if (work.fireAt > horizon) continue;
        if (best === undefined || work.fireAt < best.fireAt) best = { live, fireAt: work.fireAt };
      }
    }
    return best;
  }

  private fireDueTimers(): void {
    const now = this.clock.now();
    for (const live of this.live.values()) {
      if (isTerminal(live.record)) continue;
      for (const work of live.pending.values()) {
        if (work.kind !== 'timer' || live.dispatched.has(work.id) || work.canceled() || work.fireAt > now)
          continue;
        live.dispatched.add(work.id);
        const event = historyEvent('TimerFired', now, {
          TimerId: work.id,
          FireAt: new Date(work.fireAt).toISOString(),
        });
        this.track(this.deliver(live, live.record.executionId, event));
      }
    }
  }

  private dispatchActivities(): void {
    for (const live of this.live.values()) {
      if (isTerminal(live.record)) continue;
      for (const work of live.pending.values()) {
        if (this.runningActivities >= this.maxConcurrent) return;
        if (work.kind !== 'activity' || live.dispatched.has(work.id)) continue;
        live.dispatched.add(work.id);
        this.runningActivities += 1;
        this.track(
          this.runActivity(live, work).finally(() => {
            this.runningActivities -= 1;
          }),
        );
      }
    }
  }

  private async runActivity(live: Live, work: Extract<PendingWork, { kind: 'activity' }>): Promise<void> {
    const executionId = live.record.executionId;
    const instanceId = live.record.instanceId;
    const handler = this.options.activities[work.name];
    let event: HistoryEvent;
    try {
      if (handler === undefined) throw new Error(`no activity named '${work.name}' is registered`);
      const context = new azureFunctions.InvocationContext({
        functionName: work.name,
        invocationId: randomUUID(),
        logHandler: (level, ...args) => this.options.onLog?.(level, instanceId, args),
        triggerMetadata: { instanceId },
      });
      const result: unknown = await handler(fromPayload(work.input), context);
      event = historyEvent('TaskCompleted', this.clock.now(), {
        TaskScheduledId: work.id,
        Result: JSON.stringify(result ?? null),
      });
    } catch (error) {
      const details = failureDetailsOf(error, this.options.exceptionProperties);
      event = historyEvent('TaskFailed', this.clock.now(), {
        TaskScheduledId: work.id,
        Reason: details.ErrorMessage,
        Details: details.StackTrace ?? details.ErrorMessage,
        FailureDetails: details,
      });
    }
    await this.deliver(live, executionId, event);
  }

  /** Appends an event to the instance's inbox and persists it; the next episode replays it. */
  private async deliver(live: Live, executionId: string, event: HistoryEvent): Promise<void> {
    if (isTerminal(live.record) || live.record.executionId !== executionId) return;
    live.record.inbox.push(event);
    live.needsEpisode = true;
    live.record.lastUpdatedTime = new Date(this.clock.now()).toISOString();
    await this.persist(live);
    this.emitEvents(live, [event]);
    this.signal();
  }

  // ---- episodes --------------------------------------------------------------------------------

  private async replay(live: Live, history: HistoryEvent[]): Promise<SdkReplay> {
    const record = live.record;
    return replayWithSdk(live.fn, {
      instanceId: record.instanceId,
      parentInstanceId: record.parentInstanceId,
      functionName: record.name,
      history: structuredClone(history),
      input: fromPayload(record.input),
      log: (level, ...args) => this.options.onLog?.(level as LogLevel, record.instanceId, args),
    });
  }

  /** Compares the replay's actions with the recorded ones; returns the NonDeterminismError if any. */
  private checkReplay(live: Live, replay: SdkReplay): NonDeterminismError | undefined {
    const replayed = flattenActions(replay.state.actions).map(recordAction);
    const divergence = findDivergence(live.record.actions, replayed);
    if (divergence === undefined) return undefined;
    return new NonDeterminismError(
      live.record.instanceId,
      live.record.name,
      divergence.index,
      divergence.difference,
    );
  }

  private async episode(live: Live): Promise<void> {
    live.needsEpisode = false;
    const record = live.record;
    const now = this.clock.now();
    const consumed = record.inbox.slice();
    const delivered = [historyEvent('OrchestratorStarted', now), ...consumed];
    const replay = await this.replay(live, [...record.history.map(played), ...delivered]);
    // Terminated while the orchestrator ran: its decisions no longer count.
    if (isTerminal(record)) return;
    const divergence = this.checkReplay(live, replay);
    if (divergence !== undefined) {
      await this.failInstance(live, divergence, delivered, consumed.length);
      throw divergence;
    }
    const scheduling: HistoryEvent[] = [];
    if (!replay.failed && !replay.state.isDone) {
      const problem = this.collectPending(live, replay, now, [...record.history, ...consumed], scheduling);
      if (problem !== undefined) {
        await this.failInstance(live, problem, delivered, consumed.length);
        if (problem instanceof NonDeterminismError) throw problem;
        return;
      }
    }
    const appended = [...delivered, ...scheduling, historyEvent('OrchestratorCompleted', now)];
    record.inbox.splice(0, consumed.length);
    record.history.push(...appended);
    record.actions = flattenActions(replay.state.actions).map(recordAction);
    record.customStatus = toPayload(replay.state.customStatus);
    live.events = Object.keys(replay.executor.openEvents);

    if (replay.failed) {
      const details =
        failureFromSdk(replay) ??
        failureDetailsOf(replay.exception ?? new Error(replay.state.error ?? 'orchestrator failed'));
      await this.failInstance(live, details, [], 0, appended);
      return;
    }
    const continueAs = replay.state.actions
      .flat()
      .find((action) => actionTypeName(action.actionType) === 'ContinueAsNew');
    if (replay.state.isDone && continueAs !== undefined) {
      await this.continueAsNew(live, appended, continueAs, now);
      return;
    }
    if (replay.state.isDone) {
      const completed = historyEvent('ExecutionCompleted', now, {
        OrchestrationStatus: 'Completed',
        Result: JSON.stringify(replay.state.output ?? null),
      });
      record.history.push(completed);
      record.output = toPayload(replay.state.output);
      live.pending.clear();
      this.setStatus(live, 'Completed');
      await this.persist(live);
      this.emitEvents(live, [...appended, completed]);
      this.emitStatus(live);
      await this.notifyParent(live);
      return;
    }
    this.setStatus(live, 'Running');
    await this.persist(live);
    this.emitEvents(live, appended);
    this.emitStatus(live);
    await this.startChildren(live);
  }

  private async continueAsNew(
    live: Live,
    appended: HistoryEvent[],
    action: SdkAction,
    now: number,
  ): Promise<void> {
    const record = live.record;
    const input = actionInputToPayload(action.input);
    const marker = historyEvent('ContinueAsNew', now, { Input: input });
    record.generation += 1;
    record.executionId = randomUUID();
    record.history = [];
    record.actions = [];
    // Events raised but not yet awaited are dropped, as continueAsNew(input) does on Azure.
    record.inbox = [historyEvent('ExecutionStarted', now, { Name: record.name, Input: input })];
    if (input === undefined) delete record.input;
    else record.input = input;
    live.pending.clear();
    live.dispatched.clear();
    live.events = [];
    live.needsEpisode = true;
    this.setStatus(live, 'Running');
    await this.persist(live);
    this.emitEvents(live, [...appended, marker]);
    this.emitStatus(live);
  }

  /**
   * Reads the replay's open tasks into `live.pending`. Open ids without a scheduling event get one
   * (pushed to `scheduling`); ids with one are checked against it. Returns a NonDeterminismError for
   * a mismatch, or FailureDetails for work the runner cannot do.
   */
  private collectPending(
    live: Live,
    replay: SdkReplay,
    now: number,
    known: HistoryEvent[],
    scheduling: HistoryEvent[] = [],
  ): NonDeterminismError | FailureDetails | undefined {
    const record = live.record;
    const scheduled = new Map<number, HistoryEvent>();
    for (const event of known) if (isSchedulingEvent(event)) scheduled.set(event.EventId, event);
    live.pending.clear();
    const ids = Object.keys(replay.executor.openTasks)
      .map(Number)
      .filter((id) => Number.isInteger(id))
      .sort((a, b) => a - b);
    for (const id of ids) {
      const task = replay.executor.openTasks[String(id)];
      if (task === undefined) continue;
      const wanted = classify(task);
      if (wanted.kind === 'unsupported') {
        return unsupported(record, wanted.what);
      }
      const existing = scheduled.get(id);
      if (existing !== undefined) {
        const mismatch = compareScheduled(existing, wanted);
        if (mismatch !== undefined) {
          return new NonDeterminismError(
            record.instanceId,
            record.name,
            id,
            `(sequence number ${id}) ${mismatch}`,
          );
        }
      }
      switch (wanted.kind) {
        case 'activity': {
          const input = actionInputToPayload(wanted.action.input);
          const name = wanted.action.functionName ?? '';
          live.pending.set(id, { kind: 'activity', id, name, input });
          if (existing === undefined) {
            scheduling.push(historyEvent('TaskScheduled', now, { EventId: id, Name: name, Input: input }));
          }
          break;
        }
        case 'sub-orchestration': {
          const input = toPayload(wanted.action.input);
          const name = wanted.action.functionName ?? '';
          const childId =
            existing?.InstanceId ??
            wanted.action.instanceId ??
            (record.generation === 0
              ? `${record.instanceId}:${id}`
              : `${record.instanceId}:${record.generation}:${id}`);
          live.pending.set(id, { kind: 'sub-orchestration', id, name, input, childId });
          if (existing === undefined) {
            scheduling.push(
              historyEvent('SubOrchestrationInstanceCreated', now, {
                EventId: id,
                Name: name,
                Input: input,
                InstanceId: childId,
              }),
            );
          }
          break;
        }
        case 'timer': {
          const action = wanted.action;
          if (action.fireAt === undefined)
            return internalsChanged(record, 'CreateTimerAction.fireAt missing');
          const fireAt =
            existing?.FireAt !== undefined ? Date.parse(existing.FireAt) : action.fireAt.getTime();
          live.pending.set(id, { kind: 'timer', id, fireAt, canceled: () => action.isCanceled === true });
          if (existing === undefined) {
            scheduling.push(
              historyEvent('TimerCreated', now, { EventId: id, FireAt: new Date(fireAt).toISOString() }),
            );
          }
          break;
        }
        case 'retry-timer': {
          let fireAt: number;
          if (existing?.FireAt !== undefined) {
            fireAt = Date.parse(existing.FireAt);
          } else {
            const firstId =
              typeof wanted.retry.innerTask?.id === 'number' ? wanted.retry.innerTask.id : undefined;
            const first = firstId === undefined ? undefined : scheduled.get(firstId);
            const firstAt = first === undefined ? now : Date.parse(first.Timestamp);
            const options = wanted.retry.retryOptions;
            const failedAttempt = (wanted.retry.attemptNumber ?? 2) - 1;
            if (options === undefined) return internalsChanged(record, 'RetryableTask.retryOptions missing');
            const decision = decideRetry(options, failedAttempt, now - firstAt);
            if (decision.kind === 'timed-out') {
              return {
                ErrorType: 'RetryTimeoutNotSupported',
                ErrorMessage:
                  `running orchestration ${record.name} (instance ${record.instanceId}): retryTimeoutInMilliseconds ` +
                  `(${options.retryTimeoutInMilliseconds} ms) elapsed with attempts left; on Azure this orchestration ` +
                  'would hang without an error (azure-functions-durable-js#629). Bound retries with maxNumberOfAttempts.',
                IsNonRetriable: true,
              };
            }
            fireAt = decision.kind === 'retry' ? now + decision.delayMs : now;
          }
          live.pending.set(id, { kind: 'timer', id, fireAt, canceled: () => false });
          if (existing === undefined) {
            scheduling.push(
              historyEvent('TimerCreated', now, { EventId: id, FireAt: new Date(fireAt).toISOString() }),
            );
          }
          break;
        }
        default: {
          const exhaustive: never = wanted;
          return exhaustive;
        }
      }
    }
    return undefined;
  }

  /** Starts (or re-attaches to) the sub-orchestrations the last replay waits for. */
  private async startChildren(live: Live): Promise<void> {
    for (const work of live.pending.values()) {
      if (work.kind !== 'sub-orchestration' || live.dispatched.has(work.id)) continue;
      live.dispatched.add(work.id);
      await this.startChild(live, work);
    }
  }

  private async startChild(
    parent: Live,
    work: Extract<PendingWork, { kind: 'sub-orchestration' }>,
  ): Promise<void> {
    const parentRecord = parent.record;
    const mine = (record: InstanceRecord): boolean =>
      record.parentInstanceId === parentRecord.instanceId &&
      record.parentTaskId === work.id &&
      record.parentExecutionId === parentRecord.executionId;
    const known = this.live.get(work.childId);
    const existing = known?.record ?? (await this.store.load(work.childId));
    if (existing !== undefined && mine(existing)) {
      await this.ensureLive(work.childId);
      return;
    }
    const now = this.clock.now();
    const fn = this.options.orchestrators[work.name];
    if (fn === undefined || (existing !== undefined && !isTerminal(existing))) {
      const message =
        fn === undefined
          ? `no orchestrator named '${work.name}' is registered`
          : `instance ${work.childId} is already ${existing?.runtimeStatus}`;
      const details: FailureDetails = { ErrorType: 'Error', ErrorMessage: message, IsNonRetriable: true };
      const failed = historyEvent('SubOrchestrationInstanceFailed', now, {
        TaskScheduledId: work.id,
        Reason: message,
        Details: message,
        FailureDetails: details,
      });
      await this.deliver(parent, parentRecord.executionId, failed);
      return;
    }
    this.live.delete(work.childId);
    const child = this.createInstance({
      instanceId: work.childId,
      name: work.name,
      fn,
      input: work.input,
      parent: { instanceId: parentRecord.instanceId, taskId: work.id, executionId: parentRecord.executionId },
    });
    await this.persist(child);
    this.emitStatus(child);
    this.signal();
  }

  /** Hands a terminal child's outcome to its parent, unless the parent no longer waits for it. */
  private async notifyParent(child: Live): Promise<void> {
    const record = child.record;
    if (record.parentInstanceId === undefined || record.parentTaskId === undefined) return;
    const parent = await this.ensureLive(record.parentInstanceId);
    const work = parent.pending.get(record.parentTaskId);
    if (
      isTerminal(parent.record) ||
      parent.record.executionId !== record.parentExecutionId ||
      work?.kind !== 'sub-orchestration' ||
      work.childId !== record.instanceId ||
      parent.record.inbox.some((event) => completedTaskId(event) === record.parentTaskId)
    ) {
      return;
    }
    const now = this.clock.now();
    let event: HistoryEvent;
    if (record.runtimeStatus === 'Completed') {
      event = historyEvent('SubOrchestrationInstanceCompleted', now, {
        TaskScheduledId: record.parentTaskId,
        Result: record.output ?? 'null',
      });
    } else {
      const details: FailureDetails = record.failure ?? {
        ErrorType: 'Error',
        ErrorMessage: `sub-orchestration ${record.instanceId} was ${record.runtimeStatus}`,
      };
      event = historyEvent('SubOrchestrationInstanceFailed', now, {
        TaskScheduledId: record.parentTaskId,
        Reason: details.ErrorMessage,
        Details: details.StackTrace ?? details.ErrorMessage,
        FailureDetails: details,
      });
    }
    await this.deliver(parent, parent.record.executionId, event);
  }

  /**
   * Marks the instance Failed. `delivered` (OrchestratorStarted + the first `consumedInbox` inbox
   * events) is moved to the history first; `alreadyAppended` events are only reported.
   */
  private async failInstance(
    live: Live,
    failure: Error | FailureDetails,
    delivered: HistoryEvent[] = [],
    consumedInbox = 0,
    alreadyAppended: HistoryEvent[] = [],
  ): Promise<void> {
    const record = live.record;
    const details = failure instanceof Error ? failureDetailsOf(failure) : failure;
    const now = this.clock.now();
    const appended = [...alreadyAppended];
    if (delivered.length > 0) {
      record.inbox.splice(0, consumedInbox);
      appended.push(...delivered, historyEvent('OrchestratorCompleted', now));
      record.history.push(...appended.slice(alreadyAppended.length));
    }
    const failed = historyEvent('ExecutionCompleted', now, {
      OrchestrationStatus: 'Failed',
      Reason: details.ErrorMessage,
      FailureDetails: details,
    });
    record.history.push(failed);
    record.failure = details;
    live.pending.clear();
    this.setStatus(live, 'Failed');
    await this.persist(live);
    this.emitEvents(live, [...appended, failed]);
    this.emitStatus(live);
    await this.notifyParent(live);
  }

  // ---- persistence and observers ---------------------------------------------------------------

  /** Saves the whole record; saves of one instance run one after the other, in call order. */
  private persist(live: Live): Promise<void> {
    const save = live.saveChain.then(() => this.store.save(live.record));
    live.saveChain = save.catch(() => undefined);
    return save;
  }

  private setStatus(live: Live, status: RuntimeStatus): void {
    live.record.runtimeStatus = status;
    live.record.lastUpdatedTime = new Date(this.clock.now()).toISOString();
  }

  /** Reports each event once: delivered events when they reach the inbox, the rest with their episode. */
  private emitEvents(live: Live, events: HistoryEvent[]): void {
    const onEvent = this.options.onEvent;
    if (onEvent === undefined) return;
    for (const event of events) {
      if (this.reported.has(event)) continue;
      this.reported.add(event);
      onEvent(live.record.instanceId, event);
    }
  }

  private emitStatus(live: Live): void {
    this.options.onStatus?.(toStatus(live.record, live));
  }

  private async statusOf(instanceId: string): Promise<OrchestrationStatus> {
    const status = await this.getStatus(instanceId);
    if (status === undefined) throw new Error(`reading status of instance ${instanceId}: no such instance`);
    return status;
  }
}

type Wanted =
  | { kind: 'activity'; action: SdkAction }
  | { kind: 'sub-orchestration'; action: SdkAction }
  | { kind: 'timer'; action: SdkAction }
  | { kind: 'retry-timer'; retry: SdkTask }
  | { kind: 'unsupported'; what: string };

/** What an open SDK task stands for (see durable-internals.ts item 4). */
function classify(task: SdkTask): Wanted {
  if (task.action === 'noOp') {
    const retry = task.parent;
    const inner = retry?.innerTask?.action;
    if (retry === undefined || inner === undefined || inner === 'noOp') {
      return {
        kind: 'unsupported',
        what: 'an internal task without a retry parent (durable-functions internals changed?)',
      };
    }
    if (retry.isWaitingOnTimer === true) return { kind: 'retry-timer', retry };
    return classifyAction(inner);
  }
  return classifyAction(task.action);
}

function classifyAction(action: SdkAction): Wanted {
  const type = actionTypeName(action.actionType);
  switch (type) {
    case 'CallActivity':
    case 'CallActivityWithRetry':
      return { kind: 'activity', action };
    case 'CallSubOrchestrator':
    case 'CallSubOrchestratorWithRetry':
      return { kind: 'sub-orchestration', action };
    case 'CreateTimer':
      return { kind: 'timer', action };
    default:
      return { kind: 'unsupported', what: UNSUPPORTED_ACTIONS.has(type) ? type : `action ${type}` };
  }
}

function compareScheduled(event: HistoryEvent, wanted: Wanted): string | undefined {
  const recorded = historyEventName(event.EventType);
  let expected: string;
  let name: string | undefined;
  switch (wanted.kind) {
    case 'activity':
      expected = 'TaskScheduled';
      name = wanted.action.functionName;
      break;
    case 'sub-orchestration':
      expected = 'SubOrchestrationInstanceCreated';
      name = wanted.action.functionName;
      break;
    case 'timer':
    case 'retry-timer':
      expected = 'TimerCreated';
      break;
    case 'unsupported':
      return undefined;
  }
  if (recorded !== expected) {
    return `is a ${expected.replace(/(Scheduled|Created|InstanceCreated)$/, '')} in the replay but history has ${recorded}${event.Name === undefined ? '' : ` '${event.Name}'`}`;
  }
  if (name !== undefined && event.Name !== name) {
    return `schedules '${name}' in the replay but history has ${recorded} '${event.Name}'`;
  }
  return undefined;
}

function unsupported(record: InstanceRecord, what: string): FailureDetails {
  return {
    ErrorType: 'UnsupportedByLocalRunner',
    ErrorMessage: `running orchestration ${record.name} (instance ${record.instanceId}): the local runner does not support ${what}`,
    IsNonRetriable: true,
  };
}

function internalsChanged(record: InstanceRecord, what: string): FailureDetails {
  return unsupported(record, `this durable-functions version (${what})`);
}

/** The SDK reports a TaskFailedError that escaped the orchestrator with its own failure details. */
function failureFromSdk(replay: SdkReplay): FailureDetails | undefined {
  const parsed = FailureDetails.safeParse(replay.state.failureDetails);
  return parsed.success ? parsed.data : undefined;
}

function played(event: HistoryEvent): HistoryEvent {
  return { ...event, IsPlayed: true };
}

function toStatus(record: InstanceRecord, live: Live | undefined): OrchestrationStatus {
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
