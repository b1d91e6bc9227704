/**
 * The product's waits when operations do not take exactly the expected time: the timing model's jitter
 * over several seeds. And a node from our image is Ready sooner than one from the pool's original image,
 * for every flavour (a relation of the simulator's timing model, not a measured time).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BOOTSTRAP_FLAVOURS, newNodeReadyTable } from '../../sim/world/bootstrap-timing.js';
import { JITTER_SEEDS, jitterFigures } from './jitter.bench.js';

void describe('refresh benchmark under seeded jitter', { timeout: 900_000 }, () => {
  void it('reads a late image version about twice, not every interval, and stays near its budgets', async () => {
    const rows = await jitterFigures(JITTER_SEEDS);
    for (const row of rows) {
      // The version's reads without jitter: 7 (listings, the wait's one read and its deletion's). A late
      // version is read again when its replication progress says the rest is done (image.phase.ts), not
      // every 15 s: one more read at most (13 reads at 15 s for a version 105 s late).
      assert.ok(row.versionReads <= 8, `seed ${row.seed}: version reads ${row.versionReads}`);
      // The budgets (45 / 35) hold without jitter (refresh.bench.test.ts); with it a slow stop, start or
      // snapshot costs a few reads of backoff each. Bounded here so that a regression shows.
      assert.ok(row.armFirst <= 52, `seed ${row.seed}: ARM requests ${row.armFirst}`);
      assert.ok(row.armNext <= 39, `seed ${row.seed}: ARM requests of the next refresh ${row.armNext}`);
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
