/**
 * Flexible scale sets in auto mode on the simulator: a Flexible member's providerID is a plain
 * virtual machine id that does not name its scale set, so auto mode learns the pool's members from ARM
 * (the VMs' `virtualMachineScaleSet.id`), not from node names. Pool 2 of the sample is made Flexible.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult } from '../../shared/application/refresh-contracts.js';
import { assertIdentityClean, POOL1, POOL2, type ScenarioData, startHarness } from './harness.js';

function pool2Flexible(scenario: ScenarioData): void {
  const pool2 = scenario.clusters[0]?.scaleSets.find((scaleSet) => scaleSet['name'] === POOL2);
  assert.ok(pool2, 'the sample has pool 2');
  pool2['orchestrationMode'] = 'Flexible';
}

interface NodeObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { providerID?: string; unschedulable?: boolean };
}

void describe('Flexible scale sets in auto mode', { concurrency: false }, () => {
  void it('auto mode finds the Flexible pool from ARM and refreshes it from one of its members', async () => {
    const harness = await startHarness({ scenario: pool2Flexible });
    try {
      const world = harness.sim.running.world;
      const cluster = world.cluster('prod').world;
      const members = (cluster.store.list('nodes') as NodeObject[]).filter((node) =>
        /\/providers\/Microsoft\.Compute\/virtualMachines\/[^/]+$/i.test(node.spec?.providerID ?? ''),
      );
      // The premise: the members' providerIDs are plain VM ids, which name no scale set.
      assert.ok(members.length >= 3, `found ${members.length} nodes with a plain VM providerID`);
      assert.ok(members.every((node) => !(node.spec?.providerID ?? '').includes('virtualMachineScaleSets')));

      const plan = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test', dryRun: true },
        'flex-plan',
      );
      assert.equal(plan.runtimeStatus, 'Completed', JSON.stringify(plan.failure));
      const planned = (plan.output as ClusterRefreshResult).pools.find((pool) => pool.pool === POOL2);
      assert.equal(planned?.outcome, 'planned', planned?.reason);
      const verdicts = planned.plan?.verdicts ?? [];
      assert.deepEqual(
        verdicts.map((verdict) => verdict.node).sort(),
        members.map((node) => node.metadata.name).sort(),
        'every member, and only members, has a verdict',
      );

      const status = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test' },
        'flex-refresh',
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as ClusterRefreshResult;
      const outcomes = Object.fromEntries(result.pools.map((pool) => [pool.pool, pool.outcome]));
      assert.equal(outcomes[POOL2], 'refreshed');
      assert.equal(outcomes[POOL1], 'refreshed', 'the Uniform pool is refreshed as before');
      const refreshed = result.pools.find((pool) => pool.pool === POOL2);
      const donor = refreshed?.donor ?? '';
      assert.ok(
        members.some((node) => node.metadata.name === donor),
        `the donor ${donor} is a member`,
      );
      // The Flexible model now points at the new version; the donor is back and schedulable.
      const scaleSetId = refreshed?.plan?.scaleSet.id ?? '';
      const model = world.compute.getScaleSet(scaleSetId);
      assert.match(
        JSON.stringify(model),
        new RegExp(`images/[^"]*${POOL2}[^"]*`, 'i'),
        'the model points at the gallery image',
      );
      const node = cluster.store.get('nodes', undefined, donor) as NodeObject | undefined;
      assert.notEqual(node?.spec?.unschedulable, true);
      assert.ok(
        !Object.keys(node?.metadata.annotations ?? {}).some((key) => key.startsWith('vmss-prototype.io/')),
      );
      // Membership came from ARM: the resource group's VMs were listed, and the Flexible member's
      // power-off and start went to Microsoft.Compute/virtualMachines.
      const operations = harness.sim.running.log
        .snapshot()
        .entries.filter((entry) => entry.api === 'arm' && entry.status < 400)
        .map((entry) => entry.operation);
      assert.ok(operations.includes('Microsoft.Compute/virtualMachines/read'), operations.join('\n'));
      assert.ok(operations.includes('Microsoft.Compute/virtualMachines/start/action'), operations.join('\n'));
      assertIdentityClean(harness, 'the canary built from the Flexible pool’s new image');
    } finally {
      await harness.stop();
    }
  });
});
