/**
 * refreshSubscription through the local runner on the in-memory port fakes: the cluster's run plans and
 * hands its pools over, the subscription's cap counts pool runs, a cluster another trigger is
 * refreshing is skipped, one that cannot be refreshed is reported without stopping the others, and each
 * pool's first start waits its jitter.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { orchestrations } from '../../../functions/orchestrations/index.js';
import { ADMISSION_JITTER_SECONDS } from '../../../functions/orchestrations/timing.js';
import {
  clusterInstanceId,
  poolInstanceId,
  subscriptionInstanceId,
} from '../../../shared/application/orchestration-ids.js';
import type { SubscriptionRefreshResult } from '../../../shared/application/refresh-contracts.js';
import { admissionJitterSeconds } from '../../../shared/domain/admission.js';
import { CLUSTER, createFakeWorld, failureOf, START, SUBSCRIPTION } from './fake-world.js';

const POOLS = ['pool1', 'pool2', 'pool3'];

/** The most pool runs that were running at the same moment. */
async function peakPoolRuns(world: ReturnType<typeof createFakeWorld>): Promise<number> {
  const runs = await Promise.all(POOLS.map((pool) => world.runner.getStatus(poolInstanceId(CLUSTER, pool))));
  const spans = runs.map((run) => {
    assert.ok(run);
    return { start: run.createdTime.getTime(), end: run.lastUpdatedTime.getTime() };
  });
  return Math.max(...spans.map((a) => spans.filter((b) => b.start <= a.start && a.start < b.end).length));
}

function refreshSubscription(
  world: ReturnType<typeof createFakeWorld>,
  clusters: string[],
  maxPoolsPerSubscription: number,
) {
  return world.runner.startOrchestration(
    orchestrations.refreshSubscription,
    {
      subscriptionId: SUBSCRIPTION,
      clusters,
      maxPoolsPerSubscription,
      maxParallelPools: 4,
      trigger: 'timer',
    },
    subscriptionInstanceId(SUBSCRIPTION),
  );
}

void describe('refreshSubscription on the port fakes', () => {
  void it('admits one pool at a time under a cap of 1, each after its jitter', async () => {
    const world = createFakeWorld({ pools: POOLS, maxParallelPools: 4 });

    const status = await refreshSubscription(world, [CLUSTER], 1);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as SubscriptionRefreshResult;
    assert.deepEqual(result.admitted, { poolsAtOnce: 1, poolsPerCluster: 1 });
    assert.deepEqual(result.clusters, [
      { cluster: CLUSTER, outcome: 'ran', pools: { refreshed: 3 }, failed: [] },
    ]);
    assert.equal(await peakPoolRuns(world), 1);
    // The cluster's run planned and handed its pools over; the subscription's run started them.
    const clusterRun = await world.runner.getStatus(clusterInstanceId(CLUSTER));
    assert.equal(clusterRun?.runtimeStatus, 'Completed');
    assert.deepEqual(clusterRun?.output, { cluster: CLUSTER, pools: [], handedOver: POOLS });
    const runs = await Promise.all(
      POOLS.map((pool) => world.runner.getStatus(poolInstanceId(CLUSTER, pool))),
    );
    for (const run of runs) assert.equal(run?.parentInstanceId, subscriptionInstanceId(SUBSCRIPTION));
    // The first pool started when the earliest pool's jitter ended (the jitters are within the window).
    const jitters = POOLS.map((pool) =>
      admissionJitterSeconds(
        `${subscriptionInstanceId(SUBSCRIPTION)}|${CLUSTER}|${pool}`,
        ADMISSION_JITTER_SECONDS,
      ),
    );
    const firstStart = Math.min(...runs.map((run) => run?.createdTime.getTime() ?? Infinity));
    assert.equal(firstStart - START, Math.min(...jitters) * 1000);
  });

  void it('the same run under a cap of 4 refreshes the pools together', async () => {
    const world = createFakeWorld({ pools: POOLS, maxParallelPools: 4 });

    const status = await refreshSubscription(world, [CLUSTER], 4);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.equal(await peakPoolRuns(world), 3);
  });

  void it('reports a cluster that cannot be refreshed and still refreshes the others', async () => {
    const world = createFakeWorld({ pools: POOLS });

    const status = await refreshSubscription(world, ['gone', CLUSTER], 8);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as SubscriptionRefreshResult;
    const byCluster = new Map(result.clusters.map((entry) => [entry.cluster, entry]));
    assert.equal(byCluster.get(CLUSTER)?.outcome, 'ran');
    const gone = byCluster.get('gone');
    assert.ok(gone !== undefined && gone.outcome !== 'skipped', JSON.stringify(gone));
    if (gone.outcome === 'ran') assert.equal(gone.pools.failed ?? 0, 0);
    else assert.match(gone.reason, /not configured/);
  });

  void it('skips a cluster whose own run is still active', async () => {
    const world = createFakeWorld({ pools: POOLS });
    // Started in the same turn: the cluster's run is active when the subscription's jitter ends.
    const [clusterRun, status] = await Promise.all([
      world.refreshCluster(),
      refreshSubscription(world, [CLUSTER], 8),
    ]);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const [entry] = (status.output as SubscriptionRefreshResult).clusters;
    assert.equal(entry?.outcome, 'skipped', JSON.stringify(entry));
    assert.equal(clusterRun.runtimeStatus, 'Completed');
  });
});
