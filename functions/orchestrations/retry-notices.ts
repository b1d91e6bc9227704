/**
 * Who is told when `call` (call.ts) waits to retry an activity's transient failure: nobody in the function
 * app (its runs' custom status and logs say what they wait for), the CLI's progress on stderr
 * (cli/retry-progress.ts), so that an operator whose API server is unreachable does not stare at a silent
 * terminal through minutes of backoff. Told once per real retry, never while an orchestrator replays its
 * history; what a listener does cannot change the orchestration.
 */
import type { OrchestrationContext } from 'durable-functions';

import type { ActivityFailure } from '../../shared/application/activities/activity.js';

export interface RetryNotice {
  readonly instanceId: string;
  readonly activity: string;
  /** The activity input's `cluster`, when it has one (most do). */
  readonly cluster?: string;
  readonly failure: ActivityFailure;
  /** The attempt that comes next (2 after the first failure). */
  readonly nextAttempt: number;
  /** The policy's bound (Infinity for a policy bounded by time, such as the give-back's). */
  readonly maxAttempts: number;
  readonly waitMs: number;
}

export type RetryListener = (notice: RetryNotice) => void;

let listener: RetryListener | undefined;

/** Sets (or, with undefined, removes) the one listener of this process; returns the previous one. */
export function listenToRetries(next: RetryListener | undefined): RetryListener | undefined {
  const previous = listener;
  listener = next;
  return previous;
}

/** Tells the listener of a retry, unless the orchestrator is replaying (it was told the first time). */
export function noticeRetry(context: OrchestrationContext, notice: Omit<RetryNotice, 'instanceId'>): void {
  if (listener === undefined || context.df.isReplaying) return;
  try {
    listener({ instanceId: context.df.instanceId, ...notice });
  } catch {
    // A listener's failure (a closed stderr) must not fail the orchestration.
  }
}

/** The `cluster` field of an activity input, if it has one. */
export function clusterOfInput(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null || !('cluster' in input)) return undefined;
  return typeof input.cluster === 'string' ? input.cluster : undefined;
}
