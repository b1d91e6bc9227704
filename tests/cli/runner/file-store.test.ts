import assert from 'node:assert/strict';
import { appendFile, copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

  void it('round-trips a record, the second save in its journal, leaving no temp files', async () => {
    const store = createFileStore(path.join(dir, 'a'));
    await store.save(aRecord('refresh-a'));
    await store.save(aRecord('refresh-a', { runtimeStatus: 'Completed', output: '"done"' }));

    const loaded = await createFileStore(path.join(dir, 'a')).load('refresh-a');

    assert.equal(loaded?.runtimeStatus, 'Completed');
    assert.equal(loaded.output, '"done"');
    assert.deepEqual(await readdir(path.join(dir, 'a')), ['refresh-a.journal', 'refresh-a.json']);
  });

  void it('appends only what each save added, and writes the whole record again every few saves', async () => {
    const where = path.join(dir, 'journal');
    const store = createFileStore(where, { compactAfter: 3 });
    const record = aRecord('grows');
    await store.save(record);
    for (let i = 1; i <= 7; i++) {
      record.history.push({ EventType: 4, EventId: i, Timestamp: `2026-11-22T10:00:0${i}.000Z` });
      // The actions are replaced by a longer list with the same start, as after each replay.
      record.actions = [...record.actions, { type: 'CreateTimer', fireAt: `t${i}` }];
      record.customStatus = `"step ${i}"`;
      await store.save(record);
      assert.deepEqual(await createFileStore(where).load('grows'), record, `after save ${i}`);
    }
    // Saves 1–3 appended, 4 rewrote the record, 5–7 appended: the journal holds three lines, each with
    // one event, not the whole history.
    const journal = (await readFile(path.join(where, 'grows.journal'), 'utf8')).trim().split('\n');
    assert.equal(journal.length, 3);
    for (const line of journal) {
      assert.equal((JSON.parse(line) as { history: unknown[] }).history.length, 1);
    }
  });

  void it('ignores a line a kill cut short, and the lines of a journal a whole record replaced', async () => {
    const where = path.join(dir, 'torn');
    const store = createFileStore(where);
    const record = aRecord('torn');
    await store.save(record);
    record.history.push({ EventType: 4, EventId: 1, Timestamp: '2026-11-22T10:00:01.000Z' });
    await store.save(record);
    const saved = structuredClone(record);
    const journal = path.join(where, 'torn.journal');
    // The next save was killed mid-line: the record is the one saved before.
    await appendFile(journal, '{"seq":');
    assert.deepEqual(await createFileStore(where).load('torn'), saved);

    // The id is started afresh by another process, which writes the whole record and is killed before
    // it removes the old journal: that journal's lines would fit the new history (same length) but follow
    // no chain of the new record, and must not be applied to it.
    const stale = path.join(dir, 'torn-stale.journal');
    await copyFile(journal, stale);
    const fresh = aRecord('torn', { executionId: 'e2', runtimeStatus: 'Pending' });
    await createFileStore(where).save(fresh);
    await copyFile(stale, journal);
    assert.deepEqual(await createFileStore(where).load('torn'), fresh);
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
