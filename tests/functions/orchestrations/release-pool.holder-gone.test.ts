/**
 * `release` given a holder whose process the CLI saw gone (ReleasePoolInput.holderGone): that
 * run's live lease is taken over at once, and only that run's; the orchestration itself only compares run
 * ids (the pid check is the CLI's, cli/dead-holder.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION, releaseInstanceId } from '../../../shared/application/orchestration-ids.js';
import type { ReleasePoolInput, ReleasePoolResult } from '../../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION } from '../../../shared/domain/cluster-node.js';
import { leaseState } from '../../../shared/domain/ownership.js';
import { givenBack, holdLease, leaseOf, leaveDonor } from './dead-run.js';
import { CLUSTER, createFakeWorld, failureOf, type FakeWorld, nodeName } from './fake-world.js';

const POOL = 'pool1';
const GONE = { runId: 'run-dead', host: 'laptop', pid: 31337 };

async function release(world: FakeWorld, extra: Partial<ReleasePoolInput>): Promise<ReleasePoolResult> {
  const input: ReleasePoolInput = {
    cluster: CLUSTER,
    pool: POOL,
    trigger: 'test',
    runSeed: 'seed',
    ...extra,
  };
  const status = await world.runner.startOrchestration(
    ORCHESTRATION.releasePool,
    input,
    releaseInstanceId(CLUSTER, POOL),
  );
  assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
  return status.output as ReleasePoolResult;
}

function leaseNow(world: FakeWorld) {
  const ref = leaseOf(POOL);
  return leaseState(world.kube.leases.lease(ref.namespace, ref.name), new Date(world.clock.now()));
}

/** A CLI run that died a minute after its last renewal, holding its donor. */
async function deadCliRun(): Promise<FakeWorld> {
  const world = createFakeWorld();
  await leaveDonor(world, POOL, GONE.runId);
  holdLease(world, POOL, `cli/laptop/${GONE.runId}`, 1, { 'vmss-prototype.io/holder-pid': '31337' });
  return world;
}

void describe('release with the holder’s process gone', () => {
  void it('takes the dead run’s live lease over at once and gives its node back', async () => {
    const world = await deadCliRun();
    const result = await release(world, { holderGone: GONE });
    assert.equal(result.outcome, 'released', JSON.stringify(result));
    assert.deepEqual(result.holderGone, GONE);
    assert.ok(givenBack(world, POOL));
    assert.equal(leaseNow(world).kind, 'free');
  });

  void it('without it, the same live lease is left alone until it expires', async () => {
    const world = await deadCliRun();
    const result = await release(world, {});
    assert.equal(result.outcome, 'held');
    assert.equal(result.holderGone, undefined);
    assert.equal(world.kube.nodes.node(nodeName(POOL, 0))?.annotations[CAPTURE_RUN_ANNOTATION], GONE.runId);
  });

  void it('never takes over another run than the one judged gone (the pool changed hands meanwhile)', async () => {
    const world = await deadCliRun();
    const result = await release(world, { holderGone: { ...GONE, runId: 'run-earlier' } });
    assert.equal(result.outcome, 'held');
    assert.equal(result.holderGone, undefined);
    assert.equal(world.kube.nodes.node(nodeName(POOL, 0))?.unschedulable, true, 'nothing touched');
    assert.equal(leaseNow(world).kind, 'held');
  });

  void it('a dry run shows the take-over and changes nothing', async () => {
    const world = await deadCliRun();
    const result = await release(world, { holderGone: GONE, dryRun: true });
    assert.equal(result.outcome, 'planned');
    assert.deepEqual(result.holderGone, GONE);
    assert.ok(result.actions.some((action) => action.includes(`give node ${nodeName(POOL, 0)} back`)));
    assert.equal(world.kube.nodes.node(nodeName(POOL, 0))?.unschedulable, true);
  });

  void it('with nothing to give back, the dead run’s lease is still freed: the pool can be refreshed now', async () => {
    const world = createFakeWorld();
    holdLease(world, POOL, `cli/laptop/${GONE.runId}`, 1, { 'vmss-prototype.io/holder-pid': '31337' });
    const result = await release(world, { holderGone: GONE });
    assert.equal(result.outcome, 'nothing-left');
    assert.equal(leaseNow(world).kind, 'free');
  });
});
