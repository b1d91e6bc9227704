/**
 * A small fleet refreshing in one simulated night through the schedule's path (issue 32): 2
 * subscriptions × 3 clusters × 2 pools, Compute's throttling enforced, 2 pools of a subscription at once
 * as 2 clusters of 1. Every pool is refreshed, none
 * fails, and no subscription ever had more pool runs at once than its admission allows (counted from the
 * runs' own starts and ends). `node --expose-gc dist/tests/bench/index.js fleet` runs the 1 000-pool one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fleetTable, runFleet } from './fleet-harness.js';

void describe('a fleet refreshing at once', () => {
  void it('12 pools over 2 subscriptions: none fails, the admission cap holds', async () => {
    const shape = {
      subscriptions: 2,
      clustersPerSubscription: 3,
      poolsPerCluster: 2,
      maxPoolsPerSubscription: 2,
      maxParallelPools: 1,
    };
    const figures = await runFleet(shape);
    console.log(fleetTable(shape, figures));
    assert.deepEqual(figures.failures, []);
    assert.equal(figures.refreshed, 12);
    assert.equal(figures.failed, 0);
    assert.equal(figures.admitted, 2);
    assert.ok(
      figures.peakPoolsPerSubscription <= figures.admitted,
      `at most ${figures.admitted} pools of a subscription at once, saw ${figures.peakPoolsPerSubscription}`,
    );
    // The window was used: two clusters' pools ran together (without the admission, all three would).
    assert.equal(figures.peakPoolsPerSubscription, 2);
  });
});
