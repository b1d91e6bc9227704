/**
 * The orchestrators' waits: a sleep the operator's cancel can interrupt, and the monitor pattern (read,
 * decide, sleep on a durable timer) with a deadline. Generators to delegate to with `yield*`, so they
 * replay deterministically.
 *
 * A run that holds a pool registers a wait guard on its context (ownership.ts): every activity call
 * (call.ts) and every sleep here gives it the chance to renew the pool's lease when due, and to stop the
 * run when the lease was taken. It is registered per context object (one per replay), so phases need not
 * pass it along; the run registers it again, deterministically, on every replay. A refresh's cancel
 * (cancel.ts) is found the same way: every sleep is a boundary that acts on it, and races its event.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { cancelEventsOf, cancelledByEvent, stopIfCancelled } from './cancel.js';
import { durableTimer } from './races.js';
import type { StepName } from './step-failure.js';
import { StepFailure } from './step-failure.js';
import type { PollSchedule } from './timing.js';
import { pollDelaySeconds } from './timing.js';

/** What a run holding a pool does before each activity and each sleep. */
export interface WaitGuard {
  /**
   * Before an activity is scheduled: renew the lease when due; throws to stop the run. True when it
   * renewed the lease just now: the renewal read the lease and took a cancel asked there (cancel.ts
   * `askCancel`), so the activity need not read it again for the cancel check (call.ts).
   */
  beforeActivity(context: OrchestrationContext): Generator<Task, boolean, unknown>;
  /** Before sleeping until `fireAt`: the lease must outlast the sleep; throws to stop the run. */
  beforeSleep(context: OrchestrationContext, fireAt: Date): Generator<Task, void, unknown>;
}

const guards = new WeakMap<OrchestrationContext, WaitGuard>();

/** Registers (or with undefined, removes) the run's wait guard for this replay. */
export function setWaitGuard(context: OrchestrationContext, guard: WaitGuard | undefined): void {
  if (guard === undefined) guards.delete(context);
  else guards.set(context, guard);
}

export function waitGuardOf(context: OrchestrationContext): WaitGuard | undefined {
  return guards.get(context);
}

const scales = new WeakMap<OrchestrationContext, number>();

/**
 * Registers the share of Azure's usual timings this run's polls wait for (the pool lease's hold carries
 * it: `VMSSP_SIMULATOR_WAIT_SCALE`, a simulator at ×1 only). Like the guard, per context object: the run
 * registers it again on every replay, from the same history.
 */
export function setWaitScale(context: OrchestrationContext, scale: number): void {
  scales.set(context, scale);
}

/** The run's wait scale: 1 (Azure's timings) unless a simulator's was registered. */
export function waitScaleOf(context: OrchestrationContext): number {
  return scales.get(context) ?? 1;
}

/** `seconds` of a product wait (a poll's expected time or interval) as this run waits them. */
export function scaledSeconds(context: OrchestrationContext, seconds: number): number {
  // Whole milliseconds, as timers fire: 35 × 0.02 is 0.7000000000000001 in floating point, and a wait
  // due a fraction of a millisecond from now would be a timer at now, read again at the same time.
  return Math.round(seconds * waitScaleOf(context) * 1000) / 1000;
}

/** The inverse of scaledSeconds: a wait already scaled, as pollUntil takes it (it scales what it is given). */
export function unscaledSeconds(context: OrchestrationContext, seconds: number): number {
  return seconds / waitScaleOf(context);
}

/**
 * A poll's interval (or a cap of its backoff) under the run's scale: never below a second (or the
 * interval itself when shorter), since a read made sooner would only find the same state and cost an
 * activity; a scaled first read (expectedSeconds) may be shorter, it happens once.
 */
function scaledInterval(context: OrchestrationContext, seconds: number): number {
  return Math.max(Math.min(seconds, MIN_SCALED_INTERVAL_SECONDS), scaledSeconds(context, seconds));
}

function scaledOptional(context: OrchestrationContext, seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : scaledInterval(context, seconds);
}

const MIN_SCALED_INTERVAL_SECONDS = 1;

/**
 * Sleeps until `fireAt`. A boundary of a refresh's cancel (cancel.ts): one already asked fails the step
 * before the sleep, and the cancel event ends the sleep at once.
 */
export function* sleepUnlessCancelled(
  context: OrchestrationContext,
  step: StepName,
  fireAt: Date,
): Generator<Task, void, unknown> {
  const guard = waitGuardOf(context);
  if (guard !== undefined) yield* guard.beforeSleep(context, fireAt);
  stopIfCancelled(context, step);
  const timer = durableTimer(context, fireAt);
  const events = cancelEventsOf(context);
  if (events === undefined) {
    yield timer;
    return;
  }
  const event = yield* events.race(timer);
  if (event !== undefined) throw cancelledByEvent(context, step, event);
}

export interface PollSpec<T> {
  readonly step: StepName;
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  /**
   * When the awaited operation is usually done (timing.ts EXPECTED): the first read waits until then,
   * counted from `sinceMs`. Absent: the first read is made at once.
   */
  readonly expectedSeconds?: number;
  /** See PollSchedule (timing.ts). */
  readonly growToSeconds?: number | undefined;
  /** See PollSchedule (timing.ts). */
  readonly backoffToSeconds?: number | undefined;
  /** See PollSchedule (timing.ts). */
  readonly lateShare?: number | undefined;
  /** See PollSchedule (timing.ts). */
  readonly steadyUntilSeconds?: number | undefined;
  /** When the operation was asked for (orchestration time, ms); default: when the wait starts. */
  readonly sinceMs?: number;
  /**
   * When the wait began, if before this poll (a wait that watched something else first): the timeout
   * and its message count from it. Default: now.
   */
  readonly startedAtMs?: number;
  /** One read (activity calls through `call`); run once per round. */
  readonly read: () => Generator<Task, T, unknown>;
  /** True when done; may throw a StepFailure to stop early. */
  readonly done: (value: T) => boolean;
  /** The state in words, for the timeout message. */
  readonly describe: (value: T) => string;
  /** What the operator can do when the wait times out. */
  readonly advice?: string;
  /** Runs after a round that is not done, before the sleep: a wait that must act on what it sees. */
  readonly between?: (value: T) => Generator<Task, void, unknown>;
  /**
   * Seconds until the next read when the value says when something can next change (a canary's soak);
   * undefined: the schedule's. Never shorter than the interval.
   */
  readonly nextDelaySeconds?: (value: T) => number | undefined;
}

/**
 * Monitor pattern: read until `done`, sleeping on durable timers, failing after `timeoutSeconds`. A timeout
 * is judged only on a read made at or after the deadline: a run resumed late (its process was down past
 * the deadline) first reads the world again, so a capture that finished meanwhile is not thrown away.
 * The schedule's seconds (expected, interval, steady reads, growth and backoff caps) are the run's wait scale of
 * Azure's (waitScaleOf); the timeout and `nextDelaySeconds` (the operator's durations) are not scaled.
 */
export function* pollUntil<T>(context: OrchestrationContext, spec: PollSpec<T>): Generator<Task, T, unknown> {
  const pollStartedAt = context.df.currentUtcDateTime.getTime();
  const startedAt = Math.min(spec.startedAtMs ?? pollStartedAt, pollStartedAt);
  const deadline = startedAt + spec.timeoutSeconds * 1000;
  const since = spec.sinceMs ?? pollStartedAt;
  const schedule: PollSchedule = {
    expectedSeconds: scaledSeconds(context, spec.expectedSeconds ?? 0),
    intervalSeconds: scaledInterval(context, spec.intervalSeconds),
    growToSeconds: scaledOptional(context, spec.growToSeconds),
    backoffToSeconds: scaledOptional(context, spec.backoffToSeconds),
    lateShare: spec.lateShare,
    steadyUntilSeconds:
      spec.steadyUntilSeconds === undefined ? undefined : scaledSeconds(context, spec.steadyUntilSeconds),
  };
  const firstReadAt = since + schedule.expectedSeconds * 1000;
  if (firstReadAt > pollStartedAt) {
    yield* sleepUnlessCancelled(context, spec.step, new Date(Math.min(deadline, firstReadAt)));
  }
  for (;;) {
    const readAt = context.df.currentUtcDateTime.getTime();
    const value = yield* spec.read();
    if (spec.done(value)) return value;
    if (spec.between !== undefined) yield* spec.between(value);
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= deadline && readAt < deadline) continue;
    if (now >= deadline) {
      throw StepFailure.terminal(
        spec.step,
        'Timeout',
        `timed out after ${Math.round((now - startedAt) / 1000)} s: ${spec.describe(value)}`,
        spec.advice,
      );
    }
    const delaySeconds = Math.max(
      pollDelaySeconds(schedule, (now - since) / 1000),
      spec.nextDelaySeconds?.(value) ?? 0,
    );
    yield* sleepUnlessCancelled(context, spec.step, new Date(Math.min(deadline, now + delaySeconds * 1000)));
  }
}
