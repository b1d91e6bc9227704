// The few durable-functions 3.5 internals the local runner relies on, typed and in one place,
// so an upgrade of the package breaks here (and in tests/cli/runner) rather than silently.
//
// Why internals at all: the package root exports no replay entry point. The runner feeds histories
// to the package's own replay engine instead of a hand-made context, which needs:
//
// 1. node_modules/durable-functions/lib/src/util/testingUtils.js — `createOrchestrator(fn)` (exactly
//    what `df.app.orchestration` registers) and `DurableOrchestrationInput` (the trigger payload the
//    extension sends). Not exported from the root, and lib/src ships no .d.ts: imported whole (a
//    CommonJS module's default export) and typed here; durable-functions-internals.d.ts declares it.
//    A static import, so the CLI's bundle holds one copy of the package, the one the orchestrators use.
// 2. lib/src/orchestrations/Orchestrator.js sets `context.df` to a real DurableOrchestrationContext
//    when it is undefined (we pass the root-exported DummyOrchestrationContext), and
//    lib/src/orchestrations/DurableOrchestrationContext.js keeps the executor in
//    `context.df.taskOrchestratorExecutor`.
// 3. lib/src/orchestrations/TaskOrchestrationExecutor.js: after `execute`, `openTasks` maps each
//    sequence number to the task still waiting for a completion event, `openEvents` maps external
//    event names to waiting tasks, `exception` is the orchestrator's own error. The host learns which
//    ids to write from its own replay; the runner reads them here because retry timers and retried
//    attempts get ids while *events* are processed (RetryableTask), which the returned actions do not
//    show.
// 4. lib/src/task/*.js: `NoOpTask` (`action === 'noOp'`) children of a `RetryableTask` (`retryOptions`,
//    `innerTask`, `isWaitingOnTimer`, `attemptNumber`) stand for retry timers and retried attempts;
//    `DFTimerTask`/`LongTimerTask` children carry `CreateTimerAction` (`fireAt`, `isCanceled`).
// 5. lib/src/actions/ActionType.js and lib/src/history/HistoryEventType.js numbering (mirrored in
//    history.ts and non-determinism.ts), and the `\n\n$OutOfProcData$:` label in
//    lib/src/error/OrchestrationFailureError.js (the failed state travels inside the error message).
// 6. lib/src/util/Utils.js `parseTimestampsAsDates` turns string `Timestamp`s into Dates, so stored
//    histories keep ISO strings; `processInput` JSON-encodes string inputs of activity and
//    continue-as-new actions (not of sub-orchestrations).
// 7. TaskOrchestrationExecutor `processEvent(event)`, `isDoneExecuting()`, `hasCompletedSuccessfully()`,
//    `_isReplaying`, `actions`, `output`, `schemaVersion`, `context.customStatus`: what `execute` runs
//    per event and builds its state from, so an episode can continue the executor of the last one with
//    the new events alone (continueWithSdk) instead of replaying the whole history.
// tests/cli/runner/durable-internals.test.ts is the canary for all of the above.
import type { InvocationContext } from '@azure/functions';
import type { OrchestrationHandler } from 'durable-functions';
import testingUtilsModule from 'durable-functions/lib/src/util/testingUtils.js';

import { messageOf } from '../../shared/domain/errors.js';

/** ReplaySchema.V3: what the Durable extension advertises today (azure-functions-durable-extension,
 * `OrchestrationTriggerAttributeBindingProvider.cs`: `context.df.lock` needs V4 and throws under V3). */
const REPLAY_SCHEMA_V3 = 2;

/** Extension defaults for timer splitting (lib/src/util/testingUtils.js uses the same). */
const LONG_RUNNING_TIMER_INTERVAL = '3.00:00:00';
const MAXIMUM_SHORT_TIMER_DURATION = '6.00:00:00';
const DEFAULT_HTTP_ASYNC_SLEEP_MS = 30_000;
const DAY_MS = 86_400_000;
/** The same limits in milliseconds, for the host's own timer splitting (extension-shim.ts). */
export const TIMER_LIMITS = {
  longRunningTimerIntervalMs: 3 * DAY_MS,
  maximumShortTimerMs: 6 * DAY_MS,
} as const;

const OUT_OF_PROC_DATA_LABEL = '\n\n$OutOfProcData$:';

/** An action object as the SDK builds it (lib/src/actions/*.js); only the fields we read. */
export interface SdkAction {
  actionType: number;
  functionName?: string;
  input?: unknown;
  instanceId?: string;
  version?: string;
  fireAt?: Date;
  isCanceled?: boolean;
  externalEventName?: string;
  retryOptions?: SdkRetryOptions;
  compoundActions?: SdkAction[];
}

export interface SdkRetryOptions {
  firstRetryIntervalInMilliseconds: number;
  maxNumberOfAttempts: number;
  backoffCoefficient?: number;
  maxRetryIntervalInMilliseconds?: number;
  retryTimeoutInMilliseconds?: number;
}

/** A task object (lib/src/task/TaskBase.js and subclasses); only the fields we read. */
export interface SdkTask {
  id: number | string | false;
  action: SdkAction | 'noOp';
  parent?: SdkTask;
  innerTask?: SdkTask;
  retryOptions?: SdkRetryOptions;
  isWaitingOnTimer?: boolean;
  attemptNumber?: number;
}

export interface SdkExecutor {
  openTasks: Record<string, SdkTask>;
  openEvents: Record<string, SdkTask[]>;
  exception: unknown;
}

/**
 * What continuing an executor needs of TaskOrchestrationExecutor (7. below `execute`): it feeds one event
 * to the state machine (resuming the generator when a task completes), and keeps the actions, output and
 * the context's custom status that `execute` turns into the state.
 */
interface SdkExecutorInternals extends SdkExecutor {
  _isReplaying: boolean;
  actions: SdkAction[];
  output: unknown;
  schemaVersion: number;
  context: { customStatus?: unknown };
  processEvent(event: unknown): void;
  isDoneExecuting(): boolean;
  hasCompletedSuccessfully(): boolean;
}

export interface SdkFailureDetails {
  ErrorType?: string;
  ErrorMessage?: string;
  StackTrace?: string;
}

/** OrchestratorState (lib/src/orchestrations/OrchestratorState.js). */
export interface SdkOrchestratorState {
  isDone: boolean;
  actions: SdkAction[][];
  output?: unknown;
  error?: string;
  customStatus?: unknown;
  schemaVersion: number;
  failureDetails?: SdkFailureDetails;
}

type SdkOrchestratorFn = (trigger: unknown, context: InvocationContext) => Promise<SdkOrchestratorState>;

interface TestingUtilsModule {
  createOrchestrator(fn: OrchestrationHandler): SdkOrchestratorFn;
  DurableOrchestrationInput: new (
    instanceId: string,
    history: unknown[],
    input: unknown,
    longRunningTimerIntervalDuration: string,
    maximumShortTimerDuration: string,
    defaultHttpAsyncRequestSleepTimeMillseconds: number,
    schemaVersion: number,
    isReplaying: boolean,
    parentInstanceId: string,
  ) => object;
  DummyOrchestrationContext: new (
    functionName: string,
    invocationId: string,
    logHandler: (level: string, ...args: unknown[]) => void,
  ) => InvocationContext & { df?: { taskOrchestratorExecutor?: SdkExecutor } };
}

const testingUtils = testingUtilsModule as TestingUtilsModule;

/** Everything one replay of an orchestrator produced. */
export interface SdkReplay {
  /** The state when the orchestrator is done or waiting; with `failed` the state embedded in the error. */
  state: SdkOrchestratorState;
  failed: boolean;
  /** The orchestrator's own exception when it failed (not the wrapping OrchestrationFailureError). */
  exception: unknown;
  executor: SdkExecutor;
}

export interface ReplayRequest {
  instanceId: string;
  parentInstanceId: string | undefined;
  functionName: string;
  history: unknown[];
  input: unknown;
  log: (level: string, ...args: unknown[]) => void;
}

const orchestratorCache = new WeakMap<OrchestrationHandler, SdkOrchestratorFn>();

/**
 * Runs the orchestrator over `history` through the package's replay engine and returns the
 * resulting state together with the executor (for open task ids).
 */
export async function replayWithSdk(fn: OrchestrationHandler, request: ReplayRequest): Promise<SdkReplay> {
  let orchestrator = orchestratorCache.get(fn);
  if (orchestrator === undefined) {
    orchestrator = testingUtils.createOrchestrator(fn);
    orchestratorCache.set(fn, orchestrator);
  }
  const trigger = new testingUtils.DurableOrchestrationInput(
    request.instanceId,
    request.history,
    request.input,
    LONG_RUNNING_TIMER_INTERVAL,
    MAXIMUM_SHORT_TIMER_DURATION,
    DEFAULT_HTTP_ASYNC_SLEEP_MS,
    REPLAY_SCHEMA_V3,
    false,
    request.parentInstanceId ?? '',
  );
  const context = new testingUtils.DummyOrchestrationContext(
    request.functionName,
    `${request.instanceId}:${request.history.length}`,
    request.log,
  );
  let state: SdkOrchestratorState;
  let failed = false;
  try {
    state = await orchestrator(trigger, context);
  } catch (error) {
    state = stateFromFailure(error);
    failed = true;
  }
  const executor = context.df?.taskOrchestratorExecutor;
  if (executor === undefined || typeof executor.openTasks !== 'object') {
    throw new Error(
      'replaying orchestration: durable-functions internals changed (context.df.taskOrchestratorExecutor missing)',
    );
  }
  return { state, failed, exception: executor.exception, executor };
}

/**
 * Continues a replay with the events of the next episode (OrchestratorStarted and what was delivered):
 * the executor processes them exactly as a replay of the whole history would after the events it has
 * already processed (TaskScheduled, TimerCreated and OrchestratorCompleted change nothing in it), with the
 * generator still where it stopped. What the Durable extension calls an extended session. Undefined when
 * the orchestrator failed: the caller replays the whole history, which builds the failure as before.
 */
export function continueWithSdk(previous: SdkReplay, events: readonly unknown[]): SdkReplay | undefined {
  const executor = previous.executor as SdkExecutorInternals;
  if (typeof executor.processEvent !== 'function' || typeof executor.isDoneExecuting !== 'function') {
    throw new Error(
      'continuing orchestration: durable-functions internals changed (TaskOrchestrationExecutor.processEvent missing)',
    );
  }
  for (const event of events) {
    const copy = { ...(event as Record<string, unknown>) };
    // What Utils.parseTimestampsAsDates does to a history the trigger brings.
    if (typeof copy['Timestamp'] === 'string') copy['Timestamp'] = new Date(copy['Timestamp']);
    // Everything after the last OrchestratorStarted is new, as in `execute`.
    executor._isReplaying = false;
    executor.processEvent(copy);
    if (executor.isDoneExecuting()) break;
  }
  if (executor.exception !== undefined) return undefined;
  const customStatus = executor.context.customStatus;
  const state: SdkOrchestratorState = {
    isDone: executor.hasCompletedSuccessfully(),
    actions: executor.actions.length === 0 ? [[]] : [executor.actions],
    output: executor.output,
    schemaVersion: executor.schemaVersion,
    // OrchestratorState keeps a custom status only when it is truthy.
    ...(customStatus ? { customStatus } : {}),
  };
  return { state, failed: false, exception: undefined, executor };
}

function stateFromFailure(error: unknown): SdkOrchestratorState {
  const message = messageOf(error);
  const at = message.indexOf(OUT_OF_PROC_DATA_LABEL);
  if (at < 0) {
    // Not an OrchestrationFailureError: the SDK itself failed before running user code.
    throw error;
  }
  return JSON.parse(message.slice(at + OUT_OF_PROC_DATA_LABEL.length)) as SdkOrchestratorState;
}
