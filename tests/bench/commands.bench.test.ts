/**
 * The commands bench produces its figures from the real CLI in child processes on a valid world: at
 * 1 000 nodes (the bench's figure is at 20 000), every command ends with exit 0, status reads every pool
 * (none unreadable: every filler pool has its scale set), and the simulator counted each command's
 * node-list pages. Only structure and counts are checked: no wall-clock, CPU or RSS limit (the bench
 * reports them against the goals).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PAGE_SIZE } from '../../shared/adapters/kubernetes/client-node-connection.js';
import { COMMANDS, measureCommands } from './commands.bench.js';

void describe('the CLI commands bench', { timeout: 900_000 }, () => {
  void it('runs doctor, plan, status and refresh --pool as children and counts their pages', async () => {
    const figures = await measureCommands({ nodes: 1_000 });
    assert.equal(figures.world, 'valid');
    assert.equal(figures.nodes, 1_000);
    assert.equal(figures.pagesPerFullListing, Math.ceil(1_000 / PAGE_SIZE));
    assert.deepEqual(
      figures.commands.map((run) => run.command),
      COMMANDS.map((args) => args.join(' ')),
    );
    for (const run of figures.commands) {
      assert.equal(run.exitCode, 0, `${run.command}: exit ${String(run.exitCode)} (${run.result})`);
      assert.ok(run.peakRssMiB > 0 && run.cpuS > 0, `${run.command}: RSS ${run.peakRssMiB}, CPU ${run.cpuS}`);
      assert.equal(
        run.nodeListPages,
        run.fullListingPages + run.selectedPages,
        `${run.command}: every page is a listing's or a pool's`,
      );
      const byStep = Object.values(run.pagesByStep).reduce((sum, pages) => sum + pages, 0);
      assert.equal(byStep, run.nodeListPages, `${run.command}: every page under a step`);
    }
    const [doctor, plan, status, refresh] = figures.commands;
    assert.ok(doctor !== undefined && plan !== undefined && status !== undefined && refresh !== undefined);
    // Every pool of a valid world is read: 6 of the sample, 40 filler pools.
    assert.equal(status.result, '46 pools read, 0 unreadable');
    assert.match(refresh.result, /^1 refreshed$/);
    // plan lists every node once; the refresh's preconditions and preflight list none (its plan does).
    assert.equal(plan.fullListings, 1, `plan: ${JSON.stringify(plan.pagesByStep)}`);
    assert.equal(refresh.fullListings, 1, `refresh: ${JSON.stringify(refresh.pagesByStep)}`);
    assert.equal(refresh.pagesByStep['before the run'] ?? 0, 0, 'no page before the run');
  });
});
