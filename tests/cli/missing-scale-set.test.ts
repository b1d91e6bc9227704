// `vmss-prototype status` and `plan` as an operator runs them (the built CLI in a child process) on a
// cluster where one pool's nodes name a scale set ARM does not have (deleted, or in a group the app
// does not see): the command reports that pool with the reason and goes on with the others.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { SAMPLE_SCENARIO } from '../../cli/session.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { startSimulatorSession } from '../../cli/sim-session.js';
import { connectionOf } from '../../sim/connection.js';
import { FILLER_POOL_PREFIX, growCluster } from '../bench/large-cluster.js';
import { type CliChildRun, runCliChild } from '../builders/cli-child.js';

/** growCluster's filler pools name scale sets `k8s-<pool>-12345678-vmss`; ARM has none of them. */
const MISSING_SCALE_SET = new RegExp(`k8s-${FILLER_POOL_PREFIX}\\d+-12345678-vmss`);

let work: string;
let sim: SimulatorSession;
let connectionFile: string;

function cli(args: readonly string[]): Promise<CliChildRun> {
  return runCliChild([...args, `--sim-connect=${connectionFile}`, `--state-dir=${join(work, 'runs')}`], {
    cwd: work,
  });
}

interface StatusJson {
  readonly clusters: readonly {
    readonly pools: readonly { readonly pool: string }[];
    readonly unreadable?: readonly { readonly pool: string; readonly reason: string }[];
  }[];
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-missing-vmss-'));
  sim = await startSimulatorSession({ scenarioPath: SAMPLE_SCENARIO });
  const nodes = sim.running.world.clusters.get('prod')?.world.store.list('nodes').length ?? 0;
  // One filler pool of four nodes (growCluster spreads them over its pools by index).
  growCluster(sim.running, nodes + 4);
  connectionFile = join(work, 'connection.json');
  await writeFile(connectionFile, JSON.stringify(connectionOf(sim.running)));
});

after(async () => {
  await sim.stop();
  await rm(work, { recursive: true, force: true });
});

void describe('a pool whose scale set is missing', { concurrency: false }, () => {
  void it('status reports it with the reason and every other pool, exit 0', async () => {
    // Listings of every node (a first page with no selector), counted by the simulator.
    let listings = 0;
    const stop = sim.running.log.subscribe((request) => {
      if (request.api !== 'kube' || request.operation !== 'nodes:list') return;
      const query = new URLSearchParams(request.target?.query ?? '');
      if (!query.has('labelSelector') && !query.has('continue')) listings += 1;
    });
    const run = await cli(['status', '--json']);
    stop();
    assert.equal(run.code, 0, run.stderr);
    // The plan's, which also finds the pools; the missing pool is read where the plan found it (before:
    // a listing for the pools' discovery, and one more per such pool to look for it, 40 pages each at
    // 20 000 nodes).
    assert.equal(listings, 1, 'listings of every node');
    const result = JSON.parse(run.stdout) as StatusJson;
    const cluster = result.clusters[0];
    assert.ok(cluster !== undefined);
    assert.ok(
      cluster.pools.length >= 2,
      `the readable pools: ${cluster.pools.map((p) => p.pool).join(', ')}`,
    );
    const unreadable = cluster.unreadable ?? [];
    assert.ok(unreadable.length >= 1, 'the filler pool is reported');
    for (const entry of unreadable) {
      assert.match(entry.pool, MISSING_SCALE_SET);
      assert.match(entry.reason, MISSING_SCALE_SET);
      assert.match(entry.reason, /not found/i);
    }
    assert.ok(!cluster.pools.some((p) => MISSING_SCALE_SET.test(p.pool)));
  });

  void it('the status table names it and why', async () => {
    const run = await cli(['status']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, MISSING_SCALE_SET);
    assert.match(run.stdout, /could not be read/);
  });

  void it('plan plans the other pools and reports it as not planned, with the reason, exit 0', async () => {
    const run = await cli(['plan', '--json']);
    // A report, as status: the pool is named with why (before: exit 1, as if the plan had failed).
    assert.equal(run.code, 0, `exit ${run.code}: ${run.stderr}`);
    assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
    assert.match(run.stdout, MISSING_SCALE_SET);
    assert.match(run.stdout, /"decision"|"outcome"/);
  });
});
