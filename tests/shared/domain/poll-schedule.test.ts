import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pollDelaySeconds, type PollSchedule } from '../../../shared/domain/poll-schedule.js';

/** The elapsed seconds of every read a wait makes until `doneAt` (the read at or after it included). */
function readsUntil(schedule: PollSchedule, doneAt: number): number[] {
  const reads: number[] = [];
  let elapsed = 0;
  for (let round = 0; round < 100 && (reads.at(-1) ?? -1) < doneAt; round++) {
    elapsed += pollDelaySeconds(schedule, elapsed);
    reads.push(elapsed);
  }
  return reads;
}

void describe('pollDelaySeconds with a late share: a miss is read again after a share of the wait', () => {
  const stop: PollSchedule = {
    expectedSeconds: 135,
    intervalSeconds: 10,
    lateShare: 0.25,
    backoffToSeconds: 60,
  };
  const cases: readonly [string, PollSchedule, number, number[]][] = [
    ['done by the expected completion: one read', stop, 120, [135]],
    ['a few seconds late: one more read', stop, 140, [135, 169]],
    ['at the slow end of the range (kamino: 183 s): three reads', stop, 187, [135, 169, 212]],
    ['very late: the sleeps stop growing at the cap', stop, 400, [135, 169, 212, 265, 325, 385, 445]],
    [
      'read first at the quickest stop, a miss 40 % later: most stops cost two reads',
      { expectedSeconds: 115, intervalSeconds: 10, lateShare: 0.4, backoffToSeconds: 60 },
      160,
      [115, 161],
    ],
    [
      'the same at the slow end of the range: three',
      { expectedSeconds: 115, intervalSeconds: 10, lateShare: 0.4, backoffToSeconds: 60 },
      183,
      [115, 161, 221],
    ],
    [
      'a short wait: never less than the interval',
      { expectedSeconds: 35, intervalSeconds: 10, lateShare: 0.2 },
      50,
      [35, 45, 55],
    ],
    [
      'no cap: the share of the wait, however long',
      { expectedSeconds: 100, intervalSeconds: 5, lateShare: 0.5 },
      300,
      [100, 150, 225, 338],
    ],
  ];
  for (const [name, schedule, doneAt, reads] of cases) {
    void it(name, () => {
      assert.deepEqual(readsUntil(schedule, doneAt), reads);
    });
  }

  void it('counts the share from the request, not from the expected completion', () => {
    // 30 % of 200 s waited, not of the 20 s overdue.
    assert.equal(pollDelaySeconds({ expectedSeconds: 180, intervalSeconds: 5, lateShare: 0.3 }, 200), 60);
  });

  void it('still honours a longer Retry-After', () => {
    assert.equal(pollDelaySeconds(stop, 150, 90), 90);
    assert.equal(pollDelaySeconds(stop, 150, 5), 38);
  });

  void it('costs fewer reads than a fixed interval for an operation minutes late', () => {
    const fixed = { expectedSeconds: 135, intervalSeconds: 10, backoffToSeconds: 20 };
    assert.ok(readsUntil(stop, 250).length < readsUntil(fixed, 250).length);
  });
});

void describe('pollDelaySeconds with steady reads across the range an operation takes', () => {
  const halt: PollSchedule = {
    expectedSeconds: 114,
    intervalSeconds: 8,
    steadyUntilSeconds: 190,
    lateShare: 0.25,
    backoffToSeconds: 60,
  };
  void it('reads every interval from the expected completion: a stop is seen at most an interval late', () => {
    // Quicker than the first read (the range starts at 102 s): seen at it, with one read.
    assert.deepEqual(readsUntil(halt, 102), [114]);
    for (const doneAt of [106, 113, 120, 136, 150, 160, 181]) {
      const reads = readsUntil(halt, doneAt);
      const seenAt = reads.at(-1) ?? 0;
      assert.ok(seenAt >= doneAt && seenAt - doneAt <= 8, `done at ${doneAt}: ${reads.join(', ')}`);
    }
    assert.deepEqual(readsUntil(halt, 136), [114, 122, 130, 138]);
  });

  void it('backs off past the range: a stuck operation is not read every interval', () => {
    assert.deepEqual(readsUntil(halt, 400).slice(10), [194, 243, 303, 363, 423]);
    // Without the steady part, the same schedule backs off from the first miss.
    const { steadyUntilSeconds: _steady, ...backoff } = halt;
    assert.deepEqual(readsUntil(backoff, 160), [114, 143, 179]);
  });
});
