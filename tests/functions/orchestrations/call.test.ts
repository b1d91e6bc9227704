// Table tests for the retry decision of the call helper: only transient failures wait, the wait is the
// longer of the backoff and the server's Retry-After (capped), and the attempts and time are bounded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import * as df from 'durable-functions';

import { childFailureMessage, retryWait } from '../../../functions/orchestrations/call.js';
import { MAX_RETRY_AFTER_MS, RESTORE_RETRY, STEP_RETRY } from '../../../functions/orchestrations/timing.js';
import type { ActivityFailure } from '../../../shared/application/activities/activity.js';

const transient = (retryAfterMs?: number): ActivityFailure => ({
  kind: 'transient',
  code: 'ArmThrottled',
  message: 'throttled',
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

void describe('retryWait', () => {
  const cases: {
    name: string;
    failure: ActivityFailure;
    attempt: number;
    elapsedMs?: number;
    policy?: typeof STEP_RETRY;
    want: number | undefined;
  }[] = [
    {
      name: 'terminal: never retried',
      failure: { kind: 'terminal', code: 'Forbidden', message: 'no' },
      attempt: 1,
      want: undefined,
    },
    {
      name: 'not-found: never retried',
      failure: { kind: 'not-found', code: 'NotFound', message: 'gone' },
      attempt: 1,
      want: undefined,
    },
    { name: 'first backoff 5 s', failure: transient(), attempt: 1, want: 5_000 },
    { name: 'doubles', failure: transient(), attempt: 2, want: 10_000 },
    { name: 'capped at 60 s', failure: transient(), attempt: 5, want: 60_000 },
    { name: 'six attempts in all', failure: transient(), attempt: 6, want: undefined },
    {
      name: 'Retry-After longer than the backoff wins',
      failure: transient(17_000),
      attempt: 1,
      want: 17_000,
    },
    { name: 'backoff longer than Retry-After wins', failure: transient(2_000), attempt: 3, want: 20_000 },
    {
      name: 'an absurd Retry-After is capped',
      failure: transient(3_600_000),
      attempt: 1,
      want: MAX_RETRY_AFTER_MS,
    },
    {
      name: 'restore: many attempts',
      failure: transient(),
      attempt: 40,
      elapsedMs: 10 * 60_000,
      policy: RESTORE_RETRY,
      want: 60_000,
    },
    {
      name: 'restore: the last wait ends at the deadline',
      failure: transient(),
      attempt: 40,
      elapsedMs: 239.5 * 60_000,
      policy: RESTORE_RETRY,
      want: 30_000,
    },
    {
      name: 'restore: patient through a 45-minute API server outage',
      failure: transient(),
      attempt: 50,
      elapsedMs: 45 * 60_000,
      policy: RESTORE_RETRY,
      want: 60_000,
    },
    {
      name: 'restore: no attempt after 4 h',
      failure: transient(),
      attempt: 40,
      elapsedMs: 240 * 60_000,
      policy: RESTORE_RETRY,
      want: undefined,
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.equal(retryWait(c.policy ?? STEP_RETRY, c.attempt, c.failure, c.elapsedMs ?? 0), c.want);
    });
  }

  void it('the default schedule absorbs about 2¼ minutes of transient failure', () => {
    let total = 0;
    for (let attempt = 1; ; attempt++) {
      const wait = retryWait(STEP_RETRY, attempt, transient(), total);
      if (wait === undefined) break;
      total += wait;
    }
    assert.equal(total, 135_000);
  });
});

void describe('childFailureMessage', () => {
  void it("reads the host's task failure by its shape, and any other error by its message", () => {
    const failed = new df.TaskFailedError({
      errorType: 'StepFailure',
      errorMessage: 'capturing: the snapshot failed',
      isNonRetriable: false,
      isCausedBy: () => false,
    });
    const cases: [string, unknown, string][] = [
      ["the SDK's TaskFailedError: its failure details' message", failed, 'capturing: the snapshot failed'],
      ['an Error', new Error('boom'), 'boom'],
      [
        'an Error named like it without details',
        Object.assign(new Error('plain'), { name: 'TaskFailedError' }),
        'plain',
      ],
      ['a string', 'gone', 'gone'],
    ];
    for (const [name, error, want] of cases) assert.equal(childFailureMessage(error), want, name);
  });
});
