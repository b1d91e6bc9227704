// What the Durable extension makes of an out-of-process orchestrator's actions, modelled so the runner
// numbers and schedules work exactly as the host does (the runner used to take task ids from
// the SDK's own open tasks, which hid every case where the two disagree).
//
// The extension (azure-functions-durable-extension, src/WebJobs.Extensions.DurableTask/Listener/
// OutOfProcOrchestrationShim.cs, ReplaySchema V2/V3) replays the actions the SDK returns, in order, as
// a .NET orchestration on DTFx: `ProcessAsyncActionsV2` invokes each top-level action and awaits it
// before it invokes the next; `InvokeAPIFromAction` turns each action into a DTFx call and a WhenAny or
// WhenAll into `Task.WhenAny`/`Task.WhenAll` of its sub-actions, invoked again each time they appear.
// DTFx (DurableTask.Core TaskOrchestrationContext) gives every ScheduleTask, CreateTimer and
// CreateSubOrchestrationInstance the next sequence number, in the order the code runs; external event
// waits take none and are served first come, first served (DurableOrchestrationContext keeps a queue
// of waiters per name and buffers an event nobody waits for). A timer the SDK marked cancelled is still
// created (its id used, TimerCreated written) and its task cancelled at once. Retried calls
// (CallActivityWithRetry) go through DTFx's RetryInterceptor: an attempt, then a timer, then the next
// attempt, each with a new sequence number taken when the failure is processed.
//
// So a sub-action the SDK sends again inside a new Task.any or Task.all (durable-functions 3.5 sends a
// compound task's whole action tree, azure-functions-durable-js#574) is scheduled a second time under a
// new id, and from there the host's ids and the SDK's differ: completions reach the wrong SDK tasks.
// The runner feeds the SDK the completions under the host's ids, so an orchestrator that does this
// fails here as it fails on Azure.
import { definedOnly } from '../../shared/domain/optional.js';
import { type SdkAction, TIMER_LIMITS } from './durable-internals.js';
import { type HistoryEvent, historyEventName, HistoryEventType } from './history.js';
import { actionTypeName, UNSUPPORTED_ACTIONS } from './non-determinism.js';
import { decideRetry, type RetryDecision } from './retry.js';

export type ScheduledKind = 'activity' | 'timer' | 'sub-orchestration';

/** One DTFx call the shim made: an id, what it schedules, and whether its task is still open. */
export interface ShimCall {
  readonly id: number;
  readonly kind: ScheduledKind;
  readonly action: SdkAction;
  /** Timers: when they fire (from the history's TimerCreated when there is one). */
  fireAt?: number;
  /** Cancelled timers are created but never awaited (their TimerFired, if any, changes nothing). */
  readonly canceled: boolean;
  /** The scheduling event already in the history under this id. */
  scheduled?: HistoryEvent;
  state: 'open' | 'completed' | 'failed';
}

export interface ShimResult {
  /** Every call the shim made, in id order. */
  readonly calls: readonly ShimCall[];
  /** A difference between the history and what the shim scheduled (DTFx's NonDeterministicOrchestrationException). */
  readonly divergence?: { readonly id: number; readonly difference: string };
  /** An action the runner cannot run (entities, HTTP) or a retry the host would hang on. */
  readonly unsupported?: { readonly errorType: string; readonly what: string };
}

/** A .NET task of the shim's replay: done once, then its continuations run. */
class ShimTask {
  done = false;
  private readonly continuations: (() => void)[] = [];
  static completed(): ShimTask {
    const task = new ShimTask();
    task.done = true;
    return task;
  }
  then(continuation: () => void): void {
    if (this.done) continuation();
    else this.continuations.push(continuation);
  }
  complete(): void {
    if (this.done) return;
    this.done = true;
    for (const continuation of this.continuations.splice(0)) continuation();
  }
}

class Unsupported extends Error {
  constructor(
    message: string,
    readonly errorType = 'UnsupportedByLocalRunner',
  ) {
    super(message);
  }
}

interface OpenCall {
  readonly call: ShimCall;
  readonly task: ShimTask;
}

/**
 * Replays `actions` (the top-level actions of the SDK's state, all of them since the execution began)
 * against `history` the way the extension and DTFx do, and returns every call the shim made.
 * `nowMs` is the time of the episode being decided (the host's CurrentUtcDateTime for new retries).
 */
export function replayShim(
  actions: readonly SdkAction[],
  history: readonly HistoryEvent[],
  nowMs: number,
): ShimResult {
  const calls: ShimCall[] = [];
  const open = new Map<number, OpenCall>();
  const waiters = new Map<string, ShimTask[]>();
  const buffered = new Map<string, number>();
  let nextId = 0;
  let now = nowMs;
  let divergence: ShimResult['divergence'];

  function schedule(kind: ScheduledKind, action: SdkAction, fireAt?: number): OpenCall {
    const call: ShimCall = {
      id: nextId++,
      kind,
      action,
      canceled: kind === 'timer' && action.isCanceled === true,
      state: 'open',
      ...definedOnly({ fireAt }),
    };
    calls.push(call);
    const entry = { call, task: new ShimTask() };
    if (!call.canceled) open.set(call.id, entry);
    return entry;
  }

  function invoke(action: SdkAction): ShimTask {
    const type = actionTypeName(action.actionType);
    switch (type) {
      case 'CallActivity':
        return schedule('activity', action).task;
      case 'CallSubOrchestrator':
        return schedule('sub-orchestration', action).task;
      case 'CreateTimer': {
        if (action.fireAt === undefined) {
          throw new Unsupported('a timer without fireAt (durable-functions internals changed?)');
        }
        return timer(action, new Date(action.fireAt).getTime());
      }
      case 'CallActivityWithRetry':
        return withRetry('activity', action);
      case 'CallSubOrchestratorWithRetry':
        return withRetry('sub-orchestration', action);
      case 'WaitForExternalEvent': {
        const name = action.externalEventName ?? '';
        const waiting = buffered.get(name) ?? 0;
        if (waiting > 0) {
          buffered.set(name, waiting - 1);
          return ShimTask.completed();
        }
        const task = new ShimTask();
        waiters.set(name, [...(waiters.get(name) ?? []), task]);
        return task;
      }
      case 'WhenAny':
      case 'WhenAll': {
        const children = (action.compoundActions ?? []).map(invoke);
        const task = new ShimTask();
        let left = type === 'WhenAny' ? Math.min(1, children.length) : children.length;
        if (left === 0) task.complete();
        for (const child of children) {
          child.then(() => {
            left -= 1;
            if (left <= 0) task.complete();
          });
        }
        return task;
      }
      case 'ContinueAsNew':
        return ShimTask.completed();
      default:
        throw new Unsupported(UNSUPPORTED_ACTIONS.has(type) ? type : `action ${type}`);
    }
  }

  /**
   * DurableOrchestrationContext.CreateTimer: a timer further away than the longest the storage provider
   * keeps is a chain of shorter ones (each its own id), the last firing at `fireAt`. A cancelled one
   * creates its first timer and is done.
   */
  function timer(action: SdkAction, fireAt: number): ShimTask {
    const long = fireAt - now > TIMER_LIMITS.maximumShortTimerMs;
    const created = schedule('timer', action, long ? now + TIMER_LIMITS.longRunningTimerIntervalMs : fireAt);
    if (created.call.canceled) return ShimTask.completed();
    if (!long) return created.task;
    const done = new ShimTask();
    created.task.then(() => timer(action, fireAt).then(() => done.complete()));
    return done;
  }

  /** DTFx RetryInterceptor: attempt, on failure a timer (the last one fires at once), the next attempt. */
  function withRetry(kind: ScheduledKind, action: SdkAction): ShimTask {
    const options = action.retryOptions;
    if (options === undefined) throw new Unsupported('a retried call without retryOptions');
    const done = new ShimTask();
    const firstAt = now;
    const attempt = (number: number): void => {
      const tried = schedule(kind, action);
      tried.task.then(() => {
        if (tried.call.state === 'completed') {
          done.complete();
          return;
        }
        const decision: RetryDecision = decideRetry(options, number, now - firstAt);
        if (decision.kind === 'timed-out') {
          throw new Unsupported(
            `retryTimeoutInMilliseconds (${options.retryTimeoutInMilliseconds} ms) elapsed with attempts left; on ` +
              'Azure this orchestration would hang without an error (azure-functions-durable-js#629). Bound ' +
              'retries with maxNumberOfAttempts.',
            'RetryTimeoutNotSupported',
          );
        }
        const retryTimer = schedule(
          'timer',
          action,
          now + (decision.kind === 'retry' ? decision.delayMs : 0),
        );
        retryTimer.task.then(() => (decision.kind === 'retry' ? attempt(number + 1) : done.complete()));
      });
    };
    attempt(1);
    return done;
  }

  /** ProcessAsyncActionsV2: each top-level action is invoked once the one before it has completed. */
  function runFrom(index: number): void {
    for (let next = index; next < actions.length; next += 1) {
      const action = actions[next];
      if (action === undefined) return;
      const task = invoke(action);
      if (!task.done) {
        task.then(() => runFrom(next + 1));
        return;
      }
    }
  }

  function finish(id: number | undefined, state: 'completed' | 'failed'): void {
    if (id === undefined) return;
    const entry = open.get(id);
    if (entry === undefined) return;
    open.delete(id);
    entry.call.state = state;
    entry.task.complete();
  }

  function checkScheduled(event: HistoryEvent): void {
    const call = calls[event.EventId];
    const recorded = historyEventName(event.EventType);
    const expected =
      call === undefined
        ? undefined
        : {
            activity: 'TaskScheduled',
            timer: 'TimerCreated',
            'sub-orchestration': 'SubOrchestrationInstanceCreated',
          }[call.kind];
    if (call === undefined || expected !== recorded) {
      divergence ??= {
        id: event.EventId,
        difference:
          call === undefined
            ? `history has ${recorded}${event.Name === undefined ? '' : ` '${event.Name}'`} but the replay scheduled nothing under this id`
            : `is a ${expected?.replace(/(Scheduled|Created|InstanceCreated)$/, '')} in the replay but history has ${recorded}${event.Name === undefined ? '' : ` '${event.Name}'`}`,
      };
      return;
    }
    const name = call.action.functionName;
    if (call.kind !== 'timer' && name !== undefined && event.Name !== name) {
      divergence ??= {
        id: event.EventId,
        difference: `schedules '${name}' in the replay but history has ${recorded} '${event.Name}'`,
      };
      return;
    }
    call.scheduled = event;
    if (call.kind === 'timer' && event.FireAt !== undefined) call.fireAt = Date.parse(event.FireAt);
  }

  try {
    for (const event of history) {
      switch (event.EventType) {
        case HistoryEventType.OrchestratorStarted:
          now = Date.parse(event.Timestamp);
          break;
        case HistoryEventType.ExecutionStarted:
          runFrom(0);
          break;
        case HistoryEventType.TaskScheduled:
        case HistoryEventType.TimerCreated:
        case HistoryEventType.SubOrchestrationInstanceCreated:
          checkScheduled(event);
          break;
        case HistoryEventType.TaskCompleted:
        case HistoryEventType.SubOrchestrationInstanceCompleted:
          finish(event.TaskScheduledId, 'completed');
          break;
        case HistoryEventType.TaskFailed:
        case HistoryEventType.SubOrchestrationInstanceFailed:
          finish(event.TaskScheduledId, 'failed');
          break;
        case HistoryEventType.TimerFired:
          finish(event.TimerId, 'completed');
          break;
        case HistoryEventType.EventRaised: {
          const name = event.Name ?? '';
          const waiter = waiters.get(name)?.shift();
          if (waiter !== undefined) waiter.complete();
          else buffered.set(name, (buffered.get(name) ?? 0) + 1);
          break;
        }
        default:
          break;
      }
    }
  } catch (error) {
    if (error instanceof Unsupported) {
      return { calls, unsupported: { errorType: error.errorType, what: error.message } };
    }
    throw error;
  }
  return { calls, ...definedOnly({ divergence }) };
}
