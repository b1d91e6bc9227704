/**
 * A small fleet refreshing in one simulated night through the schedule's path: 2
 * subscriptions × 3 clusters × 2 pools, Compute's throttling enforced, 3 pools of a subscription at once,
 * at most 2 of one cluster: the admission counts pools, so pools of two clusters share the slots. Every
 * pool is refreshed, none fails, and no subscription ever had more pool runs at once than its admission
 * allows (counted from the runs' own starts and ends). The manual clock: simulated time moves only on
 * durable timers, so a busy machine makes the test slower, never different (a scaled clock runs on while
 * a starved process falls behind). `npm run bench -- fleet` runs the 1 000-pool one.
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
      maxPoolsPerSubscription: 3,
      maxParallelPools: 2,
    };
    const figures = await runFleet(shape);
    console.log(fleetTable(shape, figures));
    assert.deepEqual(figures.failures, []);
    assert.equal(figures.refreshed, 12);
    assert.equal(figures.failed, 0);
    assert.equal(figures.admitted, 3);
    assert.ok(
      figures.peakPoolsPerSubscription <= figures.admitted,
      `at most ${figures.admitted} pools of a subscription at once, saw ${figures.peakPoolsPerSubscription}`,
    );
    // The slots were used per pool: 3 at once, from two clusters (admitting whole clusters of 2 pools
    // would have allowed only 2; without the admission all 6 would run).
    assert.equal(figures.peakPoolsPerSubscription, 3);
  });
});
