import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  firesAt,
  nextWindowAt,
  openWindowAt,
  parseSchedule,
} from '../../../shared/domain/schedule-window.js';

const SATURDAY_2AM = { schedule: '0 0 2 * * sat', durationSeconds: 4 * 3600 };
const EVERY_QUARTER_HOUR = { schedule: '0 */15 * * * *', durationSeconds: 300 };

void describe('parseSchedule and firesAt', () => {
  const cases: { schedule: string; at: string; fires: boolean }[] = [
    { schedule: '0 0 2 * * sat', at: '2026-11-28T02:00:00Z', fires: true },
    { schedule: '0 0 2 * * sat', at: '2026-11-28T02:00:01Z', fires: false },
    { schedule: '0 0 2 * * sat', at: '2026-11-27T02:00:00Z', fires: false },
    { schedule: '0 */15 * * * *', at: '2026-11-27T10:45:00Z', fires: true },
    { schedule: '0 */15 * * * *', at: '2026-11-27T10:46:00Z', fires: false },
    { schedule: '30 5-7 * * * mon-fri', at: '2026-11-27T06:05:30Z', fires: true },
    { schedule: '0 0 0 1,15 * *', at: '2026-12-15T00:00:00Z', fires: true },
    { schedule: '0 0 0 1 jan *', at: '2027-01-01T00:00:00Z', fires: true },
  ];
  for (const { schedule, at, fires } of cases) {
    void it(`${schedule} ${fires ? 'fires' : 'does not fire'} at ${at}`, () => {
      assert.equal(firesAt(parseSchedule(schedule), new Date(at)), fires);
    });
  }
});

void describe('openWindowAt', () => {
  const cases: { name: string; now: string; open: boolean; closesAt?: string }[] = [
    { name: 'at the firing', now: '2026-11-28T02:00:00Z', open: true, closesAt: '2026-11-28T06:00:00.000Z' },
    { name: 'inside', now: '2026-11-28T05:59:59Z', open: true, closesAt: '2026-11-28T06:00:00.000Z' },
    { name: 'at its end', now: '2026-11-28T06:00:00Z', open: false },
    { name: 'the day before', now: '2026-11-27T03:00:00Z', open: false },
  ];
  for (const { name, now, open, closesAt } of cases) {
    void it(name, () => {
      const window = openWindowAt([SATURDAY_2AM], new Date(now));
      assert.equal(window !== undefined, open);
      if (closesAt !== undefined) assert.equal(window?.closesAt.toISOString(), closesAt);
    });
  }
  void it('the window that closes last wins when two are open', () => {
    const window = openWindowAt([EVERY_QUARTER_HOUR, SATURDAY_2AM], new Date('2026-11-28T02:01:00Z'));
    assert.equal(window?.window, SATURDAY_2AM);
  });
});

void describe('nextWindowAt', () => {
  void it('finds the next firing after now', () => {
    assert.equal(
      nextWindowAt([SATURDAY_2AM], new Date('2026-11-27T12:00:00Z'))?.toISOString(),
      '2026-11-28T02:00:00.000Z',
    );
    assert.equal(
      nextWindowAt([SATURDAY_2AM, EVERY_QUARTER_HOUR], new Date('2026-11-27T12:01:00Z'))?.toISOString(),
      '2026-11-27T12:15:00.000Z',
    );
  });
  void it('answers undefined when nothing fires within the horizon', () => {
    assert.equal(
      nextWindowAt([{ schedule: '0 0 0 30 feb *', durationSeconds: 60 }], new Date('2026-11-27T00:00:00Z')),
      undefined,
    );
  });
});
