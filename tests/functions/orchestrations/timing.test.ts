import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { EXPECTED, pollDelaySeconds, PREP_IMAGE_PULL } from '../../../functions/orchestrations/timing.js';

void describe('pollDelaySeconds: first at the expected completion, then briefly', () => {
  const schedule = { expectedSeconds: 110, intervalSeconds: 10 };
  const cases: readonly [string, number, number | undefined, number][] = [
    ['just asked: sleep until the expected completion', 0, undefined, 110],
    ['part way: the rest of it', 45.5, undefined, 64.5],
    ['at the expected completion: the short interval', 110, undefined, 10],
    ['past it: the short interval', 180, undefined, 10],
    ['a Retry-After longer than the interval is honoured', 180, 30, 30],
    ['a Retry-After shorter than the wait changes nothing', 20, 30, 90],
    ['a Retry-After longer than the wait to the expected completion wins', 100, 60, 60],
  ];
  for (const [name, elapsed, retryAfter, expected] of cases) {
    void it(name, () => {
      assert.equal(pollDelaySeconds(schedule, elapsed, retryAfter), expected);
    });
  }

  void it('without an expected completion: the interval from the first read on', () => {
    assert.equal(pollDelaySeconds({ expectedSeconds: 0, intervalSeconds: 15 }, 0), 15);
    assert.equal(pollDelaySeconds({ expectedSeconds: 0, intervalSeconds: 15 }, 200), 15);
  });

  void it('a growing wait sleeps as long as it waited so far, between its interval and its cap', () => {
    const schedule = { expectedSeconds: 2, intervalSeconds: 2, growToSeconds: 15 };
    let elapsed = 0;
    const reads: number[] = [];
    while (elapsed < 60) {
      elapsed += pollDelaySeconds(schedule, elapsed);
      reads.push(elapsed);
    }
    assert.deepEqual(reads, [2, 4, 8, 16, 31, 46, 61]);
    assert.deepEqual(PREP_IMAGE_PULL, schedule, 'the prep image pull reads so');
    assert.equal(pollDelaySeconds(schedule, 30, 20), 20, 'a longer Retry-After still wins');
  });

  void it('a varying wait backs off once overdue: the interval, then as long as it is overdue, up to its cap', () => {
    const schedule = { expectedSeconds: 120, intervalSeconds: 10, backoffToSeconds: 20 };
    let elapsed = 0;
    const reads: number[] = [];
    while (elapsed < 220) {
      elapsed += pollDelaySeconds(schedule, elapsed);
      reads.push(elapsed);
    }
    assert.deepEqual(reads, [120, 130, 140, 160, 180, 200, 220]);
    assert.equal(pollDelaySeconds(schedule, 150, 45), 45, 'a longer Retry-After still wins');
  });

  void it('the waits whose length varies most back off', () => {
    for (const name of ['powerOff', 'snapshot', 'start', 'imageVersion', 'extensionDeletion'] as const) {
      const wait: { backoffToSeconds?: number; intervalSeconds: number } = EXPECTED[name];
      assert.ok((wait.backoffToSeconds ?? 0) > wait.intervalSeconds, `${name} backs off`);
    }
  });

  void it('every expected wait reads again within seconds once it is due', () => {
    for (const [name, wait] of Object.entries(EXPECTED)) {
      assert.ok(wait.expectedSeconds > 0, `${name} waits for its expected completion`);
      assert.ok(wait.intervalSeconds <= 15, `${name} then reads every ${wait.intervalSeconds} s`);
    }
  });
});

void describe('pollDelaySeconds: a wait due in less than a millisecond is due now', () => {
  // A timer set at now fires at once and the read finds the same clock: on a manual clock the poll would
  // read for ever at one instant. 35 × 0.02 s (a scaled expected time) is 0.7000000000000001 s.
  void it('reads again after the schedule, not at once', () => {
    const schedule = { expectedSeconds: 35 * 0.02, intervalSeconds: 1 };
    assert.equal(pollDelaySeconds(schedule, 0.7), 1);
    assert.ok(Math.abs(pollDelaySeconds(schedule, 0.699) - 0.001) < 1e-9, 'a millisecond to go is waited');
  });
});
