/**
 * A run killed for good while its canary tests (finding 2): the model stays pinned to the
 * hidden version, the canary and its record on the scale set. `plan` must say so instead of
 * `up-to-date`, `release --dry-run` must list it, and `refresh --pool` gives it back before it plans.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createDurableRunner, createMemoryStore } from '../../cli/runner/index.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult, ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { CANARY_TAG_PREFIX } from '../../shared/domain/canary-record.js';
import { setupWorld } from '../explore/point.js';
import { assertIdentityClean, POOL2, startHarness } from './harness.js';

function idOf(reference: Readonly<Record<string, unknown>> | undefined): string {
  const id = reference?.['id'];
  return typeof id === 'string' ? id : '';
}

void describe('a dead run’s canary', { concurrency: false }, () => {
  void it('is reported by plan and release, and given back by the next refresh of the pool', async () => {
    const harness = await startHarness({
      clock: 'manual',
      settings: (cluster) => {
        cluster.capture = { ...cluster.capture, mode: 'drain-and-stop' };
        cluster['promotion'] = { canary: { soak: '30s', deadline: '15m' } };
      },
    });
    try {
      const compute = harness.sim.running.world.compute;
      const scaleSet = () => compute.listScaleSets().find((candidate) => candidate.name === POOL2);
      const registry = durableRegistry(harness.composition.dependencies);
      const world = setupWorld(harness, registry, POOL2);
      const end = await world.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', runSeed: 'dies-testing' },
        `refresh:prod:${POOL2}`,
        { activity: 'observeCanaries', occurrence: 2 },
      );
      assert.equal(end, 'killed');
      const pinned = idOf(scaleSet()?.imageReference);
      assert.ok(
        compute.getImageVersion(pinned)?.excludeFromLatest,
        'the model is pinned to the hidden version',
      );
      harness.sim.running.clock.advanceBy(16 * 60);

      const runner = () =>
        createDurableRunner({ ...registry, clock: harness.sim.clock, store: createMemoryStore() });
      const plan = await runner().startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', dryRun: true },
        `plan:prod:${POOL2}:1`,
      );
      const planned = plan.output as PoolRefreshResult;
      assert.equal(planned.outcome, 'skipped', planned.reason);
      assert.match(planned.reason, /carries the canary of run \S+, testing version \S+: .*release --pool/);

      const dry = await runner().startOrchestration(
        ORCHESTRATION.releasePool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', dryRun: true },
        `release-plan:prod:${POOL2}`,
      );
      assert.ok(
        (dry.output as ReleasePoolResult).actions.some((action) => /^the canary of run /.test(action)),
        JSON.stringify(dry.output),
      );

      const refresh = await runner().startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', runSeed: 'next' },
        `refresh:prod:${POOL2}`,
      );
      const refreshed = refresh.output as PoolRefreshResult;
      assert.equal(refreshed.outcome, 'refreshed', refreshed.reason);
      const after = scaleSet();
      assert.deepEqual(
        Object.keys(after?.tags ?? {}).filter((key) => key.startsWith(CANARY_TAG_PREFIX)),
        [],
      );
      const model = idOf(after?.imageReference);
      assert.notEqual(model, pinned);
      // The refresh published its version: the model follows the definition's latest (or pins a published
      // version), never the hidden one.
      assert.ok(
        !/\/versions\//i.test(model) || compute.getImageVersion(model)?.excludeFromLatest === false,
        `the model on a published image: ${model}`,
      );
      assert.ok(
        refreshed.version !== undefined && !compute.getImageVersion(refreshed.version.id)?.excludeFromLatest,
      );
      assertIdentityClean(harness, 'the dead run’s canary and the next refresh’s');
    } finally {
      await harness.stop();
    }
  });
});
