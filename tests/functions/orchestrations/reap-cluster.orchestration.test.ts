/**
 * reapCluster, the reaper timer's run over a cluster's pools, through the local runner on the
 * port fakes: a dead run's node given back, a live run left alone, an idle pool only read; one survey
 * reads the listings pools share once, and only pools with leftovers get a give-back; one pool failing
 * (or losing its lease mid-give-back) does not stop the next.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION, reapInstanceId } from '../../../shared/application/orchestration-ids.js';
import type { ReapClusterResult } from '../../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION } from '../../../shared/domain/cluster-node.js';
import { TransientError } from '../../../shared/domain/errors.js';
import { leaseState } from '../../../shared/domain/ownership.js';
import { givenBack, holdLease, leaseOf, leaveDonor, MINUTE } from './dead-run.js';
import { CLUSTER, createFakeWorld, failureOf, type FakeWorld, nodeName, poolRef } from './fake-world.js';

const POOLS = ['pool1', 'pool2', 'pool3'];

async function reap(world: FakeWorld): Promise<ReapClusterResult> {
  const status = await world.runner.startOrchestration(
    ORCHESTRATION.reapCluster,
    { cluster: CLUSTER, trigger: 'test', runSeed: 'seed' },
    reapInstanceId(CLUSTER),
  );
  assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
  return status.output as ReapClusterResult;
}

function outcomes(result: ReapClusterResult): string[] {
  return result.pools.map((pool) => `${pool.pool}:${pool.outcome}`);
}

void describe('reapCluster on the port fakes', () => {
  void it("gives back a dead run's node, leaves a live run alone, only reads an idle pool", async () => {
    const world = createFakeWorld({ pools: POOLS });
    await leaveDonor(world, 'pool1', 'run-dead');
    holdLease(world, 'pool1', 'cli/laptop/run-dead', 16); // expired a minute ago
    await leaveDonor(world, 'pool2', 'run-live');
    holdLease(world, 'pool2', 'cli/laptop/run-live', 1);

    const result = await reap(world);

    assert.deepEqual(outcomes(result), ['pool1:released', 'pool2:held', 'pool3:nothing-left']);
    assert.ok(givenBack(world, 'pool1'), 'the dead run’s node is back');
    const free = leaseState(
      world.kube.leases.lease(leaseOf('pool1').namespace, leaseOf('pool1').name),
      new Date(world.clock.now()),
    );
    assert.equal(free.kind, 'free', 'the reaper released the lease it took');
    const live = world.kube.nodes.node(nodeName('pool2', 0));
    assert.equal(live?.annotations[CAPTURE_RUN_ANNOTATION], 'run-live', 'the live run keeps its node');
    assert.equal(live?.unschedulable, true);
    assert.equal(world.compute.instanceState(poolRef('pool2'), '0')?.powerState, 'stopped');
    assert.match(result.pools[1]?.holder ?? '', /run run-live of cli on laptop/);
    assert.equal(
      world.kube.leases.lease(leaseOf('pool3').namespace, leaseOf('pool3').name),
      undefined,
      'read only',
    );
  });

  void it('one survey: shared listings read once, a give-back only for the pool with leftovers', async () => {
    const given: string[] = [];
    const world = createFakeWorld({
      pools: POOLS,
      wrapActivity: (name, activity) => (input) => {
        if (name === 'readPoolHoldings') given.push((input as { pool: string }).pool);
        return activity(input);
      },
    });
    await leaveDonor(world, 'pool2', 'run-dead');
    holdLease(world, 'pool2', 'cli/laptop/run-dead', 20);
    const calls = (fake: { callsTo(method: string): readonly unknown[] }, method: string): number =>
      fake.callsTo(method).length;
    const listed = [
      calls(world.compute, 'snapshots.list'),
      calls(world.compute, 'disks.list'),
      calls(world.kube, 'pods.list'),
    ];

    const result = await reap(world);

    assert.deepEqual(outcomes(result), ['pool1:nothing-left', 'pool2:released', 'pool3:nothing-left']);
    // Only the pool with leftovers is read again: by its give-back, then under its lease.
    assert.deepEqual(given, ['pool2', 'pool2']);
    // The pools share one resource group and one prep namespace: the survey lists each once, and
    // pool2's two reads once each for itself.
    assert.deepEqual(
      [
        calls(world.compute, 'snapshots.list'),
        calls(world.compute, 'disks.list'),
        calls(world.kube, 'pods.list'),
      ].map((count, index) => count - (listed[index] ?? 0)),
      [3, 3, 3],
    );
  });

  void it('a pool the survey cannot read gets its own give-back, which reads it again', async () => {
    const given: string[] = [];
    const world = createFakeWorld({
      pools: ['pool1', 'pool2'],
      wrapActivity: (name, activity) => (input) => {
        if (name === 'readPoolHoldings') given.push((input as { pool: string }).pool);
        return activity(input);
      },
    });
    const pool1 = (args: readonly unknown[]): boolean => (args[0] as { name?: string }).name === 'pool1';
    world.compute.nextErrorWhen(
      'scaleSets.get',
      pool1,
      new TransientError('ArmUnavailable', 'ARM answered 503'),
    );
    const reads = world.compute.callsTo('scaleSets.get').filter((call) => pool1(call.args)).length;
    const listings = world.compute.callsTo('scaleSets.list').length;

    const result = await reap(world);

    assert.deepEqual(outcomes(result), ['pool1:nothing-left', 'pool2:nothing-left']);
    assert.deepEqual(given, ['pool1'], 'the survey could not tell: its own give-back read it');
    // The survey's read of pool1's model failed; the give-back read it again from its group's listing
    // (which carries every model in the group), beside the survey's one shared listing.
    assert.equal(world.compute.callsTo('scaleSets.get').filter((call) => pool1(call.args)).length - reads, 1);
    assert.equal(world.compute.callsTo('scaleSets.list').length - listings, 2);
  });

  void it('a pool that cannot be read is reported; the next pool is still reaped', async () => {
    const world = createFakeWorld({
      pools: ['pool1', 'pool2'],
      wrapActivity: (name, activity) => (input) =>
        name === 'readPoolHoldings' && (input as { pool?: string }).pool === 'pool1'
          ? Promise.resolve({
              ok: false,
              failure: { kind: 'terminal', code: 'Forbidden', message: 'no access' },
            })
          : activity(input),
    });
    // Both have leftovers: the survey hands both to a give-back, and pool1's read fails there.
    await leaveDonor(world, 'pool1', 'run-dead-1');
    holdLease(world, 'pool1', 'cli/laptop/run-dead-1', 20);
    await leaveDonor(world, 'pool2', 'run-dead');
    holdLease(world, 'pool2', 'cli/laptop/run-dead', 20);

    const result = await reap(world);

    assert.deepEqual(outcomes(result), ['pool1:failed', 'pool2:released']);
    assert.match(result.pools[0]?.failures[0] ?? '', /no access/);
    assert.ok(givenBack(world, 'pool2'));
  });

  void it('a give-back whose lease is taken stops there; the next pool is still reaped', async () => {
    let stolen = false;
    const world: FakeWorld = createFakeWorld({
      pools: ['pool1', 'pool2'],
      // VMs take 10 minutes to start: the give-back renews its lease meanwhile.
      compute: { timings: { start: 10 * MINUTE } },
      wrapActivity: (name, activity) => (input) => {
        const scaleSet = (input as { scaleSet?: { name?: string } }).scaleSet?.name;
        if (name === 'readInstance' && scaleSet === 'pool1' && !stolen) {
          stolen = true;
          // Another runner takes pool1's lease while the reaper waits for the VM to start.
          holdLease(world, 'pool1', 'function-app/other-hub/run-thief', 0);
        }
        return activity(input);
      },
    });
    for (const pool of ['pool1', 'pool2']) {
      await leaveDonor(world, pool, `run-dead-${pool}`);
      holdLease(world, pool, `cli/laptop/run-dead-${pool}`, 20);
    }

    const result = await reap(world);

    assert.ok(stolen);
    assert.deepEqual(outcomes(result), ['pool1:failed', 'pool2:released']);
    assert.match(result.pools[0]?.failures[0] ?? '', /no longer holds pool pool1/);
    assert.ok(givenBack(world, 'pool2'), 'pool2 is given back all the same');
    assert.equal(
      world.kube.nodes.node(nodeName('pool1', 0))?.unschedulable,
      true,
      'pool1 is the new holder’s now',
    );
  });
});
