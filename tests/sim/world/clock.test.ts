/** Tests for the simulated clock and discrete-event scheduler (manual and scaled modes). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createClock } from '../../../sim/world/clock.js';

const START = Date.parse('2026-11-22T12:00:00Z');

void describe('manual clock', () => {
  void it('moves only when advanced and runs due events in time order, then insertion order', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const seen: string[] = [];
    clock.after(10, 'c', () => seen.push(`c@${(clock.nowMs() - START) / 1000}`));
    clock.after(5, 'a', () => seen.push(`a@${(clock.nowMs() - START) / 1000}`));
    clock.after(5, 'b', () => seen.push(`b@${(clock.nowMs() - START) / 1000}`));
    clock.runDue();
    assert.deepEqual(seen, []);
    assert.equal(clock.nowMs(), START);
    clock.advanceBy(10);
    assert.deepEqual(seen, ['a@5', 'b@5', 'c@10']);
    assert.equal(clock.nowMs(), START + 10_000);
  });

  void it('runs events scheduled by events when they fall due within the same advance', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const seen: string[] = [];
    clock.after(1, 'outer', () => {
      seen.push('outer');
      clock.after(0, 'now', () => seen.push('nested-now'));
      clock.after(2, 'later', () => seen.push(`nested-later@${(clock.nowMs() - START) / 1000}`));
      clock.after(100, 'beyond', () => seen.push('beyond'));
    });
    clock.advanceBy(5);
    assert.deepEqual(seen, ['outer', 'nested-now', 'nested-later@3']);
    assert.equal(clock.nextEventAt(), START + 101_000);
  });

  void it('does not run cancelled events and reports the next pending one', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    let ran = false;
    const cancel = clock.after(1, 'cancelled', () => {
      ran = true;
    });
    clock.after(3, 'kept', () => undefined);
    cancel();
    assert.equal(clock.nextEventAt(), START + 3000);
    clock.advanceBy(5);
    assert.equal(ran, false);
    assert.equal(clock.nextEventAt(), undefined);
  });

  void it('advanceTo never goes backwards and `at` in the past runs at the next step', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    clock.advanceTo(START + 60_000);
    clock.advanceTo(START);
    assert.equal(clock.nowMs(), START + 60_000);
    let ran = false;
    clock.at(START, 'past', () => {
      ran = true;
    });
    clock.runDue();
    assert.equal(ran, true);
  });

  void it('keeps going after an event throws, reporting the error', () => {
    const errors: string[] = [];
    const clock = createClock({
      mode: 'manual',
      startMs: START,
      onEventError: (label) => errors.push(label),
    });
    let after = false;
    clock.after(1, 'boom', () => {
      throw new Error('boom');
    });
    clock.after(2, 'after', () => {
      after = true;
    });
    clock.advanceBy(3);
    assert.deepEqual(errors, ['boom']);
    assert.equal(after, true);
  });

  void it('rejects negative delays and bad options', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    assert.throws(() => clock.after(-1, 'x', () => undefined), /non-negative/);
    assert.throws(() => clock.advanceBy(-1), /non-negative/);
    assert.throws(() => createClock({ mode: 'scaled', startMs: START, timeFactor: 0 }), /timeFactor/);
  });
});

void describe('scaled clock', () => {
  void it('maps wall time × factor onto simulated time and runs events only when due', () => {
    let wall = 1000;
    const clock = createClock({
      mode: 'scaled',
      startMs: START,
      timeFactor: 60,
      wallMs: () => wall,
      autoRun: false,
    });
    const seen: number[] = [];
    clock.after(120, 'two minutes', () => seen.push((clock.nowMs() - START) / 1000));
    wall += 1000; // one wall second = one simulated minute
    clock.runDue();
    assert.equal(clock.nowMs(), START + 60_000);
    assert.deepEqual(seen, []);
    wall += 1000;
    clock.runDue();
    assert.deepEqual(seen, [120]);
  });

  void it('frozen, stands still while the wall clock runs, still advances on request, then goes on from there', () => {
    let wall = 1000;
    const clock = createClock({
      mode: 'scaled',
      startMs: START,
      timeFactor: 60,
      wallMs: () => wall,
      autoRun: false,
    });
    const seen: number[] = [];
    clock.after(90, 'ninety seconds', () => seen.push((clock.nowMs() - START) / 1000));
    clock.freeze();
    wall += 10_000; // ten simulated minutes, had it not been frozen
    clock.runDue();
    assert.equal(clock.nowMs(), START);
    assert.deepEqual(seen, []);
    clock.advanceBy(30);
    assert.equal(clock.nowMs(), START + 30_000);
    clock.thaw();
    assert.equal(clock.nowMs(), START + 30_000, 'the frozen wall time does not count');
    wall += 1000;
    clock.runDue();
    assert.equal(clock.nowMs(), START + 90_000);
    assert.deepEqual(seen, [90]);
  });

  void it('jumps forward event by event, so chains play out in simulated time', () => {
    const wall = 0;
    const clock = createClock({
      mode: 'scaled',
      startMs: START,
      timeFactor: 10,
      wallMs: () => wall,
      autoRun: false,
    });
    const seen: number[] = [];
    const step = (): void => {
      seen.push((clock.nowMs() - START) / 1000);
      if (seen.length < 4) clock.after(5, 'step', step);
    };
    clock.after(5, 'step', step);
    clock.advanceBy(60);
    assert.deepEqual(seen, [5, 10, 15, 20]);
    assert.equal(clock.nowMs(), START + 60_000);
  });

  void it('never reports time going backwards even if the wall source does', () => {
    let wall = 5000;
    const clock = createClock({
      mode: 'scaled',
      startMs: START,
      timeFactor: 2,
      wallMs: () => wall,
      autoRun: false,
    });
    wall = 6000;
    const later = clock.nowMs();
    wall = 5500;
    assert.equal(clock.nowMs(), later);
  });

  void it('runs due events from its own timer until stopped', async () => {
    const clock = createClock({ mode: 'scaled', startMs: START, timeFactor: 1000 });
    // The clock's timer is unref'd (servers keep a simulator alive); this test has no server.
    const keepAlive = setInterval(() => undefined, 1000);
    const fired = await new Promise<boolean>((resolve) => {
      clock.after(1, 'soon', () => resolve(true));
    });
    clearInterval(keepAlive);
    clock.stop();
    assert.equal(fired, true);
    let late = false;
    clock.after(0.001, 'after stop', () => {
      late = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(late, false);
    clock.runDue();
    assert.equal(late, true);
  });
});
