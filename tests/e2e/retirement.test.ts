/**
 * Retirement of older generations end to end on the simulator: a 6-node pool on 3 generations
 * (2 nodes from the marketplace image, `unknown`; 2 from the first refresh's version; 2 from the second's,
 * the newest), a budget of 1 node per window, surge on. Run in successive windows as the timer would, the
 * pool converges to the newest generation one node per window, never with fewer than 6 Ready nodes; a
 * node whose drain a PodDisruptionBudget refuses is given back each time (uncordoned, nothing of ours
 * left, its surge instance deleted) and reported; a `do-not-retire` node is kept and never touched. A dry
 * run lists every node and changes nothing.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { describe, it } from 'node:test';

import { applyNodeGenerations } from '../../shared/application/generations.js';
import { ORCHESTRATION, retireInstanceId } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type {
  PoolRetirementResult,
  RetirementNodeLine,
} from '../../shared/application/retirement-contracts.js';
import { IMAGE_VERSION_LABEL } from '../../shared/domain/generations.js';
import { DO_NOT_RETIRE_ANNOTATION } from '../../shared/domain/retirement.js';
import type { Harness } from './harness.js';
import { assertIdentityClean, nodeOf, POOL2, startHarness, withUndrainablePod } from './harness.js';

const CLUSTER = 'prod';
const OUR_PREFIX = 'vmss-prototype.io/';
/** The window opens at 02:00 UTC every day for 4 hours. */
const WINDOW_HOUR = 2;

interface KubeNode {
  readonly metadata: {
    readonly name: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly spec?: { readonly unschedulable?: boolean; readonly taints?: readonly { key: string }[] };
  readonly status?: { readonly conditions?: readonly { type: string; status: string }[] };
}

function storeOf(harness: Harness) {
  return harness.sim.running.world.cluster(CLUSTER).world.store;
}

function poolNodes(harness: Harness): KubeNode[] {
  return (storeOf(harness).list('nodes') as unknown as KubeNode[]).filter((node) =>
    node.metadata.name.startsWith(POOL2),
  );
}

/** Leases but the kubelets' heartbeats: the pool lease and its lasting records. */
function ourLeases(harness: Harness) {
  return storeOf(harness)
    .list('leases')
    .filter((lease) => lease.metadata.namespace !== 'kube-node-lease')
    .map((lease) => ({
      name: lease.metadata.name,
      annotations: lease.metadata.annotations,
      spec: lease['spec'],
    }));
}

function isReady(node: KubeNode): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function scaleSet(harness: Harness) {
  const found = harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
  assert.ok(found, `scale set ${POOL2}`);
  return found;
}

function generationCounts(harness: Harness): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const node of poolNodes(harness)) {
    const generation = node.metadata.labels?.[IMAGE_VERSION_LABEL] ?? '(none)';
    counts[generation] = (counts[generation] ?? 0) + 1;
  }
  return counts;
}

/** Waits (on the simulator's own clock, by events) until `count` nodes of the pool are Ready. */
async function untilReady(harness: Harness, count: number): Promise<void> {
  for (let attempt = 0; attempt < 2_000; attempt++) {
    if (poolNodes(harness).filter(isReady).length >= count) return;
    harness.sim.running.world.clock.advanceBy(30);
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail(`the pool never had ${count} Ready nodes: ${JSON.stringify(generationCounts(harness))}`);
}

async function refresh(harness: Harness, id: string, node: string): Promise<PoolRefreshResult> {
  const status = await harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: CLUSTER, pool: POOL2, trigger: 'test', node },
    id,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  const result = status.output as PoolRefreshResult;
  assert.equal(result.outcome, 'refreshed', result.reason);
  return result;
}

/**
 * Watches the pool's nodes through the simulator's store while a run goes: the fewest Ready (and Ready and
 * schedulable) nodes seen at any change, and every change to the nodes named in `watched`.
 */
function watchPool(harness: Harness, watched: readonly string[]) {
  const count = () => {
    const nodes = poolNodes(harness);
    return {
      ready: nodes.filter(isReady).length,
      schedulable: nodes.filter((node) => isReady(node) && node.spec?.unschedulable !== true).length,
    };
  };
  const first = count();
  const seen = { minReady: first.ready, minSchedulable: first.schedulable, touched: [] as string[] };
  const stop = storeOf(harness).subscribe((event) => {
    if (event.resource !== 'nodes') return;
    const now = count();
    seen.minReady = Math.min(seen.minReady, now.ready);
    seen.minSchedulable = Math.min(seen.minSchedulable, now.schedulable);
    const node = event.object as unknown as KubeNode;
    if (!watched.includes(node.metadata.name)) return;
    const ours = Object.keys(node.metadata.annotations ?? {}).filter(
      (key) => key.startsWith(OUR_PREFIX) && key !== DO_NOT_RETIRE_ANNOTATION,
    );
    if (event.type === 'DELETED' || node.spec?.unschedulable === true || ours.length > 0) {
      seen.touched.push(`${node.metadata.name} ${event.type} ${ours.join(',')}`);
    }
  });
  return { seen, stop };
}

async function retire(
  harness: Harness,
  options: { readonly dryRun?: boolean; readonly suffix?: string } = {},
): Promise<PoolRetirementResult> {
  const id =
    options.dryRun === true
      ? retireInstanceId(CLUSTER, POOL2, options.suffix ?? 'dry')
      : retireInstanceId(CLUSTER, POOL2);
  const status = await harness.run(
    ORCHESTRATION.retirePool,
    {
      cluster: CLUSTER,
      pool: POOL2,
      trigger: 'timer',
      ...(options.dryRun === true ? { dryRun: true } : {}),
    },
    id,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as PoolRetirementResult;
}

function lineOf(result: PoolRetirementResult, node: string): RetirementNodeLine {
  const line = result.nodes.find((entry) => entry.node === node);
  assert.ok(line, `${node} in ${JSON.stringify(result.nodes)}`);
  return line;
}

/** The next `hour`:`minute` UTC strictly after `nowMs`, in ms. */
function nextTimeOfDay(nowMs: number, hour: number, minute: number): number {
  const at = new Date(nowMs);
  at.setUTCHours(hour, minute, 0, 0);
  while (at.getTime() <= nowMs) at.setUTCDate(at.getUTCDate() + 1);
  return at.getTime();
}

/** Ten minutes into the next window. */
function nextWindowStart(nowMs: number): number {
  return nextTimeOfDay(nowMs, WINDOW_HOUR, 10);
}

/**
 * The next moment an hour after the window closed. Computed forward from now: the scaled clock's
 * setup can end anywhere in the day (inside the window under load), and the clock never goes back.
 */
function nextClosedTime(nowMs: number): number {
  return nextTimeOfDay(nowMs, WINDOW_HOUR + 5, 0);
}

void describe('retirement of older generations on the simulator', { concurrency: false }, () => {
  void it('converges one node per window, never below capacity; a PDB-blocked node given back, a kept node left alone', async () => {
    const blocked = nodeOf(POOL2, 1);
    const kept = nodeOf(POOL2, 0);
    const harness = await startHarness({
      scenario: (scenario) => {
        const cluster = scenario.clusters[0];
        assert.ok(cluster);
        const pool = cluster.scaleSets.find((entry) => entry['name'] === POOL2);
        assert.ok(pool);
        // Two marketplace nodes to start with; both long Ready (possible donors).
        pool['capacity'] = 2;
        delete pool['nodes'];
        cluster.workloads = cluster.workloads.filter((workload) => workload['name'] !== 'debug-shell');
        // A one-replica Deployment on `blocked` whose PDB never allows an eviction.
        withUndrainablePod(blocked)(scenario);
      },
      settings: (cluster) => {
        cluster['promotion'] = {
          canary: { enabled: false },
          retirement: {
            enabled: true,
            keepGenerations: 1,
            budget: 1,
            windows: [{ schedule: `0 0 ${WINDOW_HOUR} * * *`, duration: '4h' }],
            surge: true,
            drainTimeout: '2m',
          },
        };
      },
    });
    const world = harness.sim.running.world;
    try {
      // --- The world: 3 generations, 2 nodes each. ---
      const first = await refresh(harness, 'seed-v1', kept);
      const v1 = first.version?.versionName ?? '';
      world.compute.scaleOut(scaleSet(harness).id, 2);
      await untilReady(harness, 4);
      world.clock.advanceBy(2 * 3600);
      const second = await refresh(harness, 'seed-v2', nodeOf(POOL2, 2));
      const v2 = second.version?.versionName ?? '';
      assert.notEqual(v1, v2);
      world.compute.scaleOut(scaleSet(harness).id, 2);
      await untilReady(harness, 6);
      // The product's labelling (run at the end of every refresh) for the two nodes that joined since.
      await applyNodeGenerations(
        await harness.composition.dependencies.cluster(CLUSTER),
        POOL2,
        world.clock.now(),
      );
      assert.deepEqual(generationCounts(harness), { unknown: 2, [v1]: 2, [v2]: 2 });
      assert.equal(scaleSet(harness).capacity, 6);
      storeOf(harness).mutate('nodes', undefined, kept, (node) => {
        node.metadata.annotations = { ...node.metadata.annotations, [DO_NOT_RETIRE_ANNOTATION]: 'true' };
      });
      const original = new Set(poolNodes(harness).map((node) => node.metadata.name));

      // Outside a window nothing happens.
      world.clock.advanceTo(nextClosedTime(world.clock.nowMs()));
      const closed = await retire(harness);
      assert.equal(closed.outcome, 'closed', closed.reason);
      assert.ok(closed.nextWindowAt, 'names the next window');

      const summary: {
        window: string;
        retired: string[];
        givenBack: string[];
        minReady: number;
        minReadySchedulable: number;
        generations: Record<string, number>;
      }[] = [];
      const retiredNodes: string[] = [];
      for (let index = 0; index < 3; index++) {
        world.clock.advanceTo(nextWindowStart(world.clock.nowMs()));
        const before = new Set(poolNodes(harness).map((node) => node.metadata.name));

        if (index === 0) {
          // A dry run lists every node with its outcome and changes nothing.
          const leaseBefore = ourLeases(harness);
          const dry = await retire(harness, { dryRun: true });
          assert.equal(dry.outcome, 'planned', dry.reason);
          assert.deepEqual(dry.nodes.map((line) => line.node).sort(), [...before].sort());
          assert.equal(lineOf(dry, kept).outcome, 'kept');
          assert.match(lineOf(dry, kept).detail, /do-not-retire/);
          assert.equal(lineOf(dry, blocked).outcome, 'would-retire', JSON.stringify(dry.nodes));
          assert.equal(dry.nodes.filter((line) => line.outcome === 'would-retire').length, 1);
          assert.equal(dry.nodes.filter((line) => line.outcome === 'waiting').length, 2);
          assert.equal(dry.nodes.filter((line) => line.outcome === 'stays').length, 2);
          assert.deepEqual(
            new Set(poolNodes(harness).map((node) => node.metadata.name)),
            before,
            'a dry run adds and removes no node',
          );
          assert.equal(scaleSet(harness).capacity, 6);
          assert.deepEqual(ourLeases(harness), leaseBefore, 'a dry run writes no lease');
        }

        const watch = watchPool(harness, [kept]);
        let result: PoolRetirementResult;
        try {
          result = await retire(harness);
        } finally {
          watch.stop();
        }
        const retired = result.nodes.filter((line) => line.outcome === 'retired').map((line) => line.node);
        const givenBack = result.nodes
          .filter((line) => line.outcome === 'given-back')
          .map((line) => line.node);
        summary.push({
          window: result.window?.openedAt ?? '(none)',
          retired,
          givenBack,
          minReady: watch.seen.minReady,
          minReadySchedulable: watch.seen.minSchedulable,
          generations: generationCounts(harness),
        });
        const context = JSON.stringify({ result, summary: summary.at(-1) });

        // Budget 1: at most one node per window.
        assert.ok(retired.length <= 1, context);
        retiredNodes.push(...retired);
        assert.ok(result.window, context);
        assert.equal(result.budget?.allowed, 1);
        // Never fewer than 6 Ready nodes, before, during and after the run.
        assert.ok(watch.seen.minReady >= 6, context);
        assert.ok(watch.seen.minSchedulable >= 6, context);
        assert.equal(poolNodes(harness).filter(isReady).length, 6, context);
        assert.equal(scaleSet(harness).capacity, 6, context);
        // The kept node: reported, never cordoned, marked or deleted.
        assert.equal(lineOf(result, kept).outcome, 'kept', context);
        assert.deepEqual(watch.seen.touched, [], context);
        // The blocked node: given back every window, the drain named, left as it was.
        const blockedLine = lineOf(result, blocked);
        assert.equal(blockedLine.outcome, 'given-back', context);
        assert.match(blockedLine.detail, /drain did not finish/, context);
        const blockedNode = poolNodes(harness).find((node) => node.metadata.name === blocked);
        assert.ok(blockedNode, context);
        assert.notEqual(blockedNode.spec?.unschedulable, true, 'uncordoned');
        assert.deepEqual(
          Object.keys(blockedNode.metadata.annotations ?? {}).filter((key) => key.startsWith(OUR_PREFIX)),
          [],
          'none of our annotations left',
        );
        assert.ok(isReady(blockedNode));

        // A second run in the same window retires nothing: the lease counts the window's retirement.
        if (retired.length > 0) {
          const again = await retire(harness);
          assert.equal(again.outcome, 'nothing-due', again.reason);
          assert.equal(again.budget?.usedInWindow, 1);
          assert.ok(
            again.nodes.some((line) => line.outcome === 'waiting'),
            JSON.stringify(again.nodes),
          );
          assert.equal(again.nodes.filter((line) => line.outcome === 'retired').length, 0);
        }
      }
      console.log(JSON.stringify({ retirementWindows: summary }, null, 2));
      await mkdir('test-output', { recursive: true });
      await writeFile(
        'test-output/retirement-e2e.json',
        `${JSON.stringify({ v1, v2, windows: summary }, null, 2)}\n`,
      );

      // Converged: every node but the kept and the blocked one on the newest generation.
      const nodes = poolNodes(harness);
      assert.equal(nodes.length, 6);
      assert.equal(scaleSet(harness).capacity, 6);
      assert.equal(world.compute.listInstances(scaleSet(harness).id).length, 6);
      for (const node of nodes) {
        const generation = node.metadata.labels?.[IMAGE_VERSION_LABEL];
        if (node.metadata.name === kept || node.metadata.name === blocked) {
          assert.equal(generation, 'unknown', node.metadata.name);
        } else {
          assert.equal(generation, v2, node.metadata.name);
        }
      }
      // The two older nodes that could go went, one per window; their replacements are new nodes.
      assert.deepEqual(retiredNodes.sort(), [nodeOf(POOL2, 2), nodeOf(POOL2, 3)].sort());
      const added = nodes.filter((node) => !original.has(node.metadata.name));
      assert.equal(added.length, 2);
      // New nodes built from the newest version have identities of their own.
      assertIdentityClean(harness, 'the new nodes built from the newest version');
    } finally {
      await harness.stop();
    }
  });
});
