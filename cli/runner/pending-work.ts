// Reads a replay into the work an instance waits for (activities, timers, sub-orchestrations) through
// the model of the Durable extension's shim (extension-shim.ts), writing the scheduling events the host
// would write and checking replays against the ones already recorded.
import type { SdkReplay } from './durable-internals.js';
import { replayShim } from './extension-shim.js';
import {
  actionInputToPayload,
  type FailureDetails,
  type HistoryEvent,
  historyEvent,
  toPayload,
} from './history.js';
import type { Live } from './instance.js';
import { NonDeterminismError } from './non-determinism.js';
import type { InstanceRecord } from './store.js';

/**
 * Works out what the instance waits for the way the Durable extension does (extension-shim.ts): the
 * replay's actions, numbered and awaited as the host's shim does, against the history. Calls without a
 * scheduling event get one (pushed to `scheduling`); calls with one are checked against it. Returns a
 * NonDeterminismError for a mismatch, or FailureDetails for work the runner cannot do.
 */
export function collectPending(
  live: Live,
  replay: SdkReplay,
  now: number,
  known: HistoryEvent[],
  scheduling: HistoryEvent[] = [],
): NonDeterminismError | FailureDetails | undefined {
  const record = live.record;
  live.pending.clear();
  const shim = replayShim(replay.state.actions.flat(), known, now);
  if (shim.unsupported?.errorType === 'RetryTimeoutNotSupported') {
    return {
      ErrorType: shim.unsupported.errorType,
      ErrorMessage: `running orchestration ${record.name} (instance ${record.instanceId}): ${shim.unsupported.what}`,
      IsNonRetriable: true,
    };
  }
  if (shim.unsupported !== undefined) return unsupported(record, shim.unsupported.what);
  if (shim.divergence !== undefined) {
    return new NonDeterminismError(
      record.instanceId,
      record.name,
      shim.divergence.id,
      `(sequence number ${shim.divergence.id}) ${shim.divergence.difference}`,
    );
  }
  for (const call of shim.calls) {
    const existing = call.scheduled;
    const { id, action } = call;
    switch (call.kind) {
      case 'activity': {
        const input = actionInputToPayload(action.input);
        const name = action.functionName ?? '';
        if (call.state === 'open') live.pending.set(id, { kind: 'activity', id, name, input });
        if (existing === undefined) {
          scheduling.push(historyEvent('TaskScheduled', now, { EventId: id, Name: name, Input: input }));
        }
        break;
      }
      case 'sub-orchestration': {
        const input = toPayload(action.input);
        const name = action.functionName ?? '';
        const childId =
          existing?.InstanceId ??
          action.instanceId ??
          (record.generation === 0
            ? `${record.instanceId}:${id}`
            : `${record.instanceId}:${record.generation}:${id}`);
        if (call.state === 'open')
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
        const fireAt = call.fireAt ?? now;
        // A cancelled timer is created all the same (TimerCreated) but nothing waits for it: not fired.
        if (call.state === 'open' && !call.canceled) {
          live.pending.set(id, { kind: 'timer', id, fireAt, canceled: () => false });
        }
        if (existing === undefined) {
          scheduling.push(
            historyEvent('TimerCreated', now, { EventId: id, FireAt: new Date(fireAt).toISOString() }),
          );
        }
        break;
      }
      default: {
        const exhaustive: never = call.kind;
        return exhaustive;
      }
    }
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
