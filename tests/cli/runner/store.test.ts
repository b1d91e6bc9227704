import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { HistoryEvent } from '../../../cli/runner/history.js';
import type { InstanceRecord } from '../../../cli/runner/store.js';
import { createMemoryStore, createReferenceStore } from '../../../cli/runner/store.js';

function aRecord(history: HistoryEvent[]): InstanceRecord {
  return {
    formatVersion: 1,
    instanceId: 'refresh-a',
    name: 'refreshNodePool',
    executionId: 'e1',
    runtimeStatus: 'Running',
    createdTime: '2026-11-22T10:00:00.000Z',
    lastUpdatedTime: '2026-11-22T10:00:00.000Z',
    generation: 0,
    history,
    inbox: [],
    actions: [{ type: 'CallActivity', name: 'cordonNode', input: '"n1"' }],
  };
}

const event = (eventId: number): HistoryEvent => ({
  EventType: 12,
  EventId: eventId,
  Timestamp: '2026-11-22T10:00:00.000Z',
});

void describe('memory store', () => {
  void it('gives back each save as it was, events appended since included', async () => {
    const store = createMemoryStore();
    const record = aRecord([event(-1)]);
    await store.save(record);
    record.history.push(event(1));
    record.inbox.push(event(2));
    record.runtimeStatus = 'Completed';
    await store.save(record);
    assert.deepEqual(await store.load('refresh-a'), record);
    assert.equal(store.saves, 2);
  });

  void it('keeps a copy: changing the record after a save changes nothing saved', async () => {
    const store = createMemoryStore();
    const record = aRecord([event(-1)]);
    await store.save(record);
    record.history.push(event(1));
    record.history = [];
    record.output = '"changed"';
    const loaded = await store.load('refresh-a');
    assert.deepEqual(loaded, aRecord([event(-1)]));
    loaded?.history.push(event(7));
    assert.deepEqual(await store.load('refresh-a'), aRecord([event(-1)]));
  });

  void it('starts a new history after continue-as-new', async () => {
    const store = createMemoryStore();
    const record = aRecord([event(-1), event(1)]);
    await store.save(record);
    record.history = [event(-1)];
    record.executionId = 'e2';
    await store.save(record);
    assert.deepEqual((await store.load('refresh-a'))?.history, [event(-1)]);
    assert.equal((await store.load('refresh-a'))?.executionId, 'e2');
  });
});

void describe('reference store', () => {
  void it('keeps the record it was given, without writing it as text', async () => {
    const store = createReferenceStore();
    const record = aRecord([event(-1)]);
    let serialised = 0;
    const counted = event(1);
    Object.defineProperty(counted, 'toJSON', {
      enumerable: false,
      value: () => {
        serialised += 1;
        return { ...counted };
      },
    });
    record.history.push(counted);
    await store.save(record);
    await store.save(record);
    assert.equal(serialised, 0);
    // The memory store writes each event as JSON text once: the same save would have called toJSON.
    await createMemoryStore().save(record);
    assert.equal(serialised, 1);
  });

  void it('loads a copy of the record as it is now', async () => {
    const store = createReferenceStore();
    const record = aRecord([event(-1)]);
    await store.save(record);
    record.history.push(event(1));
    const loaded = await store.load('refresh-a');
    assert.deepEqual(loaded, aRecord([event(-1), event(1)]));
    loaded?.history.push(event(7));
    loaded?.actions.push({ type: 'CreateTimer' });
    assert.deepEqual(await store.load('refresh-a'), aRecord([event(-1), event(1)]));
    assert.equal(await store.load('other'), undefined);
  });

  void it('lists and forgets instances', async () => {
    const store = createReferenceStore();
    await store.save({ ...aRecord([]), instanceId: 'b' });
    await store.save({ ...aRecord([]), instanceId: 'a' });
    assert.deepEqual(await store.list(), ['a', 'b']);
    await store.remove('b');
    await store.remove('missing');
    assert.deepEqual(await store.list(), ['a']);
    assert.equal(await store.load('b'), undefined);
  });
});
