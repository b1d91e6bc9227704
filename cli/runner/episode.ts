// One episode of an instance: replay its history through durable-functions' engine with the events
// delivered since the last one, check the replay against the recorded actions, then record what the
// orchestrator decided (new work, completion, continue-as-new, failure). Also the failure of an instance.
import { randomUUID } from 'node:crypto';

import type { LogLevel } from '@azure/functions';

import { notifyParent, startChildren } from './children.js';
import { continueWithSdk, replayWithSdk, type SdkAction, type SdkReplay } from './durable-internals.js';
import {
  actionInputToPayload,
  FailureDetails,
  failureDetailsOf,
  fromPayload,
  type HistoryEvent,
  historyEvent,
  toPayload,
} from './history.js';
import {
  type InstanceHost,
  isTerminal,
  keepSession,
  type Live,
  played,
  sdkCopy,
  takeSession,
} from './instance.js';
import {
  actionTypeName,
  findDivergence,
  flattenActions,
  NonDeterminismError,
  recordAction,
} from './non-determinism.js';
import { collectPending } from './pending-work.js';
import type { RecordedAction } from './store.js';

export async function replayInstance(
  host: InstanceHost,
  live: Live,
  history: HistoryEvent[],
): Promise<SdkReplay> {
  const record = live.record;
  return replayWithSdk(live.fn, {
    instanceId: record.instanceId,
    parentInstanceId: record.parentInstanceId,
    functionName: record.name,
    history: history.map(sdkCopy),
    input: fromPayload(record.input),
    log: (level, ...args) => host.options.onLog?.(level as LogLevel, record.instanceId, args),
  });
}

/** Compares the replay's actions with the recorded ones; returns the NonDeterminismError if any. */
export function checkReplay(live: Live, replay: SdkReplay): NonDeterminismError | undefined {
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

/**
 * The actions of a continued session (continueWithSdk): the recorded ones, then the ones the new events
 * added. The session's generator never replayed, so the recorded actions are its own, not to be checked
 * again, nor recorded again: a run's episodes would otherwise redo every earlier action each time
 * (quadratic in its length). Undefined when the action list did not grow from the recorded one (then
 * everything is checked and recorded afresh).
 */
function continuedActions(live: Live, replay: SdkReplay): RecordedAction[] | undefined {
  const flat = flattenActions(replay.state.actions);
  const recorded = live.record.actions;
  if (flat.length < recorded.length) return undefined;
  return [...recorded, ...flat.slice(recorded.length).map(recordAction)];
}

export async function episode(host: InstanceHost, live: Live): Promise<void> {
  live.needsEpisode = false;
  const record = live.record;
  const now = host.clock.now();
  const consumed = record.inbox.slice();
  const delivered = [historyEvent('OrchestratorStarted', now), ...consumed];
  const session = takeSession(live);
  const continued = session === undefined ? undefined : continueWithSdk(session, delivered);
  const replay =
    continued ?? (await replayInstance(host, live, [...record.history.map(played), ...delivered]));
  // Terminated while the orchestrator ran: its decisions no longer count.
  if (isTerminal(record)) return;
  const actions = continued === undefined ? undefined : continuedActions(live, continued);
  const divergence = actions === undefined ? checkReplay(live, replay) : undefined;
  if (divergence !== undefined) {
    await failInstance(host, live, divergence, delivered, consumed.length);
    throw divergence;
  }
  const scheduling: HistoryEvent[] = [];
  if (!replay.failed && !replay.state.isDone) {
    const problem = collectPending(live, replay, now, [...record.history, ...delivered], scheduling);
    if (problem !== undefined) {
      await failInstance(host, live, problem, delivered, consumed.length);
      if (problem instanceof NonDeterminismError) throw problem;
      return;
    }
  }
  const appended = [...delivered, ...scheduling, historyEvent('OrchestratorCompleted', now)];
  record.inbox.splice(0, consumed.length);
  record.history.push(...appended);
  record.actions = actions ?? flattenActions(replay.state.actions).map(recordAction);
  record.customStatus = toPayload(replay.state.customStatus);
  live.events = Object.keys(replay.executor.openEvents);

  if (replay.failed) {
    const details =
      failureFromSdk(replay) ??
      failureDetailsOf(replay.exception ?? new Error(replay.state.error ?? 'orchestrator failed'));
    await failInstance(host, live, details, [], 0, appended);
    return;
  }
  const continueAs = replay.state.actions
    .flat()
    .find((action) => actionTypeName(action.actionType) === 'ContinueAsNew');
  if (replay.state.isDone && continueAs !== undefined) {
    await continueAsNew(host, live, appended, continueAs, now);
    return;
  }
  if (replay.state.isDone) {
    // One text for both: a status's output is its every row (4.7 MB of JSON at 20 000 nodes).
    const output = toPayload(replay.state.output);
    const completed = historyEvent('ExecutionCompleted', now, {
      OrchestrationStatus: 'Completed',
      Result: replay.state.output === undefined ? 'null' : output,
    });
    record.history.push(completed);
    record.output = output;
    live.pending.clear();
    host.setStatus(live, 'Completed');
    await host.persist(live);
    host.emitEvents(live, [...appended, completed]);
    host.emitStatus(live);
    await notifyParent(host, live);
    return;
  }
  host.setStatus(live, 'Running');
  keepSession(host.options, live, replay);
  await host.persist(live);
  host.emitEvents(live, appended);
  host.emitStatus(live);
  await startChildren(host, live);
}

async function continueAsNew(
  host: InstanceHost,
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
  host.setStatus(live, 'Running');
  await host.persist(live);
  host.emitEvents(live, [...appended, marker]);
  host.emitStatus(live);
}

/**
 * Marks the instance Failed. `delivered` (OrchestratorStarted + the first `consumedInbox` inbox
 * events) is moved to the history first; `alreadyAppended` events are only reported.
 */
export async function failInstance(
  host: InstanceHost,
  live: Live,
  failure: Error | FailureDetails,
  delivered: HistoryEvent[] = [],
  consumedInbox = 0,
  alreadyAppended: HistoryEvent[] = [],
): Promise<void> {
  const record = live.record;
  const details = failure instanceof Error ? failureDetailsOf(failure) : failure;
  const now = host.clock.now();
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
  host.setStatus(live, 'Failed');
  await host.persist(live);
  host.emitEvents(live, [...appended, failed]);
  host.emitStatus(live);
  await notifyParent(host, live);
}

/** The SDK reports a TaskFailedError that escaped the orchestrator with its own failure details. */
function failureFromSdk(replay: SdkReplay): FailureDetails | undefined {
  const parsed = FailureDetails.safeParse(replay.state.failureDetails);
  return parsed.success ? parsed.data : undefined;
}
