import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeWatchEvent } from '../../../sim/contracts.js';
import { KubeStoreError } from '../../../sim/contracts.js';
import { createInMemoryKubeStore } from '../../../sim/kube/store.js';
import { ManualTime, nodeObject, runningPod } from './fixtures.js';

function newStore(): ReturnType<typeof createInMemoryKubeStore> {
  let uid = 0;
  return createInMemoryKubeStore({ clock: new ManualTime(), newUid: () => `uid-${++uid}` });
}

function storeError(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof KubeStoreError);
    return error.reason;
  }
  assert.fail('expected a KubeStoreError');
}

void describe('in-memory KubeStore', () => {
  void it('assigns uid, resourceVersion and creationTimestamp on create', () => {
    const store = newStore();

    const node = store.create('nodes', nodeObject('n1'));

    assert.equal(node.metadata.uid, 'uid-1');
    assert.equal(node.metadata.resourceVersion, '1');
    assert.equal(node.metadata.creationTimestamp, '2026-01-15T12:00:00Z');
    assert.equal(store.resourceVersion(), '1');
  });

  void it('hands out deep copies in both directions', () => {
    const store = newStore();
    const input = nodeObject('n1');
    store.create('nodes', input);
    input.metadata.labels = { changed: 'yes' };

    const first = store.get('nodes', undefined, 'n1');
    if (first?.metadata.labels) first.metadata.labels.mutated = 'yes';

    assert.equal(store.get('nodes', undefined, 'n1')?.metadata.labels?.changed, undefined);
    assert.equal(store.get('nodes', undefined, 'n1')?.metadata.labels?.mutated, undefined);
  });

  void it('rejects a duplicate with AlreadyExists', () => {
    const store = newStore();
    store.create('nodes', nodeObject('n1'));

    assert.equal(
      storeError(() => store.create('nodes', nodeObject('n1'))),
      'AlreadyExists',
    );
  });

  void it('rejects an update with a stale resourceVersion with Conflict', () => {
    const store = newStore();
    const created = store.create('nodes', nodeObject('n1'));
    store.mutate('nodes', undefined, 'n1', (node) => {
      node.metadata.labels = { a: 'b' };
    });

    assert.equal(
      storeError(() => store.update('nodes', created)),
      'Conflict',
    );
  });

  void it('updates without a resourceVersion unconditionally and keeps uid and creationTimestamp', () => {
    const store = newStore();
    store.create('nodes', nodeObject('n1'));
    const next = nodeObject('n1');
    next.metadata.uid = 'forged';

    const updated = store.update('nodes', next);

    assert.equal(updated.metadata.uid, 'uid-1');
    assert.equal(updated.metadata.resourceVersion, '2');
  });

  void it('answers NotFound for updating or mutating a missing object', () => {
    const store = newStore();

    assert.equal(
      storeError(() => store.update('nodes', nodeObject('n1'))),
      'NotFound',
    );
    assert.equal(
      storeError(() => store.mutate('nodes', undefined, 'n1', () => undefined)),
      'NotFound',
    );
  });

  void it('lists sorted by namespace then name, in one namespace or all', () => {
    const store = newStore();
    store.create('pods', runningPod('b', 'p1', 'n'));
    store.create('pods', runningPod('a', 'p2', 'n'));
    store.create('pods', runningPod('a', 'p1', 'n'));

    assert.deepEqual(
      store.list('pods').map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`),
      ['a/p1', 'a/p2', 'b/p1'],
    );
    assert.deepEqual(
      store.list('pods', 'b').map((pod) => pod.metadata.name),
      ['p1'],
    );
  });

  void it('notifies subscribers after each write, including removals', () => {
    const store = newStore();
    const events: string[] = [];
    const unsubscribe = store.subscribe((event: KubeWatchEvent) =>
      events.push(
        `${event.type} ${event.resource} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}`,
      ),
    );

    store.create('nodes', nodeObject('n1'));
    store.mutate('nodes', undefined, 'n1', () => undefined);
    assert.equal(store.remove('nodes', undefined, 'n1'), true);
    assert.equal(store.remove('nodes', undefined, 'n1'), false);
    unsubscribe();
    store.create('nodes', nodeObject('n2'));

    assert.deepEqual(events, ['ADDED nodes n1 1', 'MODIFIED nodes n1 2', 'DELETED nodes n1 3']);
  });
});
