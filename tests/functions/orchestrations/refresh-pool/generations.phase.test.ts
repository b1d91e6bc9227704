/**
 * The labelling step of a run that holds the pool records the pool's nodes per generation on the pool
 * lease (the status page's convergence chart), through the local runner on the port fakes. A
 * failure to record is a warning, never the run's failure; a run that holds nothing records nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { orchestrations } from '../../../../functions/orchestrations/index.js';
import { leaseRefOf } from '../../../../shared/application/pool-holdings.js';
import type {
  PoolRefreshResult,
  PoolRollbackResult,
} from '../../../../shared/application/refresh-contracts.js';
import { TransientError } from '../../../../shared/domain/errors.js';
import { parseGenerationSamples } from '../../../../shared/domain/generation-samples.js';
import { LEASE_ANNOTATIONS } from '../../../../shared/domain/ownership.js';
import type { LeaseWrite } from '../../../../shared/ports/kubernetes/index.js';
import { CLUSTER, createFakeWorld, failureOf, type FakeWorld, poolRef } from '../fake-world.js';

const POOL = 'pool1';
const LEASE = leaseRefOf(poolRef(POOL), 'vmss-prototype');

function samplesOf(world: FakeWorld) {
  return parseGenerationSamples(
    world.kube.leases.lease(LEASE.namespace, LEASE.name)?.annotations[LEASE_ANNOTATIONS.generationSamples],
  );
}

/** When the run entered its labelling step (epoch ms), by its custom status. */
function labellingSince(world: FakeWorld, instanceId: string): number {
  const status = world.statuses.findLast(
    (entry) =>
      entry.instanceId === instanceId &&
      (entry.status as { step?: string } | undefined)?.step === 'labelling-generations',
  );
  return Date.parse((status?.status as { since?: string } | undefined)?.since ?? '');
}

void describe('generationsPhase with the run fence', () => {
  void it('a refresh records the nodes per generation on the pool lease, which outlives the run', async () => {
    const world = createFakeWorld();

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed');
    assert.equal(result.warnings, undefined);
    const lease = world.kube.leases.lease(LEASE.namespace, LEASE.name);
    assert.equal(lease?.holder, undefined, 'released');
    const samples = samplesOf(world);
    assert.equal(samples.length, 1);
    // The fake pool's nodes were built from a marketplace image: generation `unknown`.
    assert.deepEqual(samples[0]?.counts, { unknown: 3 });
    const at = Date.parse(samples[0]?.at ?? '');
    assert.ok(at >= labellingSince(world, `refresh:${CLUSTER}:${POOL}`), samples[0]?.at);
  });

  void it('a rollback records too, after the refreshes it rolls back', async () => {
    const world = createFakeWorld();
    for (const node of [undefined, `${POOL}-vmss000002`]) {
      const refreshed = await world.refreshPool(POOL, node === undefined ? {} : { node });
      assert.equal((refreshed.output as PoolRefreshResult).outcome, 'refreshed', failureOf(refreshed));
      await world.clock.advanceTo(world.clock.now() + 3_600_000);
    }
    const instanceId = `rollback:${CLUSTER}:${POOL}`;
    const status = await world.runner.startOrchestration(
      orchestrations.rollbackPool,
      { cluster: CLUSTER, pool: POOL, trigger: 'test' },
      instanceId,
    );

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.equal((status.output as PoolRollbackResult).outcome, 'rolled-back');
    const samples = samplesOf(world);
    // Three identical readings: the first and the last are kept.
    assert.equal(samples.length, 2, JSON.stringify(samples));
    assert.ok(Date.parse(samples[1]?.at ?? '') >= labellingSince(world, instanceId), samples[1]?.at);
  });

  void it('a failure to record is a warning: the labels are applied and the run ends well', async () => {
    const world = createFakeWorld();
    const recording = (args: readonly unknown[]): boolean =>
      (args[0] as LeaseWrite).annotations[LEASE_ANNOTATIONS.generationSamples] !== undefined;
    world.kube.nextErrorWhen(
      'leases.replace',
      recording,
      new TransientError('ApiServerUnavailable', 'replacing lease: the API server is unavailable'),
    );

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed');
    assert.equal(result.generations?.labelled, 3, 'labelled');
    assert.deepEqual(result.warnings, [
      'recording nodes per generation on the pool lease: replacing lease: the API server is unavailable (the next run records again)',
    ]);
    assert.deepEqual(samplesOf(world), []);
  });

  void it('a run that holds nothing (the pool is up to date) records nothing', async () => {
    const world = createFakeWorld();
    const first = await world.refreshPool(POOL);
    assert.equal((first.output as PoolRefreshResult).outcome, 'refreshed', failureOf(first));
    const before = samplesOf(world);
    await world.clock.advanceTo(world.clock.now() + 3_600_000);

    const second = await world.refreshPool(POOL);

    const result = second.output as PoolRefreshResult;
    assert.equal(result.outcome, 'up-to-date', result.reason);
    assert.equal(result.generations?.nodes, 3, 'labelled all the same');
    assert.deepEqual(samplesOf(world), before);
  });
});
