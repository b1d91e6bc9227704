/**
 * One pool refresh on a large cluster reads the whole node list once (the goal: at most twice): the
 * count of node-list pages comes from the simulator's request log and does not vary between runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { measureNodeReads } from './node-reads.bench.js';

void describe('node reads of one pool refresh', { timeout: 1_800_000 }, () => {
  void it('lists every node once, canary included', async () => {
    // 2 000 nodes: a 20 000-node refresh takes longer than a test should on the simulator (the bench's
    // `nodeReads20k` measures that size); what is counted does not depend on the size.
    const figures = await measureNodeReads(2_000);
    assert.equal(figures.outcome, 'refreshed');
    assert.equal(figures.pagesPerFullListing, 4, '2 000 nodes, 500 a page');
    // One listing of every node (the plan's) and pool-selected pages of one page each (generations,
    // retirement, the holdings' search for nodes a run marked, by the label the scale set's tags name,
    // and the canary's search for a node registered under another name while its own has not joined
    // yet): 20 at 2 000 nodes, 56 at 20 000. Before: two listings (the holdings scanned every node), 23
    // here; before that ~800 pages, the canary listing every node every 30 s.
    assert.ok(
      figures.nodeListPagesPerPoolRefresh <= figures.pagesPerFullListing + 17,
      `node-list pages: ${figures.nodeListPagesPerPoolRefresh} (one full listing: ${figures.pagesPerFullListing})`,
    );
  });
});
