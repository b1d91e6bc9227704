/**
 * The autoscaler during a canary, end to end on the simulator: while the model is pinned to the version
 * under test, an outside scale-out of two (the cluster-autoscaler's, or an admin's `az vmss scale`) boots
 * the untested image. The canary's check pod fails: the version is rejected and the model restored, and
 * the two nodes are named at once — in the run's reason, the version's verdict, `status` and the status
 * page (while they are replaced), and a Warning Event on each — and replaced under retirement's rules
 * (`canary.othersAfterFail: replace`, the default): a replacement from the restored model first, one at a
 * time, never more than the budget of one node out, the pool ending at the size the autoscaler asked.
 * With `othersAfterFail: keep` they are named the same way and stay, `status` naming them after the run.
 * The pool is a kubeadm pool, whose canary is added to its own scale set by the pin (a boot-from-image
 * pool's first refresh tests in a temporary scale set of its own and never pins the pool's model:
 * docs/design.md#canary; its later refreshes pin it as here).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ActivityHandler } from 'durable-functions';

import { render } from '../../cli/output.js';
import { createDurableRunner, createMemoryStore } from '../../cli/runner/index.js';
import { statusPageOf } from '../../cli/status-page.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { BUILT_FROM_REJECTED_REASON } from '../../shared/application/canary-others.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { readPoolStatus } from '../../shared/application/pool-status.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { VERSION_VERDICT_TAG_KEYS } from '../../shared/domain/version-verdict.js';
import type { Harness } from './harness.js';
import { assertIdentityClean, POOL2, startHarness, withKubeadmPool } from './harness.js';

const CHECK_POD = {
  image: `registry.k8s.io/e2e-test-images/busybox:1.36.1-1@sha256:${'a'.repeat(64)}`,
  command: ['sh', '-c', 'test -e /dev/kvm || exit 3'],
  timeout: '5m',
};

/** The outside scale-out while the model is pinned: two instances, as the autoscaler adds for pending pods. */
const OUTSIDE = 2;
/** promotion.retirement.budget: never more than this many of the pool's nodes out at once. */
const BUDGET = 1;

function scaleSetOf(harness: Harness) {
  const scaleSet = harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
  assert.ok(scaleSet, `scale set ${POOL2}`);
  return scaleSet;
}

interface PoolNodeSample {
  readonly cordoned: readonly string[];
  readonly readyInService: number;
}

/** The pool's nodes now: which are cordoned (out), how many Ready and schedulable (in service). */
function sampleNodes(harness: Harness): PoolNodeSample {
  const nodes = harness.sim.running.world
    .cluster('prod')
    .world.store.list('nodes')
    .filter((node) => node.metadata.name.startsWith(POOL2));
  const ready = (node: (typeof nodes)[number]): boolean =>
    (
      (node['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []
    ).some((condition) => condition.type === 'Ready' && condition.status === 'True');
  const cordoned = (node: (typeof nodes)[number]): boolean =>
    (node['spec'] as { unschedulable?: boolean } | undefined)?.unschedulable === true;
  return {
    cordoned: nodes.filter(cordoned).map((node) => node.metadata.name),
    readyInService: nodes.filter((node) => ready(node) && !cordoned(node)).length,
  };
}

/** POOL2's refresh on the local runner: `before` called ahead of each activity, `after` once it returned. */
async function refreshPool2(
  harness: Harness,
  instanceId: string,
  before: (name: string) => void | Promise<void>,
  after: (name: string) => void = () => undefined,
) {
  const registry = durableRegistry(harness.composition.dependencies);
  const activities = Object.fromEntries(
    Object.entries(registry.activities).map(([name, handler]) => [
      name,
      (async (input: unknown, context: Parameters<ActivityHandler>[1]): Promise<unknown> => {
        await before(name);
        const result = await handler(input, context);
        after(name);
        return result;
      }) as ActivityHandler,
    ]),
  );
  const runner = createDurableRunner({
    ...registry,
    activities,
    clock: harness.sim.clock,
    store: createMemoryStore(),
    maxConcurrentActivities: 8,
  });
  return runner.startOrchestration(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool: POOL2, trigger: 'test' },
    instanceId,
  );
}

void describe('the autoscaler during a rejected canary', { concurrency: false }, () => {
  void it('names the nodes it built from the version and replaces them within the budget', async () => {
    const harness = await startHarness({
      scenario: withKubeadmPool(POOL2),
      settings: (cluster) => {
        cluster['promotion'] = {
          canary: { soak: '5m', deadline: '20m', checkPod: CHECK_POD },
          retirement: { budget: BUDGET },
        };
      },
    });
    try {
      const world = harness.sim.running.world;
      const scaleSetId = scaleSetOf(harness).id;
      const capacityBefore = scaleSetOf(harness).capacity;
      const handle = await harness.composition.dependencies.cluster('prod');

      let outside: string[] = [];
      let afterRejection = false;
      let atRejection: PoolNodeSample = { cordoned: [], readyInService: 0 };
      const samples: PoolNodeSample[] = [];
      let seen: { text: string; page: string } | undefined;
      const before = async (name: string): Promise<void> => {
        // Right after the pin: the model names the version under test, and the autoscaler scales out.
        if (name === 'recordCanaryInstances' && outside.length === 0) {
          outside = world.compute
            .scaleOut(scaleSetId, OUTSIDE)
            .map((instance) => instance.computerName.toLowerCase());
        }
        // The model is back and the canary gone: from here on the pool's nodes are sampled after each step.
        if (name === 'tellOthersFromVersion' && !afterRejection) {
          afterRejection = true;
          atRejection = sampleNodes(harness);
        }
        // The first replacement is asked for: what `status` and the page say while the nodes are there.
        if (name === 'startRetirementSurge' && seen === undefined) {
          const now = new Date(harness.sim.clock.now());
          const status = await readPoolStatus(handle, POOL2, now);
          const result = {
            kind: 'status',
            clusters: [{ cluster: 'prod', pools: [status], unreadable: [] }],
          } as const;
          seen = { text: render(result), page: statusPageOf(result, now) };
        }
      };
      const status = await refreshPool2(harness, 'canary-others', before, () => {
        if (afterRejection) samples.push(sampleNodes(harness));
      });
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      assert.equal(outside.length, OUTSIDE, 'the autoscaler scaled out while the model was pinned');
      const version = result.version?.versionName ?? '';

      // Named at once: in the run's reason and its canary report…
      for (const node of outside) assert.ok(result.reason.includes(node), `${node} in: ${result.reason}`);
      assert.deepEqual([...(result.canary?.othersFromVersionNodes ?? [])].sort(), [...outside].sort());
      // …in the version's verdict, which the history of `status` and the page show once they are gone…
      const definitionId = result.version?.id.replace(/\/versions\/[^/]+$/i, '') ?? '';
      const tagged = world.compute.listImageVersions(definitionId).find((entry) => entry.name === version);
      for (const node of outside) {
        assert.ok(
          tagged?.tags[VERSION_VERDICT_TAG_KEYS.rejected]?.includes(node),
          JSON.stringify(tagged?.tags),
        );
      }
      // …in `status` and on the status page while they are replaced…
      assert.ok(seen, 'a replacement was asked for');
      for (const node of outside) {
        assert.match(seen.text, new RegExp(`built from rejected version ${version}: .*${node}`), seen.text);
        assert.match(seen.page, new RegExp(`${node}[^]*?rejected v${version.replaceAll('.', '\\.')}`));
      }
      // …and in a Warning Event on each node.
      const events = world
        .cluster('prod')
        .world.store.list('events', 'default')
        .filter((event) => event['reason'] === BUILT_FROM_REJECTED_REASON);
      assert.deepEqual(
        events.map((event) => (event['involvedObject'] as { name?: string }).name).sort(),
        [...outside].sort(),
      );
      for (const event of events) {
        assert.equal(event['type'], 'Warning');
        assert.match(String(event['message']), new RegExp(`image version ${version}.*rejected`));
      }

      // Replaced as soon as the model was back: none of the version's instances is left, the pool ends at the
      // size the autoscaler asked for, every node boots the restored model.
      assert.deepEqual([...(result.canary?.othersAfterFail?.replaced ?? [])].sort(), [...outside].sort());
      const instances = world.compute.listInstances(scaleSetId);
      const fromVersion = instances.filter((instance) =>
        JSON.stringify(instance.imageReference).toLowerCase().includes(`/versions/${version}`),
      );
      assert.deepEqual(
        fromVersion.map((instance) => instance.computerName),
        [],
        'no instance of the rejected version is left',
      );
      for (const node of outside) {
        assert.ok(
          !instances.some((instance) => instance.computerName.toLowerCase() === node),
          `${node} is gone`,
        );
      }
      assert.equal(scaleSetOf(harness).capacity, capacityBefore + OUTSIDE, 'the autoscaler’s demand stays');

      // Under the budget: never more than one node out at once, never fewer in service than at the rejection.
      assert.ok(samples.length > 0);
      // (A node an administrator cordoned before is not one the run took out.)
      const out = samples.map(
        (sample) => sample.cordoned.filter((node) => !atRejection.cordoned.includes(node)).length,
      );
      const mostOut = Math.max(...out);
      const fewestInService = Math.min(...samples.map((sample) => sample.readyInService));
      assert.equal(mostOut, BUDGET, `one node out at a time (budget ${BUDGET}), saw ${mostOut}`);
      assert.ok(
        fewestInService >= atRejection.readyInService,
        `in service never below ${atRejection.readyInService}, saw ${fewestInService}`,
      );
      assertIdentityClean(harness, 'after the replacement');
    } finally {
      await harness.stop();
    }
  });
  void it('othersAfterFail: keep names them the same way and leaves them for a retirement', async () => {
    const harness = await startHarness({
      scenario: withKubeadmPool(POOL2),
      settings: (cluster) => {
        cluster['promotion'] = {
          canary: { soak: '5m', deadline: '20m', checkPod: CHECK_POD, othersAfterFail: 'keep' },
        };
      },
    });
    try {
      const world = harness.sim.running.world;
      const scaleSetId = scaleSetOf(harness).id;
      let outside: string[] = [];
      const run = await refreshPool2(harness, 'canary-others-keep', (name) => {
        if (name === 'recordCanaryInstances' && outside.length === 0) {
          outside = world.compute
            .scaleOut(scaleSetId, OUTSIDE)
            .map((instance) => instance.computerName.toLowerCase());
        }
      });
      assert.equal(run.runtimeStatus, 'Completed', JSON.stringify(run.failure));
      const result = run.output as PoolRefreshResult;
      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      const version = result.version?.versionName ?? '';
      for (const node of outside) assert.ok(result.reason.includes(node), `${node} in: ${result.reason}`);
      assert.match(result.reason, /left in place \(canary\.othersAfterFail: keep\)/);
      assert.deepEqual(result.canary?.othersAfterFail?.replaced, []);
      const names = world.compute.listInstances(scaleSetId).map((i) => i.computerName.toLowerCase());
      for (const node of outside) assert.ok(names.includes(node), `${node} stays`);
      const events = world
        .cluster('prod')
        .world.store.list('events', 'default')
        .filter((event) => event['reason'] === BUILT_FROM_REJECTED_REASON);
      assert.equal(events.length, OUTSIDE);
      // After the run `status` still names them, with the command that replaces them.
      const handle = await harness.composition.dependencies.cluster('prod');
      const now = new Date(harness.sim.clock.now());
      const status = await readPoolStatus(handle, POOL2, now);
      const text = render({
        kind: 'status',
        clusters: [{ cluster: 'prod', pools: [status], unreadable: [] }],
      });
      assert.match(text, new RegExp(`2 node\\(s\\) built from rejected version ${version}: `), text);
      assert.match(text, new RegExp(`retire --pool ${POOL2} --generation ${version}`), text);
    } finally {
      await harness.stop();
    }
  });
});
