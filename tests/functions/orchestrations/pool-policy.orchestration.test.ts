/**
 * A pool's PoolImagePolicy through the real orchestrators on the port fakes (docs/pool-policy.md): its
 * spec overrides the pool's settings for a refresh, `paused` stops new runs, `rollbackTo` is acted on by
 * the retirement timer's next tick exactly once and recorded in the object's status, an invalid spec
 * starts nothing and says why in a condition and an Event, and a pool without an object runs and writes
 * exactly as before. A status that cannot be written never fails the run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { orchestrations } from '../../../functions/orchestrations/index.js';
import type { PoolRefreshResult } from '../../../shared/application/refresh-contracts.js';
import type { RetireClusterResult } from '../../../shared/application/retirement-contracts.js';
import { TransientError } from '../../../shared/domain/errors.js';
import { CLUSTER, createFakeWorld, definitionRef, failureOf, type FakeWorld, poolRef } from './fake-world.js';

const POOL = 'pool1';

interface WrittenStatus {
  readonly state?: string;
  readonly currentVersion?: string;
  readonly observedGeneration?: number;
  readonly lastRun?: { readonly outcome?: string; readonly kind?: string };
  readonly actions?: Record<
    string,
    { readonly target: string; readonly state: string; readonly message?: string }
  >;
  readonly conditions?: {
    readonly type: string;
    readonly status: string;
    readonly reason: string;
    readonly message: string;
  }[];
}

function statusOf(world: FakeWorld, pool = POOL): WrittenStatus {
  return world.kube.poolPolicies.object(pool)?.status ?? {};
}

function condition(world: FakeWorld, type: string) {
  return statusOf(world).conditions?.find((entry) => entry.type === type);
}

async function tick(world: FakeWorld, n: number): Promise<RetireClusterResult> {
  const status = await world.runner.startOrchestration(
    orchestrations.retireCluster,
    { cluster: CLUSTER, trigger: 'test', runSeed: `tick-${n}` },
    `retire:${CLUSTER}`,
  );
  assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
  return status.output as RetireClusterResult;
}

async function twoVersions(world: FakeWorld): Promise<[string, string]> {
  const names: string[] = [];
  for (const node of [undefined, `${POOL}-vmss000002`]) {
    const refreshed = await world.refreshPool(POOL, node === undefined ? {} : { node });
    const result = refreshed.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed', failureOf(refreshed));
    names.push(result.version?.versionName ?? '');
    await world.clock.advanceTo(world.clock.now() + 3_600_000);
  }
  return [names[0] ?? '', names[1] ?? ''];
}

void describe('PoolImagePolicy', () => {
  void it('overrides the pool’s settings for a refresh, and the run writes the status', async () => {
    const world = createFakeWorld();
    world.kube.poolPolicies.apply(POOL, { pinVersion: true });

    const status = await world.refreshPool(POOL);

    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed', failureOf(status));
    // The settings point the model at the definition (latest); the policy pins it to the version.
    assert.equal(result.plan?.settings.pinVersion, true);
    const model = world.compute.scaleSetState(poolRef(POOL))?.imageReference;
    assert.equal(model?.kind === 'gallery' ? model.id : undefined, result.version?.id);
    const written = statusOf(world);
    assert.equal(written.currentVersion, result.version?.versionName);
    assert.equal(written.observedGeneration, 1);
    assert.equal(written.lastRun?.kind, 'refresh');
    assert.equal(written.lastRun?.outcome, 'refreshed');
    assert.equal(condition(world, 'Valid')?.status, 'True');
    assert.match(condition(world, 'Valid')?.message ?? '', /overrides spec\.pinVersion/);
    assert.equal(condition(world, 'Refreshing')?.status, 'False');
  });

  void it('paused: a refresh is skipped, saying who paused it and how to resume', async () => {
    const world = createFakeWorld();
    world.kube.poolPolicies.apply(POOL, { paused: true });

    const status = await world.refreshPool(POOL);

    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'skipped', failureOf(status));
    assert.match(
      result.reason,
      /paused by PoolImagePolicy pool1 \(spec\.paused: true\); set spec\.paused to false/,
    );
    assert.deepEqual(world.compute.imageVersionsNow(definitionRef(POOL)), []);
    assert.equal(statusOf(world).state, 'Paused');

    world.kube.poolPolicies.apply(POOL, { paused: false });
    const resumed = await world.refreshPool(POOL);
    assert.equal((resumed.output as PoolRefreshResult).outcome, 'refreshed', failureOf(resumed));
  });

  void it('rollbackTo: the next tick rolls back once and records it; later ticks do not again', async () => {
    const world = createFakeWorld();
    const [first, second] = await twoVersions(world);
    world.kube.poolPolicies.apply(POOL, { rollbackTo: first });

    const acted = await tick(world, 1);

    assert.deepEqual(
      acted.policyActions?.map((action) => [action.pool, action.kind, action.target, action.state]),
      [[POOL, 'rollback', first, 'Done']],
    );
    const written = statusOf(world);
    assert.equal(written.actions?.['rollback']?.target, first);
    assert.equal(written.actions?.['rollback']?.state, 'Done');
    assert.equal(written.currentVersion, first, `rolled back from ${second}`);
    assert.equal(written.lastRun?.kind, 'rollback');
    const events = world.kube.poolPolicies.events().map((event) => `${event.type} ${event.reason}`);
    assert.deepEqual(events, ['Normal RolledBack']);
    const rollbacks = () =>
      new Set(
        world.statuses
          .filter((s) => s.instanceId === `rollback:${CLUSTER}:${POOL}`)
          .map((s) => JSON.stringify(s.status)),
      ).size;
    const before = rollbacks();

    const again = await tick(world, 2);

    assert.equal(again.policyActions, undefined, 'nothing to do');
    assert.equal(rollbacks(), before, 'no second rollback run');
    assert.equal(world.kube.poolPolicies.events().length, 1);

    // Asked again for the same version: only once the field was removed and set again.
    world.kube.poolPolicies.apply(POOL, {});
    await tick(world, 3);
    assert.equal(statusOf(world).actions?.['rollback'], undefined, 'forgotten once the spec no longer asks');
  });

  void it('a rollback the pool cannot do is recorded Failed with the reason, and not tried again', async () => {
    const world = createFakeWorld();
    await twoVersions(world);
    world.kube.poolPolicies.apply(POOL, { rollbackTo: '2001.101.1' });

    const acted = await tick(world, 1);

    assert.equal(acted.policyActions?.[0]?.state, 'Failed');
    assert.match(statusOf(world).actions?.['rollback']?.message ?? '', /2001\.101\.1 is gone/);
    assert.deepEqual(
      world.kube.poolPolicies.events().map((event) => event.reason),
      ['ActionFailed'],
    );
    assert.equal((await tick(world, 2)).policyActions, undefined);
  });

  void it('rollbackTo the version new instances get already: Done at once, one Event', async () => {
    const world = createFakeWorld();
    const [, second] = await twoVersions(world);
    world.kube.poolPolicies.apply(POOL, { rollbackTo: second });

    const acted = await tick(world, 1);

    assert.equal(acted.policyActions?.[0]?.state, 'Done');
    assert.match(statusOf(world).actions?.['rollback']?.message ?? '', /new instances get .* already/);
    assert.deepEqual(
      world.kube.poolPolicies.events().map((event) => event.reason),
      ['RolledBack'],
    );
  });

  void it('another tick that ended the action first keeps its record: this one leaves it, no Event', async () => {
    // Two deployments' ticks (or one whose clock runs ahead) both read the spec before either started.
    let otherTick: (() => Promise<void>) | undefined;
    const world = createFakeWorld({
      wrapActivity: (name, activity) => async (input) => {
        if (name === 'recordPolicyAction' && otherTick !== undefined) {
          const other = otherTick;
          otherTick = undefined;
          await other();
        }
        return activity(input);
      },
    });
    const [first] = await twoVersions(world);
    world.kube.poolPolicies.apply(POOL, { rollbackTo: first });
    otherTick = async () => {
      const object = world.kube.poolPolicies.object(POOL);
      assert.ok(object !== undefined);
      const done = {
        target: first,
        observedGeneration: object.generation,
        state: 'Done',
        startedAt: 'earlier',
      };
      await world.kube.poolPolicies.replaceStatus(
        POOL,
        { actions: { rollback: done } },
        object.resourceVersion,
      );
    };

    const acted = await tick(world, 1);

    assert.equal(acted.policyActions?.[0]?.state, 'waiting');
    assert.match(acted.policyActions?.[0]?.message ?? '', /another tick acted on it .*Done for/);
    assert.equal(statusOf(world).actions?.['rollback']?.state, 'Done', 'the other tick’s record stays');
    assert.equal(
      world.statuses.some((entry) => entry.instanceId === `rollback:${CLUSTER}:${POOL}`),
      false,
      'no rollback started',
    );
    assert.deepEqual(world.kube.poolPolicies.events(), []);
  });

  void it('an invalid spec starts nothing: Valid=False names the field and the fix, one Event', async () => {
    const world = createFakeWorld();
    world.kube.poolPolicies.apply(POOL, {
      canary: { soak: '1h', deadline: '30m' },
      rollbackTo: '2026.1127.1',
    });

    const status = await world.refreshPool(POOL);
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refused', failureOf(status));
    assert.match(
      result.reason,
      /PoolImagePolicy pool1 is invalid.*spec\.canary\.deadline: .*lengthen spec\.canary\.deadline/,
    );
    assert.deepEqual(world.compute.imageVersionsNow(definitionRef(POOL)), []);

    const acted = await tick(world, 1);
    await tick(world, 2);

    assert.equal(acted.policyActions, undefined, 'its rollback waits for a valid spec');
    assert.equal(statusOf(world).state, 'Invalid');
    assert.equal(condition(world, 'Valid')?.status, 'False');
    assert.equal(condition(world, 'Valid')?.reason, 'InvalidSpec');
    assert.match(condition(world, 'Valid')?.message ?? '', /spec\.canary\.deadline/);
    const events = world.kube.poolPolicies.events();
    assert.deepEqual(
      events.map((event) => `${event.type} ${event.reason}`),
      ['Warning InvalidSpec'],
      'one event however many writes',
    );

    // A schema problem names its field too.
    world.kube.poolPolicies.apply(POOL, { canary: { instances: 50 } });
    await tick(world, 3);
    assert.match(
      condition(world, 'Valid')?.message ?? '',
      /spec\.canary\.instances: got 50; expected an integer from 1 to 10/,
    );
    assert.equal(world.kube.poolPolicies.events().length, 2, 'a new generation, a new event');
  });

  void it('an object named after no pool is told so', async () => {
    const world = createFakeWorld();
    world.kube.poolPolicies.apply('nopool', { paused: true });

    await tick(world, 1);

    const valid = (world.kube.poolPolicies.object('nopool')?.status as WrittenStatus).conditions?.[0];
    assert.equal(valid?.reason, 'NoSuchPool');
    assert.match(valid?.message ?? '', /cluster prod has no pool nopool \(its pools: pool1\)/);
  });

  void it('a pool without an object runs as before: no status written, no event', async () => {
    const world = createFakeWorld();

    const status = await world.refreshPool(POOL);
    await tick(world, 1);

    assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed', failureOf(status));
    assert.deepEqual(world.kube.callsTo('poolPolicies.replaceStatus'), []);
    assert.deepEqual(world.kube.callsTo('poolPolicies.recordEvent'), []);
  });

  void it('a cluster that does not serve the resource runs as before', async () => {
    const world = createFakeWorld();
    world.kube.poolPolicies.apply(POOL, { paused: true });
    world.kube.poolPolicies.setInstalled(false);

    const status = await world.refreshPool(POOL);
    const ticked = await tick(world, 1);

    assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed', failureOf(status));
    assert.equal(ticked.policyFailure, undefined);
  });

  void it('a status that cannot be written does not fail the run', async () => {
    const world = createFakeWorld();
    world.kube.poolPolicies.apply(POOL, {});
    world.kube.nextError(
      'poolPolicies.replaceStatus',
      new TransientError('ApiServerUnavailable', 'writing the status: the API server is unavailable'),
    );

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed');
    assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed', failureOf(status));
    assert.equal(world.kube.poolPolicies.object(POOL)?.status, undefined, 'not written this time');
    await tick(world, 1);
    assert.equal(statusOf(world).lastRun?.outcome, 'refreshed', 'the next tick writes it');
  });
});
