/**
 * A run killed for good while its canary tests (finding 2): the model stays pinned to the
 * hidden version, the canary and its record on the scale set. `plan` must say so instead of
 * `up-to-date`, `release --dry-run` must list it, and `refresh --pool` gives it back before it plans.
 * A kubeadm pool, whose canary the pin adds to the pool's scale set; and a boot-from-image pool's first
 * canary, which runs in a scale set of its own (docs/design.md#canary): found by its tags, drained and
 * deleted by the next run that holds the pool.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createDurableRunner, createMemoryStore } from '../../cli/runner/index.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type {
  ClusterRefreshResult,
  PoolRefreshResult,
  ReleasePoolResult,
} from '../../shared/application/refresh-contracts.js';
import { CANARY_TAG_PREFIX } from '../../shared/domain/canary-record.js';
import { setupWorld } from '../explore/point.js';
import { assertIdentityClean, POOL2, startHarness, withKubeadmPool } from './harness.js';

/** Tags of the canary scale set's pool: an organisation's, and cluster-autoscaler's on Azure. */
const POOL_TAGS = {
  costCenter: 'cc-4711',
  'cluster-autoscaler-enabled': 'true',
  'cluster-autoscaler-name': 'prod',
  min: '1',
  max: '6',
  'k8s.io_cluster-autoscaler_node-template_label_agentpool': 'pool2',
} as const;

function idOf(reference: Readonly<Record<string, unknown>> | undefined): string {
  const id = reference?.['id'];
  return typeof id === 'string' ? id : '';
}

void describe('a dead run’s canary', { concurrency: false }, () => {
  void it('is reported by plan and release, and given back by the next refresh of the pool', async () => {
    const harness = await startHarness({
      clock: 'manual',
      scenario: withKubeadmPool(POOL2),
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

  void it('in a canary scale set of its own: listed by release, drained and deleted by the next refresh', async () => {
    // The sample's aks-engine pool on its first refresh: the canary runs in a scale set made from the
    // pool's model (docs/design.md#canary), which a run killed for good leaves behind. The pool carries
    // an organisation's tag and cluster-autoscaler's (discovery, size, node template).
    const harness = await startHarness({
      clock: 'manual',
      scenario: (scenario) => {
        const pool = scenario.clusters[0]?.scaleSets.find((scaleSet) => scaleSet['name'] === POOL2);
        assert.ok(pool);
        pool['tags'] = { ...(pool['tags'] as Record<string, string>), ...POOL_TAGS };
      },
      settings: (cluster) => {
        cluster.capture = { ...cluster.capture, mode: 'drain-and-stop' };
        cluster['promotion'] = { canary: { soak: '30s', deadline: '15m' } };
      },
    });
    try {
      const compute = harness.sim.running.world.compute;
      const canaryScaleSets = () =>
        compute
          .listScaleSets()
          .filter((candidate) => candidate.tags['vmss-prototype.purpose'] === 'canary-scale-set');
      const pool = () => compute.listScaleSets().find((candidate) => candidate.name === POOL2);
      const modelBefore = JSON.stringify(pool()?.imageReference);
      const registry = durableRegistry(harness.composition.dependencies);
      const world = setupWorld(harness, registry, POOL2);
      const end = await world.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', runSeed: 'dies-testing' },
        `refresh:prod:${POOL2}`,
        { activity: 'observeCanaries', occurrence: 2 },
      );
      assert.equal(end, 'killed');
      const [left] = canaryScaleSets();
      assert.ok(left, 'the dead run left its canary scale set');
      assert.equal(JSON.stringify(pool()?.imageReference), modelBefore, "the pool's model is untouched");
      // Until its lease expires; the canary's machine joins meanwhile.
      harness.sim.running.clock.advanceBy(16 * 60);
      const canaryNodes = harness.sim.running.world
        .cluster('prod')
        .world.store.list('nodes')
        .filter((node) =>
          compute.listInstances(left.id).some((vm) => vm.computerName.toLowerCase() === node.metadata.name),
        );
      assert.equal(canaryNodes.length, 1, 'its canary joined');
      // The organisation's tags go along; cluster-autoscaler's and the pool's own records do not.
      assert.equal(left.tags['costCenter'], POOL_TAGS.costCenter);
      assert.deepEqual(
        Object.keys(left.tags).filter((key) => /autoscaler|^min$|^max$/i.test(key)),
        [],
        JSON.stringify(left.tags),
      );
      assert.equal(left.tags['vmss-prototype.source-scale-set'], POOL2);

      // A cluster run finds the canary scale set by its joined node (`pools: all`) and refuses it as a pool.
      const runner = () =>
        createDurableRunner({ ...registry, clock: harness.sim.clock, store: createMemoryStore() });
      const planned = await runner().startOrchestration(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test', dryRun: true },
        'plan:prod',
      );
      const asPool = (planned.output as ClusterRefreshResult).pools.find(
        (entry) => entry.pool === left.name.toLowerCase(),
      );
      assert.equal(asPool?.outcome, 'refused', JSON.stringify(asPool));
      assert.match(asPool.reason, /is the temporary canary scale set of run \S+ for pool k8s-pool2/);

      const dry = await runner().startOrchestration(
        ORCHESTRATION.releasePool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', dryRun: true },
        `release-plan:prod:${POOL2}`,
      );
      assert.ok(
        (dry.output as ReleasePoolResult).actions.some((action) =>
          action.startsWith(`the canary scale set ${left.name} of run `),
        ),
        JSON.stringify(dry.output),
      );
      assert.ok(canaryScaleSets().length === 1, 'a dry run deletes nothing');

      const refresh = await runner().startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test', runSeed: 'next' },
        `refresh:prod:${POOL2}`,
      );
      const refreshed = refresh.output as PoolRefreshResult;
      assert.equal(refreshed.outcome, 'refreshed', refreshed.reason);
      assert.ok(
        (refreshed.gaveBack ?? []).some((what) => what.includes(`canary scale set ${left.name}`)),
        JSON.stringify(refreshed.gaveBack),
      );
      assert.deepEqual(canaryScaleSets(), [], 'no canary scale set is left');
      for (const node of canaryNodes) {
        assert.equal(
          harness.sim.running.world.cluster('prod').world.store.get('nodes', undefined, node.metadata.name),
          undefined,
          `${node.metadata.name} left with its scale set`,
        );
      }
      assertIdentityClean(harness, 'the dead run’s canary scale set and the next refresh’s');
    } finally {
      await harness.stop();
    }
  });
});
