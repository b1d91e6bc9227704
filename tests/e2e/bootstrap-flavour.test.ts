/**
 * The bootstrap flavour on the simulator: pools[].bootstrapFlavour when configured, otherwise detected
 * from the donor's labels and annotations (the simulator marks nodes as each distribution does); a
 * kubeadm pool is planned with its copy scrubbed and its bootstrap kept (tests/e2e/kubeadm.test.ts runs it);
 * a k3s pool is refreshed and a clone of its image joins as itself, the identity model clean.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { expectedShell } from '../sim/world/bwrap-gate.js';
import {
  assertIdentityClean,
  type Harness,
  type HarnessOptions,
  POOL2,
  scaleOutOne,
  type ScenarioData,
  startHarness,
} from './harness.js';

function pool2Flavour(flavour: string): (scenario: ScenarioData) => void {
  return (scenario) => {
    const pool2 = scenario.clusters[0]?.scaleSets.find((scaleSet) => scaleSet['name'] === POOL2);
    assert.ok(pool2);
    pool2['bootstrapFlavour'] = flavour;
  };
}

async function planPool2(
  options: HarnessOptions,
  pool = POOL2,
): Promise<{ harness: Harness; result: PoolRefreshResult }> {
  const harness = await startHarness(options);
  try {
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool, trigger: 'test', dryRun: true },
      `flavour-plan-${pool}`,
    );
    assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
    assertIdentityClean(harness, 'after a plan');
    return { harness, result: status.output as PoolRefreshResult };
  } catch (error) {
    await harness.stop();
    throw error;
  }
}

void describe('bootstrap flavour on the simulator', { concurrency: false }, () => {
  void it('detects k3s from the donor and plans its de-identification', async () => {
    const { harness, result } = await planPool2({ scenario: pool2Flavour('k3s') });
    try {
      assert.equal(result.outcome, 'planned', result.reason);
      const decision = result.plan?.decision;
      assert.equal(decision?.kind, 'refresh');
      assert.equal(decision.kind === 'refresh' ? decision.flavour : undefined, 'k3s');
    } finally {
      await harness.stop();
    }
  });

  void it("detects kubeadm from the donor and plans a copy's scrub and a kept bootstrap; nothing changed", async () => {
    const { harness, result } = await planPool2({ scenario: pool2Flavour('kubeadm') });
    try {
      assert.equal(result.outcome, 'planned', result.reason);
      const decision = result.plan?.decision;
      assert.equal(decision?.kind === 'refresh' ? decision.flavour : undefined, 'kubeadm');
      assert.match(
        decision?.kind === 'refresh' ? (decision.flavourEvidence ?? '') : '',
        /annotation (cluster\.x-k8s\.io|kubeadm\.alpha\.kubernetes\.io)\//,
      );
      assert.equal(result.plan?.capture?.scrubbed, 'copy');
      assert.equal(result.plan.capture.newNodes, 'run-pool-bootstrap');
      const log = harness.sim.running.log.snapshot().entries;
      assert.ok(!log.some((entry) => entry.operation === 'nodes:patch'));
    } finally {
      await harness.stop();
    }
  });

  void it('a k3s pool is refreshed (its prep pod in the real shell) and a clone of its image joins as itself', async (t) => {
    const harness = await startHarness({ scenario: pool2Flavour('k3s') });
    try {
      const status = await harness.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test' },
        'flavour-k3s',
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed', result.reason);
      const prep = harness.sim.running.world.prepRecords().find((record) => record.via === 'pod');
      assert.equal(prep?.shell, expectedShell(t), prep?.error);
      const clone = scaleOutOne(harness, POOL2);
      assert.ok(clone.joined, `the clone ${clone.nodeName} joined as itself`);
      assertIdentityClean(harness, 'a clone of the k3s image');
    } finally {
      await harness.stop();
    }
  });

  void it('a configured pools[].bootstrapFlavour wins over detection: kubeadm on an aks-engine pool', async () => {
    const { harness, result } = await planPool2(
      {
        settings: (cluster) => {
          cluster['pools'] = [{ name: 'agents2', scaleSet: POOL2, bootstrapFlavour: 'kubeadm' }];
        },
      },
      'agents2',
    );
    try {
      assert.equal(result.outcome, 'planned', result.reason);
      const decision = result.plan?.decision;
      assert.equal(decision?.kind === 'refresh' ? decision.flavour : undefined, 'kubeadm');
      assert.equal(result.plan?.capture?.newNodes, 'run-pool-bootstrap');
    } finally {
      await harness.stop();
    }
  });

  void it('a configured flavour is used for the capture (k3s configured on an aks-engine-marked pool)', async () => {
    const { harness, result } = await planPool2(
      {
        settings: (cluster) => {
          cluster['pools'] = [{ name: 'agents2', scaleSet: POOL2, bootstrapFlavour: 'k3s' }];
        },
      },
      'agents2',
    );
    try {
      assert.equal(result.outcome, 'planned', result.reason);
      const decision = result.plan?.decision;
      assert.equal(decision?.kind === 'refresh' ? decision.flavour : undefined, 'k3s');
    } finally {
      await harness.stop();
    }
  });
});
