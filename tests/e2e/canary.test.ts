/**
 * The canary gate end to end on the simulator, on the sample pool's first refresh (its model still holds
 * the bootstrap, so the canary runs in a temporary scale set made from the model as publication will leave
 * it: docs/design.md#canary; the pin of the pool's own model is tested by canary-others.test.ts and
 * keep-size.test.ts): a new version is built hidden and a canary instance added; a canary that joins, turns Ready, soaks and runs its
 * DaemonSet pods (and check pod) publishes the version; one that never joins, or whose check pod fails,
 * puts the model back exactly as it was, deletes the canary, tags the version rejected and keeps it
 * hidden, and the next auto run does not build from the same donor and patch again.
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { IMAGE_VERSION_LABEL } from '../../shared/domain/generations.js';
import { VERSION_VERDICT_TAG_KEYS } from '../../shared/domain/version-verdict.js';
import type { Harness } from './harness.js';
import { POOL2, startHarness } from './harness.js';

const CANARY_SETTINGS = { canary: { soak: '5m', deadline: '20m' } };

function scaleSetOf(harness: Harness, name: string) {
  const scaleSet = harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === name);
  assert.ok(scaleSet, `scale set ${name}`);
  return scaleSet;
}

/** What "the model as it was" means: every property ARM holds for it, and its tags and capacity. */
function modelOf(harness: Harness, name: string) {
  const scaleSet = scaleSetOf(harness, name);
  return {
    properties: harness.sim.running.world.compute.getScaleSetModel(scaleSet.id),
    tags: scaleSet.tags,
    capacity: scaleSet.capacity,
    instances: harness.sim.running.world.compute.listInstances(scaleSet.id).map((instance) => instance.name),
  };
}

function versionsOf(harness: Harness, result: PoolRefreshResult) {
  assert.ok(result.version, `the result names its version: ${result.reason}`);
  const definitionId = result.version.id.replace(/\/versions\/[^/]+$/i, '');
  return harness.sim.running.world.compute.listImageVersions(definitionId);
}

function nodesOfPool(harness: Harness, pool: string) {
  return harness.sim.running.world
    .cluster('prod')
    .world.store.list('nodes')
    .filter((node) => node.metadata.name.startsWith(pool));
}

/** GET on the simulator's admin API (its CA, its admin token). */
function adminGet(harness: Harness, path: string): Promise<unknown> {
  const running = harness.sim.running;
  return new Promise((resolve, reject) => {
    const call = request(
      new URL(path, running.armEndpoint),
      { ca: running.caPem, headers: { authorization: `Bearer ${running.tokens.admin}` } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      },
    );
    call.on('error', reject);
    call.end();
  });
}

async function refreshPool2(harness: Harness, id: string): Promise<PoolRefreshResult> {
  const status = await harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool: POOL2, trigger: 'test' },
    id,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as PoolRefreshResult;
}

void describe('canary gate on the simulator', { concurrency: false }, () => {
  void it('a canary that joins publishes the version; every node of the pool is labelled', async () => {
    const harness = await startHarness({
      settings: (cluster) => {
        cluster['promotion'] = CANARY_SETTINGS;
      },
    });
    try {
      const before = modelOf(harness, POOL2);
      const result = await refreshPool2(harness, 'canary-pass');
      assert.equal(result.outcome, 'refreshed', result.reason);
      assert.equal(result.canary?.verdict, 'passed', JSON.stringify(result.canary));
      assert.equal(result.canary.instances.length, 1);
      // The pool's first refresh: its model still holds the bootstrap, so the canary ran in a scale set
      // of its own, deleted after the verdict (docs/design.md#canary); the pool was never scaled out.
      assert.equal(result.canary.instancesNow, 'removed');
      assert.equal(result.canary.keptSize, undefined);
      // Joined, Ready, soaked: the soak alone is 5 simulated minutes.
      assert.ok(result.canary.seconds >= 300, `canary window ${result.canary.seconds} s`);

      const [version] = versionsOf(harness, result);
      assert.equal(version?.excludeFromLatest, false, 'published to latest after the canary passed');
      assert.equal(version.tags[VERSION_VERDICT_TAG_KEYS.rejected], undefined);
      const after = scaleSetOf(harness, POOL2);
      assert.equal(after.capacity, before.capacity, 'the pool keeps its size');
      assert.match(String(after.imageReference['id']), /\/images\/[^/]+$/i, 'model on the definition');
      assert.deepEqual(
        Object.keys(after.tags).filter((key) => key.startsWith('vmss-prototype.canary-')),
        [],
        'no canary record left in the tags',
      );
      const canaryScaleSets = harness.sim.running.world.compute
        .listScaleSets()
        .filter((entry) => entry.tags['vmss-prototype.purpose'] === 'canary-scale-set');
      assert.deepEqual(canaryScaleSets, [], 'the canary scale set is gone');

      // Every node of the pool carries its generation: unknown, as they were built from the marketplace
      // image (the canary's node left with its scale set).
      const nodes = nodesOfPool(harness, POOL2);
      assert.equal(nodes.length, before.instances.length);
      const labels = Object.fromEntries(
        nodes.map((node) => [node.metadata.name, node.metadata.labels?.[IMAGE_VERSION_LABEL]]),
      );
      assert.deepEqual(
        Object.values(labels).filter((label) => label !== 'unknown'),
        [],
        JSON.stringify(labels),
      );
      assert.equal(result.generations?.labelled, nodes.length);
      assert.equal(result.freshness?.basis, 'donor-patch');

      // The clone built from the canary-published version has an identity of its own.
      const identity = harness.sim.running.world.identity();
      assert.deepEqual(identity.violations, [], 'no duplicate machine-id, hostname or SSH host keys');
      const served = (await adminGet(harness, '/_sim/identity')) as { violations: unknown[] };
      assert.deepEqual(served.violations, [], 'GET /_sim/identity says the same');
    } finally {
      await harness.stop();
    }
  });

  void it('a canary that never joins: model byte-for-byte as before, version rejected, hidden, not rebuilt', async () => {
    const harness = await startHarness({
      scenario: (scenario) => {
        const pool = scenario.clusters[0]?.scaleSets.find((entry) => entry['name'] === POOL2);
        assert.ok(pool);
        pool['galleryImagesNeverJoin'] = true;
      },
      settings: (cluster) => {
        cluster['promotion'] = CANARY_SETTINGS;
      },
    });
    try {
      const before = modelOf(harness, POOL2);
      const result = await refreshPool2(harness, 'canary-never-joins');
      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      assert.equal(result.canary?.verdict, 'rejected');
      assert.match(result.canary.reason ?? '', /regist|join|node/i, result.canary.reason);
      assert.equal(result.canary.instancesNow, 'deleted');
      const after = modelOf(harness, POOL2);
      assert.deepEqual(after, before, 'the model, its tags, capacity and instances exactly as before');

      const [version] = versionsOf(harness, result);
      assert.equal(version?.excludeFromLatest, true, 'the rejected version stays hidden');
      assert.match(version.tags[VERSION_VERDICT_TAG_KEYS.rejected] ?? '', /canary/);

      // Auto mode does not build from the same donor and patch again: the donor is refused by the
      // rejected-build rule (another node of the pool may be tried: it is another build). Two hours on,
      // the donor restored after its capture has been Ready long enough to be a candidate again.
      harness.sim.running.world.clock.advanceBy(2 * 3600);
      const again = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test' },
        'canary-after-rejection',
      );
      assert.equal(again.runtimeStatus, 'Completed', JSON.stringify(again.failure));
      const pool2 = (again.output as ClusterRefreshResult).pools.find((pool) => pool.pool === POOL2);
      assert.ok(pool2);
      const verdict = pool2.plan?.verdicts.find((entry) => entry.node === result.donor);
      assert.equal(verdict?.code, 'rejected-build', JSON.stringify(verdict));
      assert.match(verdict.detail, new RegExp(`version ${result.version?.versionName ?? ''}`));
      assert.notEqual(pool2.donor, result.donor, 'never the same donor and patch again');
      const builds = versionsOf(harness, result).map((entry) => entry.tags['vmss-prototype.source-node']);
      assert.equal(builds.filter((node) => node === result.donor).length, 1, 'one build from that donor');
      // Whatever the second run did, the broken image never reached the model.
      assert.deepEqual(modelOf(harness, POOL2).properties, before.properties);
    } finally {
      await harness.stop();
    }
  });

  void it('a failing check pod rejects the version', async () => {
    const harness = await startHarness({
      settings: (cluster) => {
        cluster['promotion'] = {
          canary: {
            ...CANARY_SETTINGS.canary,
            checkPod: {
              image: `registry.k8s.io/e2e-test-images/busybox:1.36.1-1@sha256:${'a'.repeat(64)}`,
              command: ['sh', '-c', 'test -e /dev/kvm || exit 3'],
              timeout: '5m',
            },
          },
        };
      },
    });
    try {
      const before = modelOf(harness, POOL2);
      const result = await refreshPool2(harness, 'canary-check-fails');
      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      assert.match(result.canary?.reason ?? '', /check pod/i, result.canary?.reason);
      assert.match(result.canary?.reason ?? '', /exit code 3/, result.canary?.reason);
      assert.deepEqual(modelOf(harness, POOL2), before);
      const [version] = versionsOf(harness, result);
      assert.equal(version?.excludeFromLatest, true);
      assert.ok(version.tags[VERSION_VERDICT_TAG_KEYS.rejected]);
      const pods = harness.sim.running.world
        .cluster('prod')
        .world.store.list('pods')
        .filter((pod) => pod.metadata.name.startsWith('vmssp-check-'));
      assert.deepEqual(
        pods.map((pod) => pod.metadata.name),
        [],
        'the check pod is gone',
      );
    } finally {
      await harness.stop();
    }
  });
});
