/**
 * The orchestrators' waits: the operator's cancel event, a sleep it can interrupt, and the monitor
 * pattern (read, decide, sleep on a durable timer) with a deadline. Generators to delegate to with
 * `yield*`, so they replay deterministically.
 *
 * A run that holds a pool registers a wait guard on its context (ownership.ts): every activity call
 * (call.ts) and every sleep here gives it the chance to renew the pool's lease when due, and to stop the
 * run when the lease was taken or an operator asked to cancel. It is registered per context object (one
 * per replay), so phases need not pass it along; the run registers it again, deterministically, on every
 * replay.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { EVENT } from '../../shared/application/orchestration-ids.js';
import { durableTimer, EventWatch } from './races.js';
import { StepFailure } from './step-failure.js';
import type { PollSchedule } from './timing.js';
import { pollDelaySeconds } from './timing.js';

/** What a run holding a pool does before each activity and each sleep. */
export interface WaitGuard {
  /** Before an activity is scheduled: renew the lease when due; throws to stop the run. */
  beforeActivity(context: OrchestrationContext): Generator<Task, void, unknown>;
  /** Before sleeping until `fireAt`: the lease must outlast the sleep; throws to stop the run. */
  beforeSleep(context: OrchestrationContext, fireAt: Date): Generator<Task, void, unknown>;
}

interface ContextGuards {
  guard?: WaitGuard;
  cancel?: CancelWatch;
}

const guards = new WeakMap<OrchestrationContext, ContextGuards>();

function guardsOf(context: OrchestrationContext): ContextGuards {
  let found = guards.get(context);
  if (found === undefined) {
    found = {};
    guards.set(context, found);
  }
  return found;
}

/** Registers (or with undefined, removes) the run's wait guard for this replay. */
export function setWaitGuard(context: OrchestrationContext, guard: WaitGuard | undefined): void {
  guardsOf(context).guard = guard;
}

export function waitGuardOf(context: OrchestrationContext): WaitGuard | undefined {
  return guards.get(context)?.guard;
}

/** The run's cancel watch while it is active (the capture), for a cancel asked through the lease. */
export function activeCancelOf(context: OrchestrationContext): CancelWatch | undefined {
  const cancel = guards.get(context)?.cancel;
  return cancel?.active === true ? cancel : undefined;
}

/** The failure a cancel ends the step with. */
export function cancelled(step: string, reason: unknown): StepFailure {
  const why = typeof reason === 'string' && reason !== '' ? `: ${reason}` : '';
  return StepFailure.terminal(step, 'Cancelled', `cancelled by the operator${why}`);
}

/**
 * The run's cancel watch, shared by every wait of the capture. `active` is turned off once the node is
 * being given back: from then on the run finishes what it must.
 */
export interface CancelWatch {
  readonly events: EventWatch;
  active: boolean;
}

export function watchCancel(context: OrchestrationContext): CancelWatch {
  const watch = { events: new EventWatch(context, EVENT.cancel), active: true };
  guardsOf(context).cancel = watch;
  return watch;
}

/** Sleeps until `fireAt`, or fails the step at once when the operator cancels the run. */
export function* sleepUnlessCancelled(
  context: OrchestrationContext,
  step: string,
  fireAt: Date,
  cancel: CancelWatch | undefined,
): Generator<Task, void, unknown> {
  const guard = waitGuardOf(context);
  if (guard !== undefined) yield* guard.beforeSleep(context, fireAt);
  const timer = durableTimer(context, fireAt);
  if (cancel === undefined || !cancel.active) {
    yield timer;
    return;
  }
  const event = yield* cancel.events.race(timer);
  if (event !== undefined) {
    cancel.active = false;
    throw cancelled(step, event.result);
  }
}

export interface PollSpec<T> {
  readonly step: string;
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  /**
   * When the awaited operation is usually done (timing.ts EXPECTED): the first read waits until then,
   * counted from `sinceMs`. Absent: the first read is made at once.
   */
  readonly expectedSeconds?: number;
  /** See PollSchedule (timing.ts). */
  readonly growToSeconds?: number | undefined;
  /** When the operation was asked for (orchestration time, ms); default: when the wait starts. */
  readonly sinceMs?: number;
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
 */
export function* pollUntil<T>(context: OrchestrationContext, spec: PollSpec<T>): Generator<Task, T, unknown> {
  const startedAt = context.df.currentUtcDateTime.getTime();
  const deadline = startedAt + spec.timeoutSeconds * 1000;
  const since = spec.sinceMs ?? startedAt;
  const schedule: PollSchedule = {
    expectedSeconds: spec.expectedSeconds ?? 0,
    intervalSeconds: spec.intervalSeconds,
    growToSeconds: spec.growToSeconds,
  };
  const firstReadAt = since + schedule.expectedSeconds * 1000;
  if (firstReadAt > startedAt) {
    yield* sleepUnlessCancelled(context, spec.step, new Date(Math.min(deadline, firstReadAt)), spec.cancel);
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
    yield* sleepUnlessCancelled(
      context,
      spec.step,
      new Date(Math.min(deadline, now + delaySeconds * 1000)),
      spec.cancel,
    );
  }
}
