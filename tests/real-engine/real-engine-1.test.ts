/**
 * The real-engine tier, file 1 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a
 * cluster status, a pool refresh with its canary (in a canary scale set: the pool's first refresh), the
 * retirement of the generation the pool started with, and the engine's own patterns (#574, a sub-orchestration over a running id). One engine and one
 * world per host for the file's scenarios, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createDurableRunner, createMemoryStore, createSystemClock } from '../../cli/runner/index.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRetirementResult } from '../../shared/application/retirement-contracts.js';
import { POOL2 } from '../e2e/harness.js';
import {
  overRunning,
  parentOverRunning,
  SEEDED_574,
  SEEDED_ACTIVITY,
  SEEDED_CHILD,
  SEEDED_PARENT,
  seeded574,
  seededActivity,
  waitingChild,
} from './seeded.js';
import { CLUSTER, differential, engineOf, refreshed, skip, theEngine, useRealEngine } from './tier.js';
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

  // The canary of the tier: the #574 pattern must go wrong here as it does on Azure. The engine schedules
  // the re-sent activity again under a new id, and from there completions reach the wrong SDK tasks: the
  // run ends without the second activity's result. A correct host would return 'second'.

  void it('gets the seeded #574 pattern wrong, as the Functions host does', async () => {
    const started = Date.now();
    await theEngine().client.startNew(SEEDED_574, { instanceId: 'seeded-574' });
    const status = await engineOf().settle('seeded-574');
    const rows = await engineOf().history('seeded-574');
    console.log(
      `real-engine: seeded #574 (${((Date.now() - started) / 1000).toFixed(1)} s): ` +
        `${status.runtimeStatus} ${JSON.stringify(status.output ?? status.failure)}; history ${rows.join(' ')}`,
    );
    assert.equal(
      rows.filter((type) => type === 'TaskScheduled').length,
      3,
      'the pending activity scheduled twice, then the second one',
    );
    assert.notDeepEqual(
      { status: status.runtimeStatus, output: status.output },
      { status: 'Completed', output: 'second' },
      '#574: the re-yielded task must break the run on the engine',
    );
    // The local runner numbers actions as the extension does (cli/runner/extension-shim.ts), so the pattern
    // goes wrong there the same way; the runner before c1fd712 took ids from the SDK's open tasks and
    // returned 'second', hiding #574 until the real host ran it.
    const runner = createDurableRunner({
      orchestrators: { [SEEDED_574]: seeded574 },
      activities: { [SEEDED_ACTIVITY]: seededActivity },
      store: createMemoryStore(),
      clock: createSystemClock(),
    });
    const local = await runner.startOrchestration(SEEDED_574, null, 'seeded-574');
    console.log(
      `real-engine: seeded #574 on the local runner: ${local.runtimeStatus} ${JSON.stringify(local.output)}`,
    );
    assert.deepEqual(
      { status: local.runtimeStatus, output: local.output ?? null },
      { status: status.runtimeStatus, output: status.output ?? null },
      '#574: the local runner must go wrong as the engine does',
    );
  });
  // What the engine does with a sub-orchestration started under a running instance's id, which the local
  // runner models as a second execution over it (cli/runner/children.ts) and the product never relies on
  // (functions/orchestrations/pool-runs.ts looks at the id first): the two must agree.

  void it('starts a sub-orchestration over a running id as the local runner models it', async () => {
    const runner = createDurableRunner({
      orchestrators: { [SEEDED_PARENT]: parentOverRunning, [SEEDED_CHILD]: waitingChild },
      activities: {},
      store: createMemoryStore(),
      clock: createSystemClock(),
    });
    const engineSeen = await overRunning({
      start: async (name, input, instanceId) => {
        await theEngine().client.startNew(name, { instanceId, input });
      },
      status: async (instanceId) => {
        const status = await theEngine().client.getStatus(instanceId);
        return { runtimeStatus: String(status.runtimeStatus), output: status.output ?? null };
      },
      raise: (instanceId, data) => theEngine().client.raiseEvent(instanceId, 'go', data),
    });
    const runnerSeen = await overRunning({
      start: async (name, input, instanceId) => {
        void runner.startOrchestration(name, input, instanceId);
        await new Promise((done) => setImmediate(done));
      },
      status: async (instanceId) => {
        const status = await runner.getStatus(instanceId);
        return { runtimeStatus: String(status?.runtimeStatus), output: status?.output ?? null };
      },
      raise: async (instanceId, data) => {
        await runner.raiseEvent(instanceId, 'go', data);
      },
    });
    console.log(
      `real-engine: a sub-orchestration over a running id\n  engine: ${JSON.stringify(engineSeen)}\n` +
        `  runner: ${JSON.stringify(runnerSeen)}`,
    );
    assert.deepEqual(runnerSeen, engineSeen, 'the runner models the engine');
  });
});
