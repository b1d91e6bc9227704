/**
 * Building blocks shared by the orchestrators: a named step that calls one activity with retries,
 * and the monitor pattern (read, decide, sleep on a durable timer) with a deadline. Both are
 * generators to be delegated to with `yield*`, so they replay deterministically.
 */
import type { OrchestrationContext, Task } from 'durable-functions';
import * as df from 'durable-functions';

/** A failed step of a run: which step, and why, in words an operator can act on. */
export class StepFailure extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(`${step}: ${message}`);
    this.name = 'StepFailure';
  }
}

/**
 * Activities retry on any error: transient ARM/Kubernetes failures are the common case, and a
 * terminal one costs a few retries before the run fails. Bounded by attempts, never by
 * `retryTimeoutInMilliseconds` (it hangs the orchestration: research/durable.md §0 #5).
 */
export function retryOptions(): df.RetryOptions {
  // 5, 10, 20, 40, 60 s between six attempts: about 2 min 15 s of transient failure (ARM throttling with
  // long Retry-After, an API server restart) is absorbed; a terminal error costs that much before it is
  // reported.
  const options = new df.RetryOptions(5_000, 6);
  options.backoffCoefficient = 2;
  options.maxRetryIntervalInMilliseconds = 60_000;
  return options;
}

/** The message of a failure thrown into the orchestrator, without durable-functions' prefixes. */
export function stepFailureMessage(error: unknown): string {
  if (error instanceof StepFailure) return error.message;
  if (error instanceof Error) {
    // TaskFailedError messages read "<ErrorType>: <message>" (StepFailure for a failed sub-orchestration);
    // keep the message the activity or child wrote.
    const match = /^[A-Za-z]*(?:Error|Failure): ([\s\S]*)$/.exec(error.message);
    return (match?.[1] ?? error.message).trim();
  }
  return String(error);
}

/** Calls one activity (with retries) as the named step; a failure becomes a StepFailure naming the step. */
export function* callStep<T = void>(
  context: OrchestrationContext,
  step: string,
  activity: string,
  input: unknown,
  advice?: string,
): Generator<Task, T, unknown> {
  try {
    return (yield context.df.callActivityWithRetry(activity, retryOptions(), input)) as T;
  } catch (error) {
    if (error instanceof StepFailure) throw error;
    throw new StepFailure(step, withAdvice(stepFailureMessage(error), advice));
  }
}

/** Appends what the operator can do, once. */
export function withAdvice(message: string, advice: string | undefined): string {
  return advice === undefined || message.includes(advice) ? message : `${message} — ${advice}`;
}

/** The message a refused sub-orchestration start carries: DTFx's, and the local runner's. */
export const ALREADY_RUNNING =
  /\bis already (Running|Pending|ContinuedAsNew|Suspended)\b|\bstatus (Running|Pending|ContinuedAsNew|Suspended) already exists\b|OrchestrationAlreadyExists/i;

/** External event an operator raises to stop a run; the run then gives the node back and fails. */
export const CANCEL_EVENT = 'cancel';

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
  return { task: context.df.waitForExternalEvent(CANCEL_EVENT), active: true };
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
    throw new StepFailure(step, `cancelled by the operator${reason}`);
  }
}

export interface PollSpec<T> {
  readonly step: string;
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  /** Schedules the read (an activity call); called once per round. */
  readonly read: () => Task;
  /** True when done; may throw a StepFailure to stop early. */
  readonly done: (value: T) => boolean;
  /** The state in words, for the status and the timeout message. */
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
    let value: T;
    try {
      value = (yield spec.read()) as T;
    } catch (error) {
      if (error instanceof StepFailure) throw error;
      throw new StepFailure(spec.step, stepFailureMessage(error));
    }
    if (spec.done(value)) return value;
    if (spec.between !== undefined) yield* spec.between(value);
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= deadline) {
      throw new StepFailure(
        spec.step,
        withAdvice(
          `timed out after ${Math.round((now - startedAt) / 1000)} s: ${spec.describe(value)}`,
          spec.advice,
        ),
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
