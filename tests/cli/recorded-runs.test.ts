// A recorded run that holds nothing any more is closed, its open children with it; a finished one is left.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { endRecordedRun } from '../../cli/recorded-runs.js';
import { createMemoryStore, type InstanceRecord, type RuntimeStatus } from '../../cli/runner/index.js';

const NOW = new Date('2026-11-27T12:00:00Z');

function record(instanceId: string, runtimeStatus: RuntimeStatus, parentInstanceId?: string): InstanceRecord {
  return {
    formatVersion: 1,
    instanceId,
    name: 'refreshPool',
    executionId: 'e1',
    runtimeStatus,
    createdTime: '2026-11-27T11:00:00.000Z',
    lastUpdatedTime: '2026-11-27T11:00:00.000Z',
    generation: 0,
    history: [],
    inbox: [],
    actions: [],
    ...(parentInstanceId === undefined ? {} : { parentInstanceId }),
  };
}

void describe('endRecordedRun', () => {
  void it('closes an open run and its open sub-orchestrations, saying why', async () => {
    const store = createMemoryStore();
    await store.save(record('refresh:prod', 'Running'));
    await store.save(record('refresh:prod:pool1', 'Running', 'refresh:prod'));
    await store.save(record('refresh:prod:pool2', 'Completed', 'refresh:prod'));
    assert.equal(await endRecordedRun(store, 'refresh:prod', 'given back', NOW), true);
    const parent = await store.load('refresh:prod');
    assert.equal(parent?.runtimeStatus, 'Terminated');
    assert.equal(parent.output, JSON.stringify('given back'));
    assert.equal(parent.lastUpdatedTime, NOW.toISOString());
    assert.equal((await store.load('refresh:prod:pool1'))?.runtimeStatus, 'Terminated');
    assert.equal((await store.load('refresh:prod:pool2'))?.runtimeStatus, 'Completed');
  });

  void it('leaves a finished run and a missing one alone', async () => {
    const store = createMemoryStore();
    await store.save(record('refresh:prod:pool1', 'Failed'));
    assert.equal(await endRecordedRun(store, 'refresh:prod:pool1', 'x', NOW), false);
    assert.equal((await store.load('refresh:prod:pool1'))?.runtimeStatus, 'Failed');
    assert.equal(await endRecordedRun(store, 'refresh:prod:pool9', 'x', NOW), false);
  });
});
