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

void describe('in-memory KubeStore: reads of large lists', () => {
  const names = ['n-a', 'n-b', 'n-c', 'n-d', 'n-e'];

  void it('select after a key starts right after it, whether or not that key still exists', () => {
    const store = newStore();
    for (const name of names) store.create('nodes', nodeObject(name));
    const after = (key: string): string[] =>
      store.select('nodes', undefined, () => true, 2, key).items.map((node) => node.metadata.name);
    assert.deepEqual(after('/n-b'), ['n-c', 'n-d']);
    assert.deepEqual(after('/n-bb'), ['n-c', 'n-d'], 'a key between two names');
    assert.deepEqual(after('/n-e'), []);
    assert.deepEqual(after('/a'), ['n-a', 'n-b']);
    assert.equal(store.select('nodes', undefined, () => true, 2, '/n-b').matched, 3);
  });

  void it('select after a namespaced key orders by namespace, then name', () => {
    const store = newStore();
    for (const namespace of ['kube-system', 'default']) {
      for (const name of ['p1', 'p2']) store.create('pods', runningPod(namespace, name, 'n-a'));
    }
    const keys = store
      .select('pods', undefined, () => true, undefined, 'default/p2')
      .items.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`);
    assert.deepEqual(keys, ['kube-system/p1', 'kube-system/p2']);
  });

  void it('view, peek and selectStored hand out the stored objects; a write replaces them', () => {
    const store = newStore();
    for (const name of names) store.create('nodes', nodeObject(name));
    const viewed = store.view('nodes');
    assert.equal(viewed.length, 5);
    assert.equal(viewed[0], store.peek('nodes', undefined, 'n-a'), 'the same object, not a copy');
    assert.equal(store.selectStored('nodes', undefined, () => true, 1).items[0], viewed[0]);
    assert.notEqual(store.select('nodes', undefined, () => true, 1).items[0], viewed[0], 'select copies');
    store.mutate('nodes', undefined, 'n-a', (node) => {
      node.metadata.labels = { changed: 'yes' };
    });
    assert.equal(viewed[0]?.metadata.labels?.['changed'], undefined, 'what was viewed is not changed');
    assert.equal(store.peek('nodes', undefined, 'n-a')?.metadata.labels?.['changed'], 'yes');
  });
});
