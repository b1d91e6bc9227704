// Host-side retry policy for callActivityWithRetry / callSubOrchestratorWithRetry, as DTFx's
// RetryInterceptor computes it (the JS SDK only waits for the timer the host creates).

export interface RetryPolicy {
  firstRetryIntervalInMilliseconds: number;
  maxNumberOfAttempts: number;
  backoffCoefficient?: number;
  maxRetryIntervalInMilliseconds?: number;
  retryTimeoutInMilliseconds?: number;
}

export type RetryDecision =
  | { kind: 'retry'; delayMs: number }
  /** Attempts used up: the host still writes a timer firing at once, then the SDK throws. */
  | { kind: 'give-up' }
  /** retryTimeout passed with attempts left: on Azure the orchestration hangs (durable-js #629). */
  | { kind: 'timed-out' };

/**
 * What follows the failure of attempt `failedAttempt` (1-based). The delay before attempt n+1 is
 * first * coefficient^(n-1), capped by maxRetryInterval (DTFx `ComputeNextDelay`).
 */
export function decideRetry(
  policy: RetryPolicy,
  failedAttempt: number,
  elapsedSinceFirstAttemptMs: number,
): RetryDecision {
  if (failedAttempt >= policy.maxNumberOfAttempts) return { kind: 'give-up' };
  const timeout = policy.retryTimeoutInMilliseconds;
  if (timeout !== undefined && timeout > 0 && elapsedSinceFirstAttemptMs >= timeout) {
    return { kind: 'timed-out' };
  }
  const coefficient = policy.backoffCoefficient ?? 1;
  let delayMs = policy.firstRetryIntervalInMilliseconds * Math.pow(coefficient, failedAttempt - 1);
  const cap = policy.maxRetryIntervalInMilliseconds;
  if (cap !== undefined && cap > 0 && delayMs > cap) delayMs = cap;
  return { kind: 'retry', delayMs: Math.round(delayMs) };
}
