// The local durable runner's public surface: what it runs (the registry), how it is configured, what
// it reports about an instance, and what it can be asked to do (see runner.ts for what it reproduces).
import type { LogLevel } from '@azure/functions';
import type { ActivityHandler, OrchestrationHandler } from 'durable-functions';

import type { Clock } from './clock.js';
import type { FailureDetails, HistoryEvent } from './history.js';
import type { InstanceStore, RuntimeStatus } from './store.js';

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
  /**
   * The Durable extension's `extendedSessionsEnabled`: an instance's orchestrator stays in memory between
   * its episodes, each continued with its new events only instead of replaying the whole history. Default
   * off: a replay per episode is what finds an orchestrator that is not deterministic, which is what
   * tests run this runner for. A process that loads an instance (resume) replays it whole either way.
   */
  extendedSessions?: boolean;
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

/**
 * An orchestration by its handle (the product's functions/orchestration.ts makes them): its registered
 * name and, as a type only, the input it takes. Structural, so the runner stays the product's host.
 */
export interface OrchestrationRef<Input> {
  readonly name: string;
  readonly io?: { readonly input: Input };
}

export interface DurableRunner {
  /**
   * Starts an instance and runs it until it completes, fails, or only waits for external events
   * (or timers beyond the horizon). Refuses an id whose instance is still Pending or Running. By a
   * handle, the input is checked against the orchestration's; its output is read with the product's
   * `outputOf(handle, status)`.
   */
  startOrchestration<Input>(
    orchestration: OrchestrationRef<Input>,
    input: NoInfer<Input>,
    instanceId?: string,
  ): Promise<OrchestrationStatus>;
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
