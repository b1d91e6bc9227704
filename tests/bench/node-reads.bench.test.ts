/**
 * One pool refresh on a 20 000-node cluster reads the whole node list at most twice (issue 32): the
 * count of node-list pages comes from the simulator's request log and does not vary between runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { measureNodeReads } from './node-reads.bench.js';

void describe('node reads of one pool refresh', { timeout: 1_800_000 }, () => {
  void it('lists every node at most twice, canary included', async () => {
    const figures = await measureNodeReads();
    assert.equal(figures.outcome, 'refreshed');
    assert.equal(figures.pagesPerFullListing, 40, '20 000 nodes, 500 a page');
    // Two listings of every node (the plan's, and the holdings' search for nodes a run marked) and
    // pool-selected pages of one page each (generations, retirement, and the canary's search for a node
    // registered under another name while its own has not joined yet). Before: ~800 pages, the canary
    // listing every node every 30 s.
    assert.ok(
      figures.nodeListPagesPerPoolRefresh <= 2 * figures.pagesPerFullListing + 20,
      `node-list pages: ${figures.nodeListPagesPerPoolRefresh} (one full listing: ${figures.pagesPerFullListing})`,
    );
  });
});
