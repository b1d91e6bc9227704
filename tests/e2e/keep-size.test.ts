/**
 * `canary.afterPass: keep-size` over many refreshes (docs/retirement.md): a fixed-size pool with the canary
 * on is refreshed again and again, each refresh building a new version; after every one the passed canary
 * stays and one node of the oldest generation is retired in its place, so the scale set's capacity and the
 * pool's node count stay what they were, and nothing of ours is left on a node. The same with
 * `afterPass: keep` grows the pool by one node per refresh: the contrast that shows why keep-size exists.
 * The first refresh of the sample pool tests in a canary scale set of its own (its model still holds the
 * bootstrap: docs/design.md#canary), which goes after the verdict; the later ones pin the pool's model.
 *
 * N: KEEP_SIZE_REFRESHES (default 3). Writes the per-refresh figures to test-output/keep-size-e2e.json.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { IMAGE_VERSION_LABEL } from '../../shared/domain/generations.js';
import type { Harness } from './harness.js';
import { assertIdentityClean, POOL2, startHarness } from './harness.js';

const CLUSTER = 'prod';
const OUR_PREFIX = 'vmss-prototype.';
const REFRESHES = Number.parseInt(process.env['KEEP_SIZE_REFRESHES'] ?? '3', 10);
const KEEP_REFRESHES = 2;

interface KubeNode {
  readonly metadata: {
    readonly name: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly spec?: { readonly unschedulable?: boolean; readonly taints?: readonly { key: string }[] };
  readonly status?: { readonly conditions?: readonly { type: string; status: string }[] };
}

interface RefreshLine {
  readonly refresh: number;
  readonly version: string;
  readonly donor: string;
  readonly capacityBefore: number;
  readonly capacityAfter: number;
  readonly nodesBefore: number;
  readonly nodesAfter: number;
  readonly canary: string;
  readonly retired: readonly string[];
  readonly keptSizeDetail: string;
  readonly generations: Record<string, number>;
  readonly simulatedSeconds: number;
  readonly wallMs: number;
}

function poolNodes(harness: Harness): KubeNode[] {
  return (
    harness.sim.running.world.cluster(CLUSTER).world.store.list('nodes') as unknown as KubeNode[]
  ).filter((node) => node.metadata.name.startsWith(POOL2));
}

function isReady(node: KubeNode): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function capacity(harness: Harness): number {
  const found = harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
  assert.ok(found, `scale set ${POOL2}`);
  return found.capacity;
}

function generationCounts(harness: Harness): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const node of poolNodes(harness)) {
    const generation = node.metadata.labels?.[IMAGE_VERSION_LABEL] ?? '(none)';
    counts[generation] = (counts[generation] ?? 0) + 1;
  }
  return counts;
}

/** Ready pool nodes that carry something of a run: cordoned, our taint or one of our annotations. */
function leftovers(harness: Harness): string[] {
  return poolNodes(harness).flatMap((node) => {
    const ours = [
      ...(node.spec?.unschedulable === true ? ['cordoned'] : []),
      ...(node.spec?.taints ?? []).filter((taint) => taint.key.startsWith(OUR_PREFIX)).map((t) => t.key),
      ...Object.keys(node.metadata.annotations ?? {}).filter((key) => key.startsWith(OUR_PREFIX)),
    ];
    return ours.length === 0 ? [] : [`${node.metadata.name}: ${ours.join(', ')}`];
  });
}

/**
 * The donor of the next refresh: a Ready node of the newest generation (the last canary), so each refresh
 * captures a node that differs from the model and builds a new version; the first one takes any Ready node.
 */
function nextDonor(harness: Harness, newest: string | undefined): string {
  const ready = poolNodes(harness)
    .filter(isReady)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const donor =
    ready.find((node) => newest !== undefined && node.metadata.labels?.[IMAGE_VERSION_LABEL] === newest) ??
    ready.at(-1);
  assert.ok(donor, `a Ready node in ${POOL2}`);
  return donor.metadata.name;
}

async function refreshAll(
  harness: Harness,
  count: number,
  label: string,
  check: (line: RefreshLine, result: PoolRefreshResult, start: number) => void,
): Promise<RefreshLine[]> {
  const world = harness.sim.running.world;
  const lines: RefreshLine[] = [];
  const start = poolNodes(harness).length;
  assert.equal(capacity(harness), start, 'every instance of the pool is a node to start with');
  let newest: string | undefined;
  for (let index = 1; index <= count; index++) {
    // Let the last canary settle as a normal node (and the patch window move on).
    world.clock.advanceBy(2 * 3600);
    const donor = nextDonor(harness, newest);
    const capacityBefore = capacity(harness);
    const nodesBefore = poolNodes(harness).length;
    const simulatedStart = world.clock.nowMs();
    const wallStart = performance.now();
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: CLUSTER, pool: POOL2, trigger: 'test', node: donor },
      `${label}-${index}`,
    );
    const wallMs = Math.round(performance.now() - wallStart);
    assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed', `refresh ${index}: ${result.reason}`);
    assert.equal(result.canary?.verdict, 'passed', JSON.stringify(result.canary));
    const version = result.version?.versionName ?? '';
    assert.notEqual(version, newest, `refresh ${index} builds a new version`);
    newest = version;
    const canaryNode =
      poolNodes(harness).find((node) => node.metadata.labels?.[IMAGE_VERSION_LABEL] === version)?.metadata
        .name ?? '(none)';
    const line: RefreshLine = {
      refresh: index,
      version,
      donor,
      capacityBefore,
      capacityAfter: capacity(harness),
      nodesBefore,
      nodesAfter: poolNodes(harness).length,
      canary: canaryNode,
      retired: result.canary.keptSize?.retired ?? [],
      keptSizeDetail: result.canary.keptSize?.detail ?? '(none)',
      generations: generationCounts(harness),
      simulatedSeconds: Math.round((world.clock.nowMs() - simulatedStart) / 1000),
      wallMs,
    };
    lines.push(line);
    check(line, result, start);
    assert.deepEqual(leftovers(harness), [], `refresh ${index}: nothing of ours left on a node`);
  }
  return lines;
}

void describe(
  'canary.afterPass over consecutive refreshes of a fixed-size pool',
  { concurrency: false },
  () => {
    void it(`keep-size: ${REFRESHES} refreshes, the pool keeps its size`, async () => {
      assert.ok(REFRESHES >= 1, `KEEP_SIZE_REFRESHES=${process.env['KEEP_SIZE_REFRESHES']}`);
      const harness = await startHarness({
        settings: (cluster) => {
          // afterPass unset: keep-size is the default.
          cluster['promotion'] = { canary: { soak: '5m', deadline: '20m' } };
        },
      });
      const wallStart = performance.now();
      try {
        const lines = await refreshAll(harness, REFRESHES, 'keep-size', (line, result, start) => {
          const context = JSON.stringify({ line, keptSize: result.canary?.keptSize });
          assert.equal(line.capacityAfter, start, `capacity: ${context}`);
          assert.equal(line.nodesAfter, start, `nodes: ${context}`);
          if (line.refresh === 1) {
            // The first refresh tests in a canary scale set of its own, deleted after the verdict: the pool
            // never grew, nothing is retired (docs/design.md#canary).
            assert.equal(result.canary?.instancesNow, 'removed', context);
            assert.deepEqual(line.retired, [], `nothing retired: ${context}`);
            return;
          }
          assert.equal(line.retired.length, 1, `one node retired in the canary's place: ${context}`);
          const retired = line.retired[0] ?? '';
          assert.notEqual(retired, line.canary, context);
          assert.ok(!poolNodes(harness).some((node) => node.metadata.name === retired), `gone: ${context}`);
          assert.equal(poolNodes(harness).filter(isReady).length, start, `all Ready: ${context}`);
          assert.equal(line.generations[line.version], 1, `one node of the new version: ${context}`);
        });
        assertIdentityClean(harness, `${REFRESHES} canaries kept, one per refresh`);
        const report = {
          afterPass: 'keep-size',
          refreshes: REFRESHES,
          wallSeconds: Math.round((performance.now() - wallStart) / 1000),
          lines,
        };
        console.log(JSON.stringify(report, null, 2));
        await mkdir('test-output', { recursive: true });
        await writeFile('test-output/keep-size-e2e.json', `${JSON.stringify(report, null, 2)}\n`);
      } finally {
        await harness.stop();
      }
    });

    void it(`keep (before keep-size): ${KEEP_REFRESHES} refreshes, the pool grows by one each`, async () => {
      const harness = await startHarness({
        settings: (cluster) => {
          cluster['promotion'] = { canary: { soak: '5m', deadline: '20m', afterPass: 'keep' } };
        },
      });
      try {
        const lines = await refreshAll(harness, KEEP_REFRESHES, 'keep', (line, result, start) => {
          const context = JSON.stringify({ line, keptSize: result.canary?.keptSize });
          // The first refresh's canary went with its own scale set; later ones are added to the pool.
          const grown = line.refresh === 1 ? 0 : 1;
          assert.equal(line.capacityAfter, line.capacityBefore + grown, `capacity: ${context}`);
          assert.equal(line.capacityAfter, start + line.refresh - 1, `capacity: ${context}`);
          assert.equal(line.nodesAfter, start + line.refresh - 1, `nodes: ${context}`);
          assert.deepEqual(line.retired, [], `nothing retired: ${context}`);
        });
        assertIdentityClean(harness, `${KEEP_REFRESHES} canaries kept, one per refresh`);
        console.log(JSON.stringify({ afterPass: 'keep', refreshes: KEEP_REFRESHES, lines }, null, 2));
      } finally {
        await harness.stop();
      }
    });
  },
);
