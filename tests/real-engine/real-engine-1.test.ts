/**
 * The real-engine tier, file 1 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a
 * cluster status, a pool refresh with its canary (in a canary scale set: the pool's first refresh) and the
 * retirement of the generation the pool started with. One engine and one world per host for the file's
 * scenarios, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRetirementResult } from '../../shared/application/retirement-contracts.js';
import { POOL2 } from '../e2e/harness.js';
import { CLUSTER, differential, refreshed, skip, useRealEngine } from './tier.js';
import { generationsOf, patchAndReboot } from './world-steps.js';

useRealEngine();

void describe('the real Durable engine (1 of 4)', { skip, concurrency: false }, () => {
  void it('reads a cluster status as the local runner does', async () => {
    await differential(
      'cluster status',
      'status-prod',
      (side) => side.start(ORCHESTRATION.clusterStatus, { cluster: CLUSTER }, 'status-prod'),
      (_side, ended) => assert.equal(ended.runtimeStatus, 'Completed'),
    );
  });

  void it('refreshes a pool: drain-and-stop, canary scale set', async () => {
    const input = { cluster: CLUSTER, pool: POOL2, trigger: 'real-engine' };
    await differential(
      'pool refresh (canary scale set)',
      'refresh-pool2',
      (side) => side.start(ORCHESTRATION.refreshPool, input, 'refresh-pool2'),
      (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        assert.equal(result.canary?.verdict, 'passed', `${side.name}: ${JSON.stringify(result.canary)}`);
        // The pool's first refresh: its canary ran in a scale set of its own, gone after the verdict
        // (docs/design.md#canary), so keep-size had no canary to keep and retired nothing.
        assert.equal(result.canary.instancesNow, 'removed', `${side.name}: the canary scale set is gone`);
        assert.equal(result.canary.keptSize, undefined, `${side.name}: nothing retired`);
        const scaleSet = side.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
        assert.equal(scaleSet?.capacity, 3, `${side.name}: the pool keeps its size`);
      },
    );
  });

  void it('retires a generation: a surge node joins, the old node is drained and deleted', async () => {
    // The nodes from before the product's first refresh of the pool.
    const first = 'unknown';
    await differential(
      'retire --generation',
      'retire-pool2',
      async (side) => {
        const generations = generationsOf(side, CLUSTER, POOL2);
        assert.ok(
          Object.values(generations).includes(first),
          `${side.name}: a node of the first generation is left: ${JSON.stringify(generations)}`,
        );
        await side.start(
          ORCHESTRATION.retirePool,
          { cluster: CLUSTER, pool: POOL2, generation: first, trigger: 'real-engine' },
          'retire-pool2',
        );
      },
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as PoolRetirementResult;
        assert.equal(result.outcome, 'retired', `${side.name}: ${result.reason}`);
        const lines = result.nodes.filter((line) => line.generation === first);
        assert.ok(lines.length > 0, `${side.name}: the generation's nodes are reported`);
        assert.ok(
          lines.every((line) => line.outcome === 'retired' && line.replacement !== undefined),
          `${side.name}: each retired with a replacement: ${JSON.stringify(lines)}`,
        );
        assert.deepEqual(
          Object.values(generationsOf(side, CLUSTER, POOL2)).filter((label) => label === first),
          [],
          `${side.name}: no node of the generation is left`,
        );
        const scaleSet = side.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
        assert.equal(scaleSet?.capacity, 3, `${side.name}: the pool keeps its size`);
      },
      {
        // kured patches and reboots the pool's first node (its drain deletes the bare pod there, which
        // would otherwise keep the node: a drain refuses a pod nothing recreates).
        setup: (side) => patchAndReboot(side, CLUSTER, [POOL2]),
      },
    );
  });
});
