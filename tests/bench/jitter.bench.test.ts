/**
 * The product's waits when operations do not take exactly the expected time: the timing model's jitter
 * over several seeds. And a node from our image is Ready sooner than one from the pool's original image,
 * for every flavour (a relation of the simulator's timing model, not a measured time).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BOOTSTRAP_FLAVOURS, newNodeReadyTable } from '../../sim/world/bootstrap-timing.js';
import { ARM_BUDGET, JITTER_SEEDS, jitterFigures } from './jitter.bench.js';

void describe('refresh benchmark under seeded jitter', { timeout: 900_000 }, () => {
  void it('holds the ARM budgets on every seed: a late operation costs a read or two, not one per interval', async () => {
    const rows = await jitterFigures(JITTER_SEEDS);
    for (const row of rows) {
      // The version's reads without jitter: 6 (listings, the wait's one read and its deletion's). A late
      // version is read again when its replication progress says the rest is done (image.phase.ts), not
      // every 15 s: one more read at most (13 reads at 15 s for a version 105 s late).
      assert.ok(row.versionReads <= 7, `seed ${row.seed}: version reads ${row.versionReads}`);
      // The waits read first where most operations are done and back off by a share of the wait so far
      // (shared/domain/poll-schedule.ts): before, seeds 1–10 cost up to 52 / 39 requests.
      assert.ok(row.armFirst <= ARM_BUDGET.first, `seed ${row.seed}: ARM requests ${row.armFirst}`);
      assert.ok(
        row.armNext <= ARM_BUDGET.next,
        `seed ${row.seed}: ARM requests of the next refresh ${row.armNext}`,
      );
      assert.ok(row.donorOutOfServiceS > 0);
    }
    assert.ok(new Set(rows.map((row) => row.refreshS)).size > 1, 'the seeds draw different durations');
  });
});

void describe('newNodeReadyS from the timing model', () => {
  void it('is shorter from our image than from the original image, for every flavour', () => {
    const table = newNodeReadyTable();
    for (const flavour of BOOTSTRAP_FLAVOURS) {
      const { ours, original } = table[flavour];
      assert.ok(ours < original, `${flavour}: ours ${ours} s, original ${original} s`);
    }
  });
});
