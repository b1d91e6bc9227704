import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { decideRetry, type RetryDecision, type RetryPolicy } from '../../../cli/runner/retry.js';

void describe('decideRetry', () => {
  const cases: {
    name: string;
    policy: RetryPolicy;
    failedAttempt: number;
    elapsed?: number;
    expected: RetryDecision;
  }[] = [
    {
      name: 'first failure waits the first interval',
      policy: { firstRetryIntervalInMilliseconds: 5_000, maxNumberOfAttempts: 3 },
      failedAttempt: 1,
      expected: { kind: 'retry', delayMs: 5_000 },
    },
    {
      name: 'without a coefficient the interval stays constant',
      policy: { firstRetryIntervalInMilliseconds: 5_000, maxNumberOfAttempts: 5 },
      failedAttempt: 3,
      expected: { kind: 'retry', delayMs: 5_000 },
    },
    {
      name: 'backoff multiplies per failed attempt',
      policy: { firstRetryIntervalInMilliseconds: 1_000, maxNumberOfAttempts: 5, backoffCoefficient: 3 },
      failedAttempt: 3,
      expected: { kind: 'retry', delayMs: 9_000 },
    },
    {
      name: 'maxRetryInterval caps the delay',
      policy: {
        firstRetryIntervalInMilliseconds: 1_000,
        maxNumberOfAttempts: 10,
        backoffCoefficient: 2,
        maxRetryIntervalInMilliseconds: 6_000,
      },
      failedAttempt: 4,
      expected: { kind: 'retry', delayMs: 6_000 },
    },
    {
      name: 'the last attempt gives up',
      policy: { firstRetryIntervalInMilliseconds: 1_000, maxNumberOfAttempts: 3 },
      failedAttempt: 3,
      expected: { kind: 'give-up' },
    },
    {
      name: 'a single attempt never retries',
      policy: { firstRetryIntervalInMilliseconds: 1_000, maxNumberOfAttempts: 1 },
      failedAttempt: 1,
      expected: { kind: 'give-up' },
    },
    {
      name: 'retry timeout elapsed with attempts left',
      policy: {
        firstRetryIntervalInMilliseconds: 1_000,
        maxNumberOfAttempts: 5,
        retryTimeoutInMilliseconds: 10_000,
      },
      failedAttempt: 2,
      elapsed: 10_000,
      expected: { kind: 'timed-out' },
    },
    {
      name: 'retry timeout not yet elapsed',
      policy: {
        firstRetryIntervalInMilliseconds: 1_000,
        maxNumberOfAttempts: 5,
        retryTimeoutInMilliseconds: 10_000,
      },
      failedAttempt: 2,
      elapsed: 9_999,
      expected: { kind: 'retry', delayMs: 1_000 },
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.deepEqual(decideRetry(c.policy, c.failedAttempt, c.elapsed ?? 0), c.expected);
    });
  }
});
