import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeWatchEvent } from '../../../sim/contracts.js';
import { EVENT_TTL_MS, recordEvent, recordScheduled } from '../../../sim/kube/events.js';
import { createInMemoryKubeStore } from '../../../sim/kube/store.js';
import { ManualTime, nodeObject, runningPod } from './fixtures.js';

void describe('recorded events', () => {
  void it('expire an hour after they were recorded, seen DELETED by watchers', () => {
    const clock = new ManualTime();
    const store = createInMemoryKubeStore({ clock });
    const node = store.create('nodes', nodeObject('n1'));
    const pod = store.create('pods', runningPod('default', 'p1', 'n1'));
    const deleted: string[] = [];
    store.subscribe((event: KubeWatchEvent) => {
      if (event.resource === 'events' && event.type === 'DELETED') deleted.push(event.object.metadata.name);
    });

    const cordoned = recordEvent(store, clock, {
      involved: node,
      reason: 'NodeNotSchedulable',
      message: 'Node n1 status is now: NodeNotSchedulable',
      component: 'kubelet',
      host: 'n1',
    });
    clock.advance(EVENT_TTL_MS / 1000 - 1);
    recordScheduled(store, clock, pod, 'n1');
    assert.equal(store.list('events').length, 2, 'both live before the hour has passed');

    clock.advance(1);
    recordEvent(store, clock, {
      involved: node,
      reason: 'NodeSchedulable',
      message: 'x',
      component: 'kubelet',
    });
    assert.deepEqual(deleted, [cordoned.metadata.name]);
    assert.deepEqual(
      store
        .list('events')
        .map((event) => event.reason)
        .sort(),
      ['NodeSchedulable', 'Scheduled'],
    );
  });
});
