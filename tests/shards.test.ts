import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

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
