/**
 * Rollback, generations and freshness end to end: two refreshes of a pool on the simulator
 * build two versions (each through its canary; a scale-out between them boots the first); with
 * `history: 1` pruning still keeps the first, the rollback target; nodes carry their generation and the older generation is tainted when the pool asks
 * for it. Then the operator's path: `vmss-prototype rollback` as a child process against the same
 * simulator (--sim-connect): --dry-run changes nothing, a target that is gone is refused (exit 1), and
 * the rollback points new instances at the first version, hides and rejects the second, and — run with
 * the simulator's default settings, which set no taint policy — takes the older-generation taint away.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { connectionOf } from '../../cli/sim-session.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterStatusRead, PoolStatus } from '../../shared/application/pool-status.js';
import type { PoolRefreshResult, PoolRollbackResult } from '../../shared/application/refresh-contracts.js';
import { IMAGE_VERSION_LABEL, OLDER_GENERATION_TAINT } from '../../shared/domain/generations.js';
import { VERSION_VERDICT_TAG_KEYS } from '../../shared/domain/version-verdict.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';
import type { Harness } from './harness.js';
import { assertIdentityClean, nodeOf, POOL2, scaleOutOne, startHarness } from './harness.js';

const CLI = CLI_ENTRY;

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[], cwd: string): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
          stdout,
          stderr,
        });
      },
    );
  });
}

async function refresh(harness: Harness, id: string, node?: string): Promise<PoolRefreshResult> {
  const status = await harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool: POOL2, trigger: 'test', ...(node === undefined ? {} : { node }) },
    id,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  const result = status.output as PoolRefreshResult;
  assert.equal(result.outcome, 'refreshed', result.reason);
  return result;
}

function versions(harness: Harness, result: PoolRefreshResult) {
  const definitionId = (result.version?.id ?? '').replace(/\/versions\/[^/]+$/i, '');
  return harness.sim.running.world.compute.listImageVersions(definitionId);
}

function poolNodes(harness: Harness) {
  return harness.sim.running.world
    .cluster('prod')
    .world.store.list('nodes')
    .filter((node) => node.metadata.name.startsWith(POOL2))
    .map((node) => {
      const spec = node['spec'] as { taints?: { key: string; effect: string }[] } | undefined;
      return {
        name: node.metadata.name,
        generation: node.metadata.labels?.[IMAGE_VERSION_LABEL],
        taint: spec?.taints?.find((taint) => taint.key === OLDER_GENERATION_TAINT)?.effect,
      };
    });
}

async function poolStatus(harness: Harness, id: string): Promise<PoolStatus> {
  const status = await harness.run(ORCHESTRATION.clusterStatus, { cluster: 'prod' }, id);
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  const pool = (status.output as ClusterStatusRead).pools.find((entry) => entry.pool === POOL2);
  assert.ok(pool);
  return pool;
}

void describe('rollback, generations and freshness on the simulator', { concurrency: false }, () => {
  void it('two versions, the older kept for rollback, the older generation tainted; the CLI rolls back', async () => {
    const harness = await startHarness({
      settings: (cluster) => {
        cluster.history = 1;
        cluster['promotion'] = {
          // The passed canary stays (`keep`): the second refresh names a node keep-size would retire.
          canary: { soak: '1m', deadline: '20m', afterPass: 'keep' },
          generations: { maxGenerationsBehind: 0, taintEffect: 'PreferNoSchedule' },
        };
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-rollback-'));
    try {
      const first = await refresh(harness, 'rollback-v1');
      const v1 = first.version?.versionName ?? '';
      // The first refresh's canary ran in a canary scale set of its own, deleted after its verdict
      // (docs/design.md#canary): v1's node is the one a scale-out boots from the published model.
      assert.equal(first.canary?.instancesNow, 'removed');
      const scaled = scaleOutOne(harness, POOL2);
      assert.ok(scaled.joined, `${scaled.nodeName} joined`);
      harness.sim.running.world.clock.advanceBy(2 * 3600);
      const second = await refresh(harness, 'rollback-v2', nodeOf(POOL2, 2));
      const v2 = second.version?.versionName ?? '';
      assert.notEqual(v1, v2);

      // history 1 would prune v1; it is the rollback target, so it stays.
      assert.deepEqual(
        versions(harness, second)
          .map((version) => version.name)
          .sort(),
        [v1, v2].sort(),
      );
      assert.deepEqual(second.prunedVersions, []);

      // Generations: v1's node is one generation behind, tainted; v2's canary is current; marketplace nodes
      // (unknown) are behind every retained version.
      const nodes = poolNodes(harness);
      const onV1 = nodes.filter((node) => node.generation === v1);
      const onV2 = nodes.filter((node) => node.generation === v2);
      assert.deepEqual(
        onV1.map((node) => node.name),
        [scaled.nodeName],
        JSON.stringify(nodes),
      );
      assert.equal(onV2.length, 1, JSON.stringify(nodes));
      assert.equal(onV1[0]?.taint, 'PreferNoSchedule');
      assert.equal(onV2[0]?.taint, undefined);
      for (const node of nodes.filter((entry) => entry.generation === 'unknown')) {
        assert.equal(node.taint, 'PreferNoSchedule', node.name);
      }
      assert.ok(
        second.generations?.tainted.includes(onV1[0]?.name ?? ''),
        JSON.stringify(second.generations),
      );
      assert.ok(
        nodes.every((node) => node.generation !== undefined),
        'every node labelled',
      );

      // Freshness in status and in the run result: the age of the donor's patches.
      const before = await poolStatus(harness, 'status-1');
      assert.equal(before.currentVersion?.name, v2);
      assert.equal(before.freshness.basis, 'donor-patch');
      assert.ok((before.freshness.ageSeconds ?? -1) >= 0, JSON.stringify(before.freshness));
      assert.equal(second.freshness?.basis, 'donor-patch');

      // The operator's path.
      const connection = join(dir, 'connection.json');
      await writeConnectionFile(connection, connectionOf(harness.sim.running));
      const common = [`--sim-connect=${connection}`, `--state-dir=${join(dir, 'runs')}`, '--pool', POOL2];
      const modelBefore = harness.sim.running.world.compute
        .listScaleSets()
        .find((entry) => entry.name === POOL2)?.imageReference;

      const dry = await cli(['rollback', ...common, '--dry-run', '--json'], dir);
      assert.equal(dry.code, 0, dry.stderr);
      const planned = JSON.parse(dry.stdout) as { kind: string; pools: PoolRollbackResult[] };
      assert.equal(planned.kind, 'rollback');
      assert.equal(planned.pools[0]?.outcome, 'planned');
      assert.equal(planned.pools[0]?.from, v2);
      assert.equal(planned.pools[0]?.to, v1);
      assert.deepEqual(planned.pools[0]?.hidden, [v2]);
      assert.equal(
        versions(harness, second).find((version) => version.name === v2)?.excludeFromLatest,
        false,
        'a dry run changes nothing',
      );

      const refused = await cli(['rollback', ...common, '--to', '9.9.9'], dir);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stdout.replaceAll(/\s+/g, ' '), /refused .*version 9\.9\.9 is gone/);

      const done = await cli(['rollback', ...common], dir);
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, new RegExp(`prod +${POOL2} +rolled-back +${v2.replaceAll('.', '\\.')}`));
      const after = versions(harness, second);
      const hidden = after.find((version) => version.name === v2);
      assert.equal(hidden?.excludeFromLatest, true, 'v2 hidden from latest');
      assert.match(hidden.tags[VERSION_VERDICT_TAG_KEYS.rejected] ?? '', new RegExp(`rolled back to ${v1}`));
      assert.equal(after.find((version) => version.name === v1)?.excludeFromLatest, false);
      assert.deepEqual(
        harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2)
          ?.imageReference,
        modelBefore,
        'the model stays on the definition: latest now resolves to v1',
      );
      const status = await poolStatus(harness, 'status-2');
      assert.equal(status.currentVersion?.name, v1, 'new instances get v1');
      // The CLI's settings set no taint policy: our taint is gone from every node; labels stay.
      assert.deepEqual(
        poolNodes(harness).filter((node) => node.taint !== undefined),
        [],
      );

      // status --json: freshness per pool, the current version v1.
      const statusRun = await cli(
        ['status', `--sim-connect=${connection}`, `--state-dir=${join(dir, 'runs')}`, '--json'],
        dir,
      );
      assert.equal(statusRun.code, 0, statusRun.stderr);
      const listed = JSON.parse(statusRun.stdout) as { clusters: { pools: PoolStatus[] }[] };
      const pool2 = listed.clusters[0]?.pools.find((entry) => entry.pool === POOL2);
      assert.equal(pool2?.currentVersion?.name, v1);
      assert.equal(pool2.freshness.basis, 'donor-patch');
      assert.equal(typeof pool2.freshness.ageSeconds, 'number');

      // Rolling back again refuses: nothing usable is older than v1 (v2 is rejected, not a target).
      const again = await cli(['rollback', ...common, '--to', v2], dir);
      assert.equal(again.code, 1);
      assert.match(again.stdout.replaceAll(/\s+/g, ' '), /was rejected/);
      assertIdentityClean(harness, 'the canaries of both versions');
    } finally {
      await harness.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
