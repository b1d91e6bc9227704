import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';

import { OWNERSHIP_CASES, OWNERSHIP_SHARDS, ownershipShard } from './chaos/ownership-cases.js';
import {
  CANARY_CRASH_CASES,
  CANARY_CRASH_JOBS,
  CANARY_CRASH_SHARDS,
  canaryCrashJobName,
  canaryCrashShard,
} from './e2e/fixtures/canary-crash.js';
import { shardOf } from './shards.js';

void describe('shardOf', () => {
  void it('puts every item in exactly one shard, in order, the shards within one item of each other', () => {
    for (const count of [0, 1, 5, 13, 130]) {
      for (const of of [1, 2, 3, 6, 7]) {
        const items = Array.from({ length: count }, (_, i) => i);
        const shards = Array.from({ length: of }, (_, k) => shardOf(items, k + 1, of));
        assert.deepEqual(shards.flat(), items, `${count} items in ${of} shards`);
        const sizes = shards.map((shard) => shard.length);
        assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `${count}/${of}: ${sizes.join(',')}`);
      }
    }
  });

  void it('an item added at the end lands in the last shard; the others keep theirs but for the seams', () => {
    assert.deepEqual(shardOf(['a', 'b', 'c', 'd'], 2, 2), ['c', 'd']);
    assert.deepEqual(shardOf(['a', 'b', 'c', 'd', 'e'], 2, 2), ['c', 'd', 'e']);
  });

  void it('refuses a shard outside 1..n', () => {
    assert.throws(() => shardOf([1], 0, 2), /shard 0 is not one of 1..2/);
    assert.throws(() => shardOf([1], 3, 2), /shard 3 is not one of 1..2/);
    assert.throws(() => shardOf([1], 1, 0), /0 is not a positive whole number/);
  });
});

/** Shards as lists of names: together exactly the whole, each name once, no shard empty. */
function assertPartition(
  shards: readonly (readonly string[])[],
  whole: readonly string[],
  what: string,
): void {
  assert.ok(shards.length > 1, `${what}: more than one shard`);
  for (const [index, shard] of shards.entries())
    assert.ok(shard.length > 0, `${what}: shard ${index + 1} is empty`);
  assert.deepEqual([...shards.flat()].sort(), [...whole].sort(), `${what}: the shards are the whole`);
  assert.equal(new Set(shards.flat()).size, whole.length, `${what}: no case twice`);
}

void describe('the split sweeps', () => {
  void it('puts each canary crash job in exactly one canary-crash-<k> file', () => {
    const shards = Array.from({ length: CANARY_CRASH_SHARDS }, (_, k) =>
      canaryCrashShard(k + 1).map(canaryCrashJobName),
    );
    assertPartition(shards, CANARY_CRASH_JOBS.map(canaryCrashJobName), 'canary-crash');
    // Every case's kill points are split into parts 1..n, each in the jobs once.
    for (const testCase of CANARY_CRASH_CASES) {
      const parts = CANARY_CRASH_JOBS.filter((job) => job.testCase === testCase).map((job) => job.part);
      const n = testCase.killPointParts ?? 1;
      assert.deepEqual(
        parts,
        Array.from({ length: n }, (_, k) => k + 1),
        `${testCase.name}: parts 1..${n}`,
      );
    }
    const file = (k: number): boolean =>
      existsSync(new URL(`../../tests/e2e/canary-crash-${k}.test.ts`, import.meta.url));
    for (let k = 1; k <= CANARY_CRASH_SHARDS; k += 1)
      assert.ok(file(k), `canary-crash-${k}.test.ts runs shard ${k}`);
    assert.ok(!file(CANARY_CRASH_SHARDS + 1), 'no file for a shard that does not exist');
  });

  void it('puts each ownership case in exactly one ownership-<k> file', () => {
    const shards = Array.from({ length: OWNERSHIP_SHARDS }, (_, k) => ownershipShard(k + 1));
    assertPartition(shards, OWNERSHIP_CASES, 'ownership');
    assert.equal(OWNERSHIP_CASES.length, 6, 'the six ownership cases');
  });
});
