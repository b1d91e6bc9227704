/**
 * The real-engine tier, file 4 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a live
 * capture, with a cluster run started over the running pool. One engine and one world per host.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult } from '../../shared/application/refresh-contracts.js';
import { POOL1 } from '../e2e/harness.js';
import { differential, LIVE_CLUSTER, type Observed, refreshed, skip, useRealEngine } from './tier.js';

useRealEngine();

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
});
