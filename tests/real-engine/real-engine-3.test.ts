/**
 * The real-engine tier, file 3 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a
 * cluster run over its two stale pools. One engine and one world per host.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult } from '../../shared/application/refresh-contracts.js';
import { POOL1, POOL2 } from '../e2e/harness.js';
import { CLUSTER, differential, skip, useRealEngine } from './tier.js';
import { patchAndReboot } from './world-steps.js';

useRealEngine();

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
});
