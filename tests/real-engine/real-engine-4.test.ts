/**
 * The real-engine tier, file 4 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a live
 * capture, with a cluster run started over the running pool; then the reaper after a dead run (on the
 * cluster's own entry). One engine and one world per host for the file's scenarios, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, ReapClusterResult } from '../../shared/application/refresh-contracts.js';
import { POOL1 } from '../e2e/harness.js';
import {
  CLUSTER,
  differential,
  LIVE_CLUSTER,
  type Observed,
  refreshed,
  skip,
  useRealEngine,
} from './tier.js';
import { ageHeldLeases, nodesOf, patchAndReboot, terminateAtCordon } from './world-steps.js';

useRealEngine();

/** The fault that keeps the dead run from writing its scale set. */
const RECORD_FAILS = 'real-engine-dead-run-scale-set-write';

void describe('the real Durable engine (4 of 4)', { skip, concurrency: false }, () => {
  void it('captures live; a cluster run started over the running pool leaves it alone', async () => {
    const poolRun = poolInstanceId(LIVE_CLUSTER, POOL1);
    const clusterRuns: Record<string, Observed['ended']> = {};
    await differential(
      'live capture, a cluster run over it',
      poolRun,
      async (side) => {
        const input = { cluster: LIVE_CLUSTER, pool: POOL1, trigger: 'real-engine' };
        await side.start(ORCHESTRATION.refreshPool, input, poolRun);
        const clusterRun = `cluster-${LIVE_CLUSTER}`;
        await side.start(
          ORCHESTRATION.refreshCluster,
          { cluster: LIVE_CLUSTER, trigger: 'real-engine' },
          clusterRun,
        );
        clusterRuns[side.name] = await side.settle(clusterRun);
      },
      (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        assert.equal(result.captureMode, 'live', `${side.name}: captured live`);
        assert.equal(result.donorOutOfServiceSeconds, 0, `${side.name}: the donor kept serving`);
        const clusterRun = clusterRuns[side.name];
        assert.equal(clusterRun?.runtimeStatus, 'Completed', clusterRun?.failure);
        const pools = (clusterRun.output as ClusterRefreshResult).pools;
        assert.equal(pools.length, 1, `${side.name}: ${JSON.stringify(pools)}`);
        assert.equal(pools[0]?.outcome, 'skipped', `${side.name}: ${JSON.stringify(pools)}`);
        assert.match(pools[0]?.reason ?? '', /already refreshing/);
      },
    );
  });

  void it('reaps a dead run: the node a terminated run held is given back', async () => {
    const donors: Record<string, string> = {};
    await differential(
      'reaper after a dead run',
      'reap-prod',
      (side) =>
        side.start(ORCHESTRATION.reapCluster, { cluster: CLUSTER, trigger: 'real-engine' }, 'reap-prod'),
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as ReapClusterResult;
        const pool = result.pools.find((entry) => entry.pool === POOL1);
        assert.equal(pool?.outcome, 'released', `${side.name}: ${JSON.stringify(result.pools)}`);
        const donor = nodesOf(side, CLUSTER, POOL1).find((node) => node.metadata.name === donors[side.name]);
        assert.ok(donor, `${side.name}: the dead run's donor is still a node`);
        assert.notEqual(donor.spec?.unschedulable, true, `${side.name}: the donor is uncordoned`);
        assert.deepEqual(
          Object.keys(donor.metadata.annotations ?? {}).filter((key) => key.startsWith('vmss-prototype')),
          [],
          `${side.name}: none of our annotations left`,
        );
      },
      {
        // A refresh dies once it cordoned its donor (terminated, as an operator or a lost host ends it)
        // and its lease is left to expire: what it held is the reaper's to give back.
        setup: async (side) => {
          await patchAndReboot(side, CLUSTER, [POOL1]);
          // The scale set cannot be written until the dead run is over (ARM answers 503): the engine acts
          // on the terminate a moment after the cordon, and a run that got on to record its donor's stop
          // in the meantime (its drain has nothing to evict on a node kured just drained) would leave the
          // reaper one more thing to give back than the runner's, terminated at the cordon itself.
          const faults = side.sim.running.faults;
          faults.add({
            id: RECORD_FAILS,
            api: 'arm',
            operation: 'Microsoft.Compute/virtualMachineScaleSets/write',
            status: 503,
            code: 'ServiceUnavailable',
            message: 'The service is temporarily unavailable.',
          });
          donors[side.name] = await terminateAtCordon(
            side,
            { cluster: CLUSTER, pool: POOL1, instanceId: 'dead-pool1' },
            () =>
              side.start(
                ORCHESTRATION.refreshPool,
                { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' },
                'dead-pool1',
              ),
          );
          await side.quiet();
          faults.remove(RECORD_FAILS);
          assert.equal(ageHeldLeases(side, CLUSTER).length, 1, `${side.name}: the dead run's lease`);
        },
      },
    );
  });
});
