/**
 * The planner-RSS bench produces its figures through the real Kubernetes adapter: at 2 000 nodes (the
 * bench's figure is at 20 000), each child's peak RSS is reported and the simulated API server's request
 * log saw the child's node-list pages over HTTPS. No RSS limit is asserted (RSS is noisy; the goal is
 * reported by the bench).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { measurePlannerRss } from './planner-rss.bench.js';

void describe('planner peak RSS through the real adapter', { timeout: 600_000 }, () => {
  void it('measures plan and status in child processes that list nodes from the simulator', async () => {
    const figures = await measurePlannerRss(2_000);
    assert.equal(figures.nodes, 2_000);
    for (const [mode, run] of [
      ['plan', figures.plan],
      ['status', figures.status],
    ] as const) {
      assert.ok(run.peakRssMiB > 0, `${mode}: a peak RSS (${run.peakRssMiB} MiB)`);
      assert.ok(run.pools > 0 && run.ok === run.pools, `${mode}: every pool read (${run.ok}/${run.pools})`);
      // The whole cluster's list is 4 pages of 500: the child listed at least one full listing itself.
      assert.ok(run.nodeListRequests >= 4, `${mode}: node-list requests ${run.nodeListRequests}`);
    }
  });
});
