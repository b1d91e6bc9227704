import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createSystemClock, createVirtualClock } from '../../../cli/runner/clock.js';

void describe('virtual clock', () => {
  void it('jumps forward on sleepUntil, tells onAdvance first, and never goes back', async () => {
    const seen: { to: number; nowDuringHook: number }[] = [];
    const clock = createVirtualClock({
      startMs: 1_000,
      onAdvance: (to) => void seen.push({ to, nowDuringHook: clock.now() }),
    });

    await clock.sleepUntil(5_000);
    await clock.sleepUntil(2_000);
    await clock.advanceTo(7_000);

    assert.equal(clock.virtual, true);
    assert.equal(clock.now(), 7_000);
    assert.deepEqual(seen, [
      { to: 5_000, nowDuringHook: 1_000 },
      { to: 7_000, nowDuringHook: 5_000 },
    ]);
  });
});

void describe('system clock', () => {
  void it('returns at once for a past instant and when aborted', async () => {
    const clock = createSystemClock();
    await clock.sleepUntil(clock.now() - 1);
    const abort = new AbortController();
    const sleeping = clock.sleepUntil(clock.now() + 60 * 60_000, abort.signal);
    abort.abort();
    await sleeping;
    assert.equal(clock.virtual, false);
  });
});
