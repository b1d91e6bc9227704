// Local durable runner: plays the Durable Functions host for the product's orchestrators without
// Azure. It keeps each instance's history, replays the orchestrator through durable-functions' own
// engine (durable-internals.ts), executes the actions it asks for, appends the result events and
// replays again, persisting after every event batch so a killed process can resume.
//
// Host behaviour it reproduces: one episode = OrchestratorStarted + the events delivered since the last
// one + the events scheduling new work + OrchestratorCompleted; the work is numbered and scheduled as the
// Durable extension's out-of-process shim does (extension-shim.ts), re-sent sub-actions of a Task.any or
// Task.all included, and a sub-orchestration started over a running id replaces that run (children.ts);
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

import type { OrchestrationHandler } from 'durable-functions';

import type { DurableRunner, OrchestrationRef, OrchestrationStatus, RunnerOptions } from './api.js';
import { notifyParent, startChildren } from './children.js';
import { type Clock, createVirtualClock } from './clock.js';
import { checkReplay, episode, failInstance, replayInstance } from './episode.js';
import { type HistoryEvent, historyEvent, toPayload } from './history.js';
import {
  type InstanceHost,
  isTerminal,
  keepSession,
  type Live,
  type NewInstance,
  newInstanceRecord,
  played,
  runActivity,
  toStatus,
  validateInstanceId,
} from './instance.js';
import { NonDeterminismError } from './non-determinism.js';
import { collectPending } from './pending-work.js';
import { createMemoryStore, type InstanceRecord, type InstanceStore, type RuntimeStatus } from './store.js';

export function createDurableRunner(options: RunnerOptions): DurableRunner {
  return new Runner(options);
}

class Runner implements DurableRunner, InstanceHost {
  readonly store: InstanceStore;
  readonly clock: Clock;
  private readonly maxConcurrent: number;
  readonly live = new Map<string, Live>();
  private readonly background = new Set<Promise<void>>();
  private readonly reported = new WeakSet<HistoryEvent>();
  private runningActivities = 0;
  private loop: Promise<void> | undefined;
  private fatal: Error | undefined;
  private signalled = false;
  private wake: (() => void) | undefined;

  constructor(readonly options: RunnerOptions) {
    this.store = options.store ?? createMemoryStore();
    this.clock = options.clock ?? createVirtualClock({ startMs: Date.now() });
    this.maxConcurrent = Math.max(1, options.maxConcurrentActivities ?? 8);
  }

  async startOrchestration(
    orchestration: string | OrchestrationRef<unknown>,
    input?: unknown,
    instanceId: string = randomUUID(),
  ): Promise<OrchestrationStatus> {
    const name = typeof orchestration === 'string' ? orchestration : orchestration.name;
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

  createInstance(init: NewInstance): Live {
    const live = this.makeLive(newInstanceRecord(init, this.clock.now()), init.fn);
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
  async ensureLive(instanceId: string): Promise<Live> {
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
      await notifyParent(this, live);
      return live;
    }
    if (record.inbox.length > 0 || record.history.length === 0) {
      live.needsEpisode = true;
      return live;
    }
    // Nothing new to replay: a replay of the recorded history tells what is still outstanding.
    const replay = await replayInstance(this, live, record.history.map(played));
    const divergence = checkReplay(live, replay);
    if (divergence !== undefined) {
      await failInstance(this, live, divergence);
      throw divergence;
    }
    if (replay.failed || replay.state.isDone) {
      // Crashed between the deciding replay and saving its outcome: one more episode records it.
      live.needsEpisode = true;
      return live;
    }
    const failure = collectPending(live, replay, this.clock.now(), record.history);
    if (failure !== undefined) {
      await failInstance(this, live, failure);
      if (failure instanceof NonDeterminismError) throw failure;
      return live;
    }
    // The next episode continues this replay (extended sessions) instead of replaying again.
    keepSession(this.options, live, replay);
    await startChildren(this, live);
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
      if (ready.length > 0 && this.clock.virtual && this.background.size > 0) {
        // Virtual time: which of two concurrent activities answers first is the machine's speed, not
        // the world's. Replay only once everything in flight has answered, in the order it was sent,
        // so the same world gives the same history however loaded the machine is.
        await this.waitForSignal();
        continue;
      }
      if (ready.length > 0) {
        for (const live of ready) {
          if (live.superseded === true) continue;
          if (this.clock.virtual) sortCompletionsBySend(live.record.inbox);
          try {
            await episode(this, live);
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

  signal(): void {
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
          runActivity(this, live, work).finally(() => {
            this.runningActivities -= 1;
          }),
        );
      }
    }
  }

  /** Appends an event to the instance's inbox and persists it; the next episode replays it. */
  async deliver(live: Live, executionId: string, event: HistoryEvent): Promise<void> {
    if (isTerminal(live.record) || live.record.executionId !== executionId || live.superseded === true)
      return;
    live.record.inbox.push(event);
    live.needsEpisode = true;
    live.record.lastUpdatedTime = new Date(this.clock.now()).toISOString();
    await this.persist(live);
    this.emitEvents(live, [event]);
    this.signal();
  }

  persist(live: Live): Promise<void> {
    if (live.superseded === true) return Promise.resolve();
    const save = live.saveChain.then(() => this.store.save(live.record));
    live.saveChain = save.catch(() => undefined);
    return save;
  }

  setStatus(live: Live, status: RuntimeStatus): void {
    live.record.runtimeStatus = status;
    live.record.lastUpdatedTime = new Date(this.clock.now()).toISOString();
  }

  /** Reports each event once: delivered events when they reach the inbox, the rest with their episode. */
  emitEvents(live: Live, events: HistoryEvent[]): void {
    const onEvent = this.options.onEvent;
    if (onEvent === undefined) return;
    for (const event of events) {
      if (this.reported.has(event)) continue;
      this.reported.add(event);
      onEvent(live.record.instanceId, event);
    }
  }

  emitStatus(live: Live): void {
    this.options.onStatus?.(toStatus(live.record, live));
  }

  private async statusOf(instanceId: string): Promise<OrchestrationStatus> {
    const status = await this.getStatus(instanceId);
    if (status === undefined) throw new Error(`reading status of instance ${instanceId}: no such instance`);
    return status;
  }
}

/**
 * Puts the completions in an inbox (activities and sub-orchestrations by the id of the event that sent
 * them, timers by theirs) in the order they were sent, each into a slot a completion held; every other
 * event keeps its place.
 */
function sortCompletionsBySend(inbox: HistoryEvent[]): void {
  const sentId = (event: HistoryEvent): number | undefined => event.TaskScheduledId ?? event.TimerId;
  const slots = inbox.flatMap((event, index) => (sentId(event) === undefined ? [] : [index]));
  if (slots.length < 2) return;
  const sorted = slots
    .map((index) => inbox[index] as HistoryEvent)
    .sort((a, b) => (sentId(a) ?? 0) - (sentId(b) ?? 0));
  slots.forEach((slot, i) => {
    inbox[slot] = sorted[i] as HistoryEvent;
  });
}
