/**
 * refreshCluster (and clusterStatus) through the local runner on the in-memory port fakes: plans of all
 * pools in parallel, a window of pool refreshes, one pool's failure reported on its own, a pool another
 * trigger is refreshing reported as skipped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CLUSTER_WINDOW_CHECK_SECONDS } from '../../../functions/orchestrations/timing.js';
import { ORCHESTRATION, poolInstanceId } from '../../../shared/application/orchestration-ids.js';
import type { ClusterStatusRead } from '../../../shared/application/pool-status.js';
import type { ClusterRefreshResult } from '../../../shared/application/refresh-contracts.js';
import { TerminalError, TransientError } from '../../../shared/domain/errors.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { givenBack, holdLease, leaveDonor } from './dead-run.js';
import {
  appPod,
  armError,
  CLUSTER,
  createFakeWorld,
  failureOf,
  nodeName,
  RESOURCE_GROUP,
  START,
} from './fake-world.js';

const POOLS = ['pool1', 'pool2', 'pool3'];

function forPool(pool: string): (args: readonly unknown[]) => boolean {
  return (args) => (args[0] as ScaleSetRef | undefined)?.name === pool;
}

function outcomes(result: ClusterRefreshResult): [string, string][] {
  return result.pools.map((pool) => [pool.pool, pool.outcome]);
}

void describe('refreshCluster on the port fakes', () => {
  void it('refreshes every eligible pool and explains the others, in pool order', async () => {
    const world = createFakeWorld({ pools: POOLS, scaleSets: { pool2: { upgradePolicyMode: 'Rolling' } } });

    const status = await world.refreshCluster();

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as ClusterRefreshResult;
    assert.deepEqual(outcomes(result), [
      ['pool1', 'refreshed'],
      ['pool2', 'refused'],
      ['pool3', 'refreshed'],
    ]);
    for (const pool of ['pool1', 'pool3']) {
      assert.equal((await world.runner.getStatus(poolInstanceId(CLUSTER, pool)))?.runtimeStatus, 'Completed');
    }
  });

  void it('one survey of the pools it does not refresh; a give-back only where something is left', async () => {
    const read: string[] = [];
    const surveyed: unknown[] = [];
    const world = createFakeWorld({
      pools: POOLS,
      scaleSets: { pool1: { upgradePolicyMode: 'Rolling' }, pool2: { upgradePolicyMode: 'Rolling' } },
      wrapActivity: (name, activity) => (input) => {
        if (name === 'readPoolHoldings') read.push((input as { pool: string }).pool);
        if (name === 'surveyClusterHoldings') surveyed.push((input as { pools?: unknown }).pools);
        return activity(input);
      },
    });
    await leaveDonor(world, 'pool1', 'run-dead');
    holdLease(world, 'pool1', 'cli/laptop/run-dead', 20);

    const status = await world.refreshCluster();

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as ClusterRefreshResult;
    assert.deepEqual(outcomes(result), [
      ['pool1', 'refused'],
      ['pool2', 'refused'],
      ['pool3', 'refreshed'],
    ]);
    assert.deepEqual(
      surveyed.map((pools) => (pools as { name: string }[]).map((pool) => pool.name)),
      [['pool1', 'pool2']],
      'one survey, of the pools not refreshed',
    );
    assert.ok(givenBack(world, 'pool1'));
    assert.ok((result.pools[0]?.gaveBack ?? []).length > 0, 'reported with the pool');
    assert.equal(read.includes('pool2'), false, 'pool2, with nothing left, is not read again');
    assert.ok(read.includes('pool1'));
  });

  void it('a window of two: two pools at once, the third started within a check of the first end', async () => {
    const world = createFakeWorld({ pools: POOLS, maxParallelPools: 2 });

    const status = await world.refreshCluster();

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.deepEqual(outcomes(status.output as ClusterRefreshResult), [
      ['pool1', 'refreshed'],
      ['pool2', 'refreshed'],
      ['pool3', 'refreshed'],
    ]);
    const runs = await Promise.all(
      POOLS.map(async (pool) => {
        const run = await world.runner.getStatus(poolInstanceId(CLUSTER, pool));
        assert.ok(run);
        return { started: run.createdTime.getTime(), ended: run.lastUpdatedTime.getTime() };
      }),
    );
    const [first, second, third] = runs;
    assert.ok(first && second && third);
    // Sent together: the second started before the first ended.
    assert.ok(second.started < first.ended, 'pool1 and pool2 ran at the same time');
    const firstEnd = Math.min(first.ended, second.ended);
    assert.ok(third.started >= firstEnd, 'never three at once');
    assert.ok(
      third.started <= firstEnd + CLUSTER_WINDOW_CHECK_SECONDS * 1000,
      'a freed slot is used at the next check',
    );
  });

  void it('a window as wide as the pools refreshes them all at once', async () => {
    const world = createFakeWorld({ pools: POOLS, maxParallelPools: 3 });

    const status = await world.refreshCluster();

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const runs = await Promise.all(
      POOLS.map((pool) => world.runner.getStatus(poolInstanceId(CLUSTER, pool))),
    );
    const lastStart = Math.max(...runs.map((run) => run?.createdTime.getTime() ?? Infinity));
    const firstEnd = Math.min(...runs.map((run) => run?.lastUpdatedTime.getTime() ?? -Infinity));
    assert.ok(lastStart < firstEnd, 'every pool started before any ended');
  });

  void it('a dry run plans every pool and starts nothing', async () => {
    const world = createFakeWorld({ pools: POOLS });
    const status = await world.refreshCluster({ dryRun: true });
    assert.deepEqual(outcomes(status.output as ClusterRefreshResult), [
      ['pool1', 'planned'],
      ['pool2', 'planned'],
      ['pool3', 'planned'],
    ]);
    assert.equal(world.kube.callsTo('nodes.patchAnnotations').length, 0);
  });

  void it('a pool whose plan fails terminally is reported at once; the others are refreshed', async () => {
    const world = createFakeWorld({ pools: POOLS });
    world.compute.nextErrorWhen(
      'scaleSets.get',
      forPool('pool2'),
      armError(`reading scale set ${RESOURCE_GROUP}/pool2`, 403, {
        code: 'AuthorizationFailed',
        message:
          "The client 'x' with object id 'x' does not have authorization to perform action " +
          "'Microsoft.Compute/virtualMachineScaleSets/read' over scope '/subscriptions/s/resourceGroups/rg' or the scope is invalid.",
      }),
    );

    const status = await world.refreshCluster();

    const result = status.output as ClusterRefreshResult;
    assert.deepEqual(outcomes(result), [
      ['pool1', 'refreshed'],
      ['pool2', 'failed'],
      ['pool3', 'refreshed'],
    ]);
    const failed = result.pools[1];
    assert.equal(failed?.failure?.step, 'planning');
    assert.match(
      failed?.failure?.message ?? '',
      /^reading scale set rg-k8s-prod\/pool2: the identity lacks permission Microsoft\.Compute\/virtualMachineScaleSets\/read/,
    );
    assert.equal(
      world.compute.callsTo('scaleSets.get').filter((call) => forPool('pool2')(call.args)).length,
      1,
      'the failed plan was attempted once',
    );
  });

  void it('a plan that fails transiently is retried on its own', async () => {
    const world = createFakeWorld({ pools: POOLS });
    world.compute.nextErrorWhen(
      'scaleSets.get',
      forPool('pool3'),
      new TransientError('ArmThrottled', 'reading scale set: throttled', { retryAfterMs: 30_000 }),
    );
    const status = await world.refreshCluster();
    assert.deepEqual(outcomes(status.output as ClusterRefreshResult), [
      ['pool1', 'refreshed'],
      ['pool2', 'refreshed'],
      ['pool3', 'refreshed'],
    ]);
    const pool3 = world.compute.callsTo('scaleSets.get').filter((call) => forPool('pool3')(call.args));
    assert.ok((pool3[1]?.at ?? 0) - (pool3[0]?.at ?? 0) >= 30_000, 'waited what ARM asked');
  });

  void it('lists the nodes once for all its pools, page by page', async () => {
    const pools = ['pool1', 'pool2', 'pool3', 'pool4', 'pool5'];
    // 5 pools × 3 nodes, 4 nodes a page: 4 list requests for the whole run, not one listing per pool.
    const world = createFakeWorld({ pools, cluster: { nodePageSize: 4 } });
    const status = await world.refreshCluster({ dryRun: true });
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.deepEqual(
      outcomes(status.output as ClusterRefreshResult).map(([, outcome]) => outcome),
      pools.map(() => 'planned'),
    );
    assert.equal(world.kube.callsTo('nodes.scan').length, Math.ceil((pools.length * 3) / 4));
    assert.equal(world.kube.callsTo('nodes.list').length, 0);
    // Pools that need the same access share one permission check.
    const perPool = createFakeWorld({ pools: ['pool1'] });
    await perPool.refreshCluster({ dryRun: true });
    assert.equal(
      world.kube.callsTo('server.reviewAccess').length,
      perPool.kube.callsTo('server.reviewAccess').length,
    );
  });

  void it('when planning the cluster keeps failing, plans pool by pool and refreshes the others', async () => {
    const world = createFakeWorld({ pools: POOLS });
    const throttled = () => new TransientError('ArmThrottled', 'reading scale set: throttled');
    // pool2's scale set read fails all 6 attempts of the cluster plan and 2 of its own plan, then recovers.
    world.compute.nextErrorWhen('scaleSets.get', forPool('pool2'), ...Array.from({ length: 8 }, throttled));
    const status = await world.refreshCluster({ dryRun: true });
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = outcomes(status.output as ClusterRefreshResult);
    assert.deepEqual(result, [
      ['pool1', 'planned'],
      ['pool2', 'planned'],
      ['pool3', 'planned'],
    ]);
    // The cluster plan failed before listing; then each pool's own plan listed the nodes.
    assert.equal(world.kube.callsTo('nodes.scan').length, POOLS.length);
    assert.equal(world.compute.pendingErrors('scaleSets.get'), 0);
  });

  void it("a pool's failed refresh is reported with its step; the others are refreshed", async () => {
    const world = createFakeWorld({ pools: POOLS });
    world.compute.nextErrorWhen(
      'snapshots.request',
      (args) => (args[0] as { name?: string }).name?.includes('pool1') === true,
      new TerminalError('OperationNotAllowed', 'requesting snapshot: quota exceeded'),
    );

    const status = await world.refreshCluster();

    const result = status.output as ClusterRefreshResult;
    assert.deepEqual(outcomes(result), [
      ['pool1', 'failed'],
      ['pool2', 'refreshed'],
      ['pool3', 'refreshed'],
    ]);
    assert.equal(result.pools[0]?.failure?.step, 'snapshotting');
    assert.match(
      result.pools[0]?.failure?.message ?? '',
      /^requesting snapshot: quota exceeded — the node was started and given back/,
    );
  });

  void it('a pool another trigger is refreshing is reported as skipped, not failed', async () => {
    const world = createFakeWorld({ pools: ['pool1', 'pool2'] });
    world.kube.pods.add(
      nodeName('pool1', 0),
      appPod('db'),
      'Cannot evict pod as it would violate the pod disruption budget.',
    );
    world.runnerOptions.timerHorizonMs = START + 60_000;
    const held = await world.refreshPool('pool1');
    assert.equal(held.runtimeStatus, 'Running');

    const status = await world.refreshCluster();
    world.runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
    const done = await world.runner.resume(status.instanceId);

    const result = done.output as ClusterRefreshResult;
    assert.deepEqual(outcomes(result), [
      ['pool1', 'skipped'],
      ['pool2', 'refreshed'],
    ]);
    assert.match(result.pools[0]?.reason ?? '', /^already refreshing \(instance refresh:prod:pool1/);
  });
});

void describe('clusterStatus on the port fakes', () => {
  void it("reads every pool's status", async () => {
    const world = createFakeWorld({ pools: POOLS });
    const status = await world.runner.startOrchestration(ORCHESTRATION.clusterStatus, { cluster: CLUSTER });
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.deepEqual(
      (status.output as ClusterStatusRead).pools.map((pool) => [pool.pool, pool.pointsAtOurImage]),
      POOLS.map((pool) => [pool, false]),
    );
  });

  void it('names the pool whose read failed terminally, with why, and reports the others', async () => {
    const world = createFakeWorld({ pools: POOLS });
    // Refused to the planning and to the status read alike (a role that does not reach the group).
    const forbidden = new TerminalError('Forbidden', 'reading scale set pool2: forbidden');
    world.compute.nextErrorWhen('scaleSets.get', forPool('pool2'), forbidden, forbidden);
    const status = await world.runner.startOrchestration(ORCHESTRATION.clusterStatus, { cluster: CLUSTER });
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const read = status.output as ClusterStatusRead;
    assert.deepEqual(read.unreadable, [
      { pool: 'pool2', reason: 'reading-status: reading scale set pool2: forbidden' },
    ]);
    assert.deepEqual(
      read.pools.map((pool) => pool.pool),
      POOLS.filter((pool) => pool !== 'pool2'),
    );
  });
});
