/**
 * The one way an orchestrator calls an activity: `yield* call(context, activities.planPool, input, {
 * step })`. Typed by the handle (input checked, output inferred), it reads the activity's result value
 * (shared/application/activities/activity.ts) and
 * - returns the value on success;
 * - retries a transient failure on durable timers, waiting the longer of the server's Retry-After and its
 *   own backoff, a bounded number of times (timing.ts);
 * - fails a terminal or not-found failure at once as a StepFailure carrying step, kind, code, message and
 *   advice — no message is ever parsed to recover a cause;
 * - is a boundary of a refresh's cancel (cancel.ts): before each attempt it stops the run when a cancel
 *   was asked, and while the run holds its pool the activity reads the pool's lease first and answers
 *   `CancelRequested` (doing nothing) when a cancel was asked there — unless the lease's renewal at this
 *   same boundary (ownership.ts) has just read it and taken that cancel.
 * A thrown error reaching the orchestrator comes from the host, not from the activity (an activity
 * timeout, a worker that crashed): it is treated as transient.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { ActivityFailure, ActivityResult } from '../../shared/application/activities/activity.js';
import { CANCEL_REQUESTED, withCancelWatch } from '../../shared/application/pool-cancel.js';
import { formatDuration } from '../../shared/config/duration.js';
import { definedOnly } from '../../shared/domain/optional.js';
import type { ActivityHandle } from '../activities.js';
import { readInstanceStatus } from '../instance-status.activity.js';
import { cancelledByLease, leaseWatchOf, stopIfCancelled } from './cancel.js';
import { durableTimer } from './races.js';
import { clusterOfInput, noticeRetry } from './retry-notices.js';
import type { StepName } from './step-failure.js';
import { StepFailure } from './step-failure.js';
import type { RetryPolicy } from './timing.js';
import { MAX_RETRY_AFTER_MS, STEP_RETRY } from './timing.js';
import { sleepUnlessCancelled, waitGuardOf } from './waits.js';

export interface CallOptions {
  /** The step the call belongs to: a failure names it. */
  readonly step: StepName;
  /** What the operator can do when the step fails, shown after the failure's own advice. */
  readonly advice?: string;
  /** Default: STEP_RETRY. */
  readonly retry?: RetryPolicy;
  /** Told about each transient failure before the retry wait (to show what the run waits for). */
  readonly onRetry?: (failure: ActivityFailure, retryAt: Date, attempt: number) => void;
}

/** Calls one activity as `options.step`; returns its value or throws a StepFailure. */
export function* call<Input, Output>(
  context: OrchestrationContext,
  activity: ActivityHandle<Input, Output>,
  input: Input,
  options: CallOptions,
): Generator<Task, Output, unknown> {
  const policy = options.retry ?? STEP_RETRY;
  const step = options.step;
  const startedAt = context.df.currentUtcDateTime.getTime();
  for (let attempt = 1; ; attempt += 1) {
    const guard = waitGuardOf(context);
    const renewedNow = guard === undefined ? false : yield* guard.beforeActivity(context);
    stopIfCancelled(context, step);
    // A renewal at this boundary has just read the lease for a cancel: no second read in the activity.
    const watch = renewedNow ? undefined : leaseWatchOf(context);
    const result = yield* callOnce(
      context,
      activity,
      watch === undefined ? input : withCancelWatch(input, watch),
    );
    if (result.ok) return result.value;
    if (watch !== undefined && result.failure.code === CANCEL_REQUESTED) {
      throw cancelledByLease(context, step, result.failure.message);
    }
    const now = context.df.currentUtcDateTime.getTime();
    const waitMs = retryWait(policy, attempt, result.failure, now - startedAt);
    if (waitMs === undefined) {
      const note =
        result.failure.kind === 'transient' && attempt > 1
          ? `(still failing after ${attempt} attempts in ${formatDuration(Math.round((now - startedAt) / 1000))})`
          : undefined;
      throw StepFailure.ofActivity(step, result.failure, options.advice, note);
    }
    noticeRetry(context, {
      activity: activity.name,
      ...definedOnly({ cluster: clusterOfInput(input) }),
      failure: result.failure,
      nextAttempt: attempt + 1,
      maxAttempts: policy.maxAttempts,
      waitMs,
    });
    options.onRetry?.(result.failure, new Date(now + waitMs), attempt);
    yield* sleepUnlessCancelled(context, step, new Date(now + waitMs));
  }
}

/**
 * How long to wait before the next attempt, or undefined to give up: only transient failures are
 * retried; the wait is the backoff or the server's Retry-After (capped), whichever is longer.
 */
export function retryWait(
  policy: RetryPolicy,
  failedAttempt: number,
  failure: ActivityFailure,
  elapsedMs: number,
): number | undefined {
  if (failure.kind !== 'transient' || failedAttempt >= policy.maxAttempts) return undefined;
  const backoff = Math.min(
    policy.maxDelayMs,
    policy.firstDelayMs * Math.pow(policy.backoffCoefficient, failedAttempt - 1),
  );
  const wait = Math.max(backoff, Math.min(failure.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  if (policy.withinMs === undefined) return wait;
  if (elapsedMs >= policy.withinMs) return undefined;
  return Math.min(wait, policy.withinMs - elapsedMs);
}

/** One attempt of an activity, its result as a value; no retry, no wait guard (the guard's own calls). */
export function* callOnce<Input, Output>(
  context: OrchestrationContext,
  activity: ActivityHandle<Input, Output>,
  input: Input,
): Generator<Task, ActivityResult<Output>, unknown> {
  try {
    return resultOf<Output>(activity.name, yield context.df.callActivity(activity.name, input));
  } catch (error) {
    return { ok: false, failure: hostFailure(activity.name, error) };
  }
}

/**
 * The result value an activity returned. The value's type is the handle's: the registered handler of
 * that name returned it (activities never throw) and JSON carried it here; only the envelope is checked.
 */
function resultOf<Output>(name: string, value: unknown): ActivityResult<Output> {
  if (typeof value === 'object' && value !== null && 'ok' in value) {
    if (value.ok === true) return value as ActivityResult<Output>;
    if (value.ok === false && 'failure' in value && isFailure(value.failure)) {
      return { ok: false, failure: value.failure };
    }
  }
  return {
    ok: false,
    failure: {
      kind: 'terminal',
      code: 'MalformedActivityResult',
      message: `activity ${name} answered something that is not a result value (a registration out of date?)`,
    },
  };
}

function isFailure(value: unknown): value is ActivityFailure {
  if (typeof value !== 'object' || value === null) return false;
  const failure = value as Partial<Record<keyof ActivityFailure, unknown>>;
  return (
    (failure.kind === 'transient' || failure.kind === 'terminal' || failure.kind === 'not-found') &&
    typeof failure.code === 'string' &&
    typeof failure.message === 'string'
  );
}

/**
 * The message of an error the host threw into the orchestrator: a failed task's (durable-functions'
 * TaskFailedError) is its failure details' message. The class is told by its shape: it lives in the
 * package's root module, which would load its HTTP client (axios and more) into every process that only
 * runs orchestrators, such as the CLI.
 */
function hostErrorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const details = (error as Error & { failureDetails?: { errorMessage?: unknown } }).failureDetails;
  return error.name === 'TaskFailedError' && typeof details?.errorMessage === 'string'
    ? details.errorMessage
    : error.message;
}

/** An error thrown into the orchestrator by the host for an activity (timeout, crashed worker). */
function hostFailure(name: string, error: unknown): ActivityFailure {
  return {
    kind: 'transient',
    code: 'ActivityFailed',
    message: `activity ${name} failed: ${hostErrorMessage(error)}`,
  };
}

/**
 * The message of a failed sub-orchestration as the host delivered it (a child's StepFailure message
 * reads `<step>: <cause>`).
 */
export function childFailureMessage(error: unknown): string {
  return hostErrorMessage(error);
}

/**
 * A sub-orchestration start refused because its instance id is in use. Recognised by the host's own
 * wording (DTFx's and the local runner's): the host offers nothing structured for this case.
 */
export function isAlreadyRunning(error: unknown): boolean {
  return /\bis already (Running|Pending|ContinuedAsNew|Suspended)\b|\bstatus (Running|Pending|ContinuedAsNew|Suspended) already exists\b|OrchestrationAlreadyExists/i.test(
    childFailureMessage(error),
  );
}

/** The outcome of one of several parallel calls. */
export type CallOutcome<Output> =
  { readonly ok: true; readonly value: Output } | { readonly ok: false; readonly failure: StepFailure };

/**
 * Calls one activity for each input at once, each retried like `call`, and returns every outcome in
 * input order: one failing input does not stop the others (plans of a cluster's pools, status reads).
 *
 * In rounds: every call of a round is sent in one Task.all, then each is waited for on its own (a task
 * yielded alone is never sent again) so a host failure of one leaves none unheard; the transient failures
 * are retried together after the longest of their waits. Never a Task.any over calls already sent:
 * durable-functions 3.5 would send them again and the Durable extension would schedule them twice
 * (azure-functions-durable-js#574).
 */
export function* callEach<Input, Output>(
  context: OrchestrationContext,
  activity: ActivityHandle<Input, Output>,
  inputs: readonly Input[],
  options: CallOptions,
): Generator<Task, CallOutcome<Output>[], unknown> {
  const policy = options.retry ?? STEP_RETRY;
  const startedAt = context.df.currentUtcDateTime.getTime();
  const outcomes: (CallOutcome<Output> | undefined)[] = inputs.map(() => undefined);
  let round = inputs.map((input, index) => ({ index, input, attempt: 1 }));
  while (round.length > 0) {
    const tasks = round.map((entry) => context.df.callActivity(activity.name, entry.input));
    try {
      yield context.df.Task.all(tasks);
    } catch {
      // One call failed in the host: each is read below.
    }
    const retries: typeof round = [];
    let waitMs = 0;
    for (const [position, entry] of round.entries()) {
      const task = tasks[position];
      if (task === undefined) continue;
      if (!task.isCompleted && !task.isFaulted) {
        try {
          yield task;
        } catch {
          // Read from the task below.
        }
      }
      const result: ActivityResult<Output> = task.isFaulted
        ? { ok: false, failure: hostFailure(activity.name, task.result) }
        : resultOf<Output>(activity.name, task.result);
      if (result.ok) {
        outcomes[entry.index] = result;
        continue;
      }
      const now = context.df.currentUtcDateTime.getTime();
      const wait = retryWait(policy, entry.attempt, result.failure, now - startedAt);
      if (wait === undefined) {
        outcomes[entry.index] = {
          ok: false,
          failure: StepFailure.ofActivity(options.step, result.failure, options.advice),
        };
        continue;
      }
      retries.push({ ...entry, attempt: entry.attempt + 1 });
      waitMs = Math.max(waitMs, wait);
    }
    if (retries.length > 0) {
      yield durableTimer(context, new Date(context.df.currentUtcDateTime.getTime() + waitMs));
    }
    round = retries;
  }
  return outcomes.filter((outcome): outcome is CallOutcome<Output> => outcome !== undefined);
}

/**
 * The runtime status of an orchestration instance that still owns its id (a start over it would replace
 * it), or undefined: what is asked before a pool's singleton refresh is started as a sub-orchestration.
 * Throws a StepFailure when the status cannot be read (then nothing is started).
 */
export function* activeInstanceStatus(
  context: OrchestrationContext,
  instanceId: string,
): Generator<Task, string | undefined, unknown> {
  const status = yield* call(context, readInstanceStatus, { instanceId }, { step: 'refreshing' });
  return status.active ? (status.runtimeStatus ?? 'active') : undefined;
}
