import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { createFileStore } from '../../../cli/runner/file-store.js';
import type { InstanceRecord } from '../../../cli/runner/store.js';

function aRecord(instanceId: string, overrides: Partial<InstanceRecord> = {}): InstanceRecord {
  return {
    formatVersion: 1,
    instanceId,
    name: 'refreshNodePool',
    executionId: 'e1',
    runtimeStatus: 'Running',
    createdTime: '2026-11-22T10:00:00.000Z',
    lastUpdatedTime: '2026-11-22T10:00:00.000Z',
    generation: 0,
    history: [{ EventType: 12, EventId: -1, Timestamp: '2026-11-22T10:00:00.000Z' }],
    inbox: [],
    actions: [{ type: 'CallActivity', name: 'cordonNode', input: '"n1"' }],
    ...overrides,
  };
}

void describe('file store', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'runner-file-store-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('round-trips a record and replaces it whole, leaving no temp files', async () => {
    const store = createFileStore(path.join(dir, 'a'));
    await store.save(aRecord('refresh-a'));
    await store.save(aRecord('refresh-a', { runtimeStatus: 'Completed', output: '"done"' }));

    const loaded = await store.load('refresh-a');

    assert.equal(loaded?.runtimeStatus, 'Completed');
    assert.equal(loaded.output, '"done"');
    assert.deepEqual(await readdir(path.join(dir, 'a')), ['refresh-a.json']);
  });

  void it('encodes sub-orchestration ids in file names and lists them decoded', async () => {
    const store = createFileStore(path.join(dir, 'b'), { fsync: false });
    await store.save(aRecord('parent'));
    await store.save(aRecord('parent:4'));

    assert.deepEqual(await readdir(path.join(dir, 'b')), ['parent%3A4.json', 'parent.json']);
    assert.deepEqual(await store.list(), ['parent', 'parent:4']);
    assert.equal((await store.load('parent:4'))?.instanceId, 'parent:4');
  });

  void it('returns undefined for an unknown instance and an empty list for a missing directory', async () => {
    const store = createFileStore(path.join(dir, 'missing'));
    assert.equal(await store.load('nope'), undefined);
    assert.deepEqual(await store.list(), []);
  });

  void it('rejects a record that does not match the schema, naming the instance', async () => {
    const store = createFileStore(path.join(dir, 'c'));
    await store.save(aRecord('broken'));
    await writeFile(
      path.join(dir, 'c', 'broken.json'),
      JSON.stringify({ formatVersion: 1, instanceId: 'broken' }),
    );

    await assert.rejects(store.load('broken'), /reading instance broken from .*broken\.json/);
  });
});
