/**
 * The real-engine tier, file 3 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a
 * cluster run over its two stale pools, and the reaper after a dead run. One engine and one world per
 * host for the file's scenarios, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, ReapClusterResult } from '../../shared/application/refresh-contracts.js';
import { POOL1, POOL2 } from '../e2e/harness.js';
import { CLUSTER, differential, skip, useRealEngine } from './tier.js';
import { ageHeldLeases, nodesOf, patchAndReboot, terminateAtCordon } from './world-steps.js';

useRealEngine();

/** The fault that keeps the dead run from writing its scale set. */
const RECORD_FAILS = 'real-engine-dead-run-scale-set-write';

void describe('the real Durable engine (3 of 4)', { skip, concurrency: false }, () => {
  void it('refreshes a cluster: its two stale pools together', async () => {
    const instanceId = 'cluster-prod';
    await differential(
      'cluster run of two pools',
      instanceId,
      async (side) => {
        // kured patches and reboots a node of each pool: both pools' newest patch is newer than their
        // image again.
        await patchAndReboot(side, CLUSTER, [POOL1, POOL2]);
        await side.start(
          ORCHESTRATION.refreshCluster,
          { cluster: CLUSTER, trigger: 'real-engine' },
          instanceId,
        );
      },
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as ClusterRefreshResult;
        const outcomes = Object.fromEntries(result.pools.map((pool) => [pool.pool, pool.outcome]));
        assert.equal(outcomes[POOL1], 'refreshed', `${side.name}: ${JSON.stringify(outcomes)}`);
        assert.equal(outcomes[POOL2], 'refreshed', `${side.name}: ${JSON.stringify(outcomes)}`);
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
