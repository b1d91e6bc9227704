/**
 * CAPZ MachinePool pools end to end on the three Cluster APIs an operator may run (sim/README.md
 * "Versions of MachinePool and Machine"): a current one (v1beta1 and v1beta2, v1beta1 deprecated), one
 * that no longer serves v1beta1, and an older one serving v1beta1 only. The product discovers the version
 * once per connection and uses v1beta2 where it is served (docs/capz.md): no request at the deprecated
 * version, so no deprecation warning, and a live refresh with a canary pool (read, clone, list and delete
 * MachinePools) works on all three.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { Harness } from './harness.js';
import { CAPZ_MANAGEMENT, nodeOf, POOL2, startHarness, withCapzPool } from './harness.js';

type Version = 'v1beta1' | 'v1beta2';

function startCapz(servedVersions: readonly Version[]): Promise<Harness> {
  return startHarness({
    clock: 'manual',
    scenario: (scenario) => {
      withCapzPool(POOL2)(scenario);
      const mgmt = scenario.clusters.find((cluster) => cluster['name'] === CAPZ_MANAGEMENT.cluster);
      assert.ok(mgmt, 'withCapzPool adds the management cluster');
      mgmt['clusterApi'] = { ...(mgmt['clusterApi'] as object), servedVersions: [...servedVersions] };
    },
    settings: (cluster) => {
      cluster.capture = { ...cluster.capture, mode: 'live' };
      cluster['promotion'] = { canary: { soak: '2m', deadline: '20m' } };
      const capz = cluster['capz'] as Record<string, unknown> | undefined;
      assert.ok(capz, 'the simulator gives a CAPZ cluster its capz settings');
      capz['rollout'] = 'allow';
    },
  });
}

/** A live refresh with a canary pool, and the cluster.x-k8s.io versions the product's requests named. */
async function refreshOn(servedVersions: readonly Version[]): Promise<{
  result: PoolRefreshResult;
  versions: string[];
}> {
  const harness = await startCapz(servedVersions);
  const versions = new Set<string>();
  const stop = harness.sim.running.log.subscribe((request) => {
    const match = /^\/apis\/cluster\.x-k8s\.io\/(v[^/]+)\//.exec(request.target?.path ?? '');
    if (request.api === 'kube' && match?.[1] !== undefined) versions.add(match[1]);
  });
  try {
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL2, trigger: 'test', node: nodeOf(POOL2, 1) },
      `capz-${servedVersions.join('-')}`,
    );
    assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
    return { result: status.output as PoolRefreshResult, versions: [...versions].sort() };
  } finally {
    stop();
    await harness.stop();
  }
}

void describe('CAPZ MachinePools at the Cluster API versions served', () => {
  void it('a current Cluster API: only v1beta2 is asked for, no deprecation warning', async () => {
    const { result, versions } = await refreshOn(['v1beta1', 'v1beta2']);
    assert.equal(result.outcome, 'refreshed', result.reason);
    assert.equal(result.canary?.verdict, 'passed', result.canary?.reason);
    assert.deepEqual(versions, ['v1beta2']);
  });

  void it('a Cluster API that no longer serves v1beta1: the refresh and its canary work', async () => {
    const { result, versions } = await refreshOn(['v1beta2']);
    assert.equal(result.outcome, 'refreshed', result.reason);
    assert.equal(result.canary?.verdict, 'passed', result.canary?.reason);
    assert.deepEqual(versions, ['v1beta2']);
  });

  void it('an older Cluster API serving v1beta1 only: the product uses v1beta1', async () => {
    const { result, versions } = await refreshOn(['v1beta1']);
    assert.equal(result.outcome, 'refreshed', result.reason);
    assert.equal(result.canary?.verdict, 'passed', result.canary?.reason);
    assert.deepEqual(versions, ['v1beta1']);
  });
});
