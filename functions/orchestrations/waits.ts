/**
 * The orchestrators' waits: the operator's cancel event, a sleep it can interrupt, and the monitor
 * pattern (read, decide, sleep on a durable timer) with a deadline. Generators to delegate to with
 * `yield*`, so they replay deterministically.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { EVENT } from '../../shared/application/orchestration-ids.js';
import { StepFailure } from './step-failure.js';

/**
 * One wait for the cancel event per run, shared by every poll (a wait that loses a Task.any stays open
 * and would swallow a later event, so it is created once). `active` is turned off once the node is
 * being given back: from then on the run finishes what it must.
 */
export interface CancelWatch {
  readonly task: Task;
  active: boolean;
}

export function watchCancel(context: OrchestrationContext): CancelWatch {
  return { task: context.df.waitForExternalEvent(EVENT.cancel), active: true };
}

/** Sleeps until `fireAt`, or fails the step at once when the operator cancels the run. */
export function* sleepUnlessCancelled(
  context: OrchestrationContext,
  step: string,
  fireAt: Date,
  cancel: CancelWatch | undefined,
): Generator<Task, void, unknown> {
  const timer = context.df.createTimer(fireAt);
  if (cancel === undefined || !cancel.active) {
    yield timer;
    return;
  }
  const winner = (yield context.df.Task.any([timer, cancel.task])) as Task;
  if (winner === cancel.task) {
    timer.cancel();
    cancel.active = false;
    const reason = typeof cancel.task.result === 'string' ? `: ${cancel.task.result}` : '';
    throw StepFailure.terminal(step, 'Cancelled', `cancelled by the operator${reason}`);
  }
}

export interface PollSpec<T> {
  readonly step: string;
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  /** One read (activity calls through `call`); run once per round. */
  readonly read: () => Generator<Task, T, unknown>;
  /** True when done; may throw a StepFailure to stop early. */
  readonly done: (value: T) => boolean;
  /** The state in words, for the timeout message. */
  readonly describe: (value: T) => string;
  /** When given and active, a cancel event ends the wait with a StepFailure. */
  readonly cancel?: CancelWatch;
  /** What the operator can do when the wait times out. */
  readonly advice?: string;
  /** Runs after a round that is not done, before the sleep: a wait that must act on what it sees. */
  readonly between?: (value: T) => Generator<Task, void, unknown>;
}

/** Monitor pattern: read until `done`, sleeping on durable timers, failing after `timeoutSeconds`. */
export function* pollUntil<T>(context: OrchestrationContext, spec: PollSpec<T>): Generator<Task, T, unknown> {
  const startedAt = context.df.currentUtcDateTime.getTime();
  const deadline = startedAt + spec.timeoutSeconds * 1000;
  for (;;) {
    const value = yield* spec.read();
    if (spec.done(value)) return value;
    if (spec.between !== undefined) yield* spec.between(value);
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= deadline) {
      throw StepFailure.terminal(
        spec.step,
        'Timeout',
        `timed out after ${Math.round((now - startedAt) / 1000)} s: ${spec.describe(value)}`,
        spec.advice,
      );
    }
    yield* sleepUnlessCancelled(
      context,
      spec.step,
      new Date(Math.min(deadline, now + spec.intervalSeconds * 1000)),
      spec.cancel,
    );
  }
}
