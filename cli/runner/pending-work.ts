// Reads a replay's open tasks into the work an instance waits for (activities, timers, retry timers,
// sub-orchestrations), writing the scheduling events the host would write and checking replays against
// the ones already recorded (see durable-internals.ts item 4 for what the SDK's open tasks stand for).
import type { SdkAction, SdkReplay, SdkTask } from './durable-internals.js';
import {
  actionInputToPayload,
  type FailureDetails,
  type HistoryEvent,
  historyEvent,
  historyEventName,
  isSchedulingEvent,
  toPayload,
} from './history.js';
import type { Live } from './instance.js';
import { actionTypeName, NonDeterminismError, UNSUPPORTED_ACTIONS } from './non-determinism.js';
import { decideRetry } from './retry.js';
import type { InstanceRecord } from './store.js';

/**
 * Reads the replay's open tasks into `live.pending`. Open ids without a scheduling event get one
 * (pushed to `scheduling`); ids with one are checked against it. Returns a NonDeterminismError for
 * a mismatch, or FailureDetails for work the runner cannot do.
 */
export function collectPending(
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
        if (action.fireAt === undefined) return internalsChanged(record, 'CreateTimerAction.fireAt missing');
        const fireAt = existing?.FireAt !== undefined ? Date.parse(existing.FireAt) : action.fireAt.getTime();
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
