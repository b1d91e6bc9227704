// The cancel sweep's split into its shard files: every table × way of asking in exactly one shard, each
// shard with its file (a missing file would drop its part of the sweep).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { shardOf } from '../shards.js';
import { CANCEL_SHARDS, cancelSweep } from './cancel-sweep.js';

void describe('cancel sweep shards', () => {
  void it('cover every table by event and through the lease, once, each shard in its file', () => {
    const items = cancelSweep().map(({ table, via }) => `${table.name}/${via}`);
    assert.equal(new Set(items).size, items.length);
    assert.equal(items.length, 8);
    const shards = Array.from({ length: CANCEL_SHARDS }, (_, k) => shardOf(items, k + 1, CANCEL_SHARDS));
    assert.deepEqual(shards.flat(), items);
    const sources = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'chaos');
    const files = readdirSync(sources)
      .filter((name) => /^cancel-\d+\.test\.ts$/.test(name))
      .sort();
    assert.deepEqual(files, shards.map((_, k) => `cancel-${k + 1}.test.ts`).sort());
  });
});
