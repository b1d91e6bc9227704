/**
 * The pool status's convergence, read by the status orchestration on the port fakes: the
 * lease's readings and retired-in-window record, the nodes now, the retirement settings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { orchestrations } from '../../../functions/orchestrations/index.js';
import { leaseRefOf } from '../../../shared/application/pool-holdings.js';
import type { ClusterStatusRead, PoolStatus } from '../../../shared/application/pool-status.js';
import type { PoolRefreshResult } from '../../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION } from '../../../shared/domain/cluster-node.js';
import { LEASE_ANNOTATIONS } from '../../../shared/domain/ownership.js';
import { aNode, DEFAULT_POOL } from '../../builders/node.js';
import {
  CLUSTER,
  createFakeWorld,
  failureOf,
  type FakeWorld,
  nodeName,
  poolRef,
  RUN_SETTINGS,
} from '../../functions/orchestrations/fake-world.js';

const POOL = 'pool1';
const LEASE = leaseRefOf(poolRef(POOL), 'vmss-prototype');

async function statusOf(world: FakeWorld): Promise<PoolStatus> {
  const status = await world.runner.startOrchestration(orchestrations.clusterStatus, { cluster: CLUSTER });
  assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
  const pool = (status.output as ClusterStatusRead).pools.find((candidate) => candidate.pool === POOL);
  assert.ok(pool);
  return pool;
}

void describe('readPoolStatus: convergence', () => {
  void it('before any run: no readings, the nodes not labelled yet, retirement off', async () => {
    const world = createFakeWorld();

    const { convergence } = await statusOf(world);

    assert.deepEqual(convergence, {
      samples: [],
      now: { at: new Date(world.clock.now()).toISOString(), counts: { unlabelled: 3 } },
      retirement: {
        enabled: false,
        budget: { nodes: 1 },
        budgetAllowed: 1,
        usedInWindow: 0,
        windowed: false,
      },
    });
  });

  void it("after a refresh: the run's reading, the labelled nodes, the version new nodes get", async () => {
    const world = createFakeWorld();
    const refreshed = await world.refreshPool(POOL);
    const result = refreshed.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed', failureOf(refreshed));

    const { convergence } = await statusOf(world);

    assert.equal(convergence.newest, result.version?.versionName);
    assert.equal(convergence.samples.length, 1);
    assert.deepEqual(convergence.samples[0]?.counts, { unknown: 3 });
    assert.deepEqual(convergence.now.counts, { unknown: 3 });
  });

  void it("in an open window: the lease's count for it, the budget for the pool's capacity (3)", async () => {
    // The virtual clock starts at 2026-11-22T13:00Z: the daily window opened at 12:00 and closes at 14:00.
    const world = createFakeWorld({
      run: {
        retirement: {
          ...RUN_SETTINGS.retirement,
          enabled: true,
          policy: {
            keepGenerations: 1,
            budget: { percent: 50 },
            windows: [{ schedule: '0 0 12 * * *', durationSeconds: 2 * 3600 }],
            surge: true,
          },
        },
      },
    });
    const samples = [{ at: '2026-11-22T12:10:00.000Z', counts: { '2026.1120.3': 2, unknown: 1 } }];
    world.kube.leases.put({
      ...LEASE,
      durationSeconds: 900,
      annotations: {
        [LEASE_ANNOTATIONS.retiredInWindow]: '2026-11-22T12:00:00.000Z 1',
        [LEASE_ANNOTATIONS.generationSamples]: JSON.stringify(samples),
      },
    });

    const { convergence } = await statusOf(world);

    assert.deepEqual(convergence.samples, samples);
    assert.deepEqual(convergence.retirement, {
      enabled: true,
      budget: { percent: 50 },
      budgetAllowed: 2,
      usedInWindow: 1,
      windowed: true,
      windowOpen: { openedAt: '2026-11-22T12:00:00.000Z', closesAt: '2026-11-22T14:00:00.000Z' },
      nextWindowAt: '2026-11-23T12:00:00.000Z',
    });
  });

  void it('a garbled record reads as no readings', async () => {
    const world = createFakeWorld();
    world.kube.leases.put({
      ...LEASE,
      durationSeconds: 900,
      annotations: { [LEASE_ANNOTATIONS.generationSamples]: '{not json' },
    });

    const { convergence } = await statusOf(world);

    assert.deepEqual(convergence.samples, []);
  });
});

void describe('readPoolStatus: what it lists', () => {
  void it("reads the pool's nodes and its runs' marked nodes by the pool label, not the whole cluster", async () => {
    const world = createFakeWorld({ nodeLabels: { agentpool: POOL }, cluster: { nodePageSize: 2 } });
    // Nodes of another pool (no scale set of this cluster's): listed only by a scan of every node.
    for (let instanceId = 0; instanceId < 10; instanceId++) {
      const node = aNode({ pool: { ...DEFAULT_POOL, name: 'k8s-other' }, instanceId });
      world.kube.nodes.add({ ...node, labels: { ...node.labels, agentpool: 'other' } });
    }
    // Instances named as their nodes (ARM's computerName): the pool's label is read off one of them.
    for (const n of [0, 1, 2])
      world.compute.addInstance(poolRef(POOL), String(n), { computerName: nodeName(POOL, n) });
    const marked = nodeName(POOL, 1);
    await world.kube.nodes.patchAnnotations(marked, { [CAPTURE_RUN_ANNOTATION]: 'run-1' });

    const status = await statusOf(world);

    assert.deepEqual(
      status.ownership?.heldNodes.map((node) => [node.node, node.runId]),
      [[marked, 'run-1']],
      'the marked node found among the nodes carrying the pool label',
    );
    assert.equal(status.nodes.length, 3);
    // 13 nodes, 2 a page: 7 pages of the whole list, the planning's one listing (the status reads none).
    const wholeListPages = world.kube.callsTo('nodes.scan').filter((call) => call.args.length === 1).length;
    assert.equal(wholeListPages, 7, `pages of the whole list: ${wholeListPages}`);
  });
});
