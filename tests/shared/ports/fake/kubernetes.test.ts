// The Kubernetes fakes keep the ports' contract: not-found node reads, annotation patches that set and
// remove, evictions refused by a budget, a prep pod whose phase follows the clock; the bundle's one call
// log and clock serve every per-resource fake.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isNotFound } from '../../../../shared/domain/errors.js';
import { FakeKubernetes } from '../../../../shared/ports/fake/kubernetes/index.js';
import { aNode } from '../../../builders/node.js';

const pod = {
  namespace: 'default',
  name: 'web',
  uid: 'u',
  phase: 'Running',
  controller: { kind: 'ReplicaSet', name: 'web-rs', apiVersion: 'apps/v1' },
  mirror: false,
  usesEmptyDir: false,
  terminating: false,
} as const;

void describe('FakeKubernetes', () => {
  void it('patches annotations (null removes) and cordons', async () => {
    const kube = new FakeKubernetes();
    kube.nodes.add(aNode({ name: 'n', annotations: { keep: 'yes', drop: 'x' } }));
    await kube.nodes.patchAnnotations('n', { drop: null, add: '1' });
    await kube.nodes.setUnschedulable('n', true);
    const node = await kube.nodes.get('n');
    assert.deepEqual(node.annotations, { keep: 'yes', add: '1' });
    assert.equal(node.unschedulable, true);
    await assert.rejects(kube.nodes.get('missing'), isNotFound);
  });

  void it('evicts pods unless a budget refuses; an absent pod is gone', async () => {
    const kube = new FakeKubernetes();
    kube.pods.add('n', pod);
    kube.pods.add('n', { ...pod, name: 'db' }, 'budget says no');
    assert.deepEqual(await kube.pods.evict('default', 'web', 30), { kind: 'evicted' });
    assert.deepEqual(await kube.pods.evict('default', 'web', 30), { kind: 'gone' });
    assert.deepEqual(await kube.pods.evict('default', 'db', 30), {
      kind: 'blocked',
      message: 'budget says no',
    });
    kube.pods.unblock('default', 'db');
    assert.deepEqual(await kube.pods.evict('default', 'db', 30), { kind: 'evicted' });
    assert.deepEqual(await kube.pods.listOnNode('n'), []);
  });

  void it('the prep pod runs, then ends; deleting it before the end calls off its effect', async () => {
    let now = 0;
    let poweredOff = 0;
    const kube = new FakeKubernetes({
      now: () => now,
      prepPodRunMs: 10_000,
      onPrepPodCreated: () => () => (poweredOff -= 1),
    });
    const spec = { namespace: 'p', name: 'prep', nodeName: 'n', image: 'i', script: 's', labels: {} };
    await kube.pods.createPrepPod(spec);
    await kube.pods.createPrepPod(spec);
    assert.equal(await kube.pods.getPhase('p', 'prep'), 'Running');
    await kube.pods.delete('p', 'prep');
    assert.equal(poweredOff, -1);
    assert.equal(await kube.pods.getPhase('p', 'prep'), undefined);
    await kube.pods.createPrepPod(spec);
    now += 10_000;
    assert.equal(await kube.pods.getPhase('p', 'prep'), 'Succeeded');
  });

  void it('logs every port in one log, as <port>.<method>; errors and outages apply to the bundle', async () => {
    let now = 0;
    const kube = new FakeKubernetes({ now: () => now });
    kube.nodes.add(aNode({ name: 'n' }));
    kube.leases.put({ namespace: 'ns', name: 'l', durationSeconds: 60, annotations: {} });
    await kube.nodes.get('n');
    await kube.leases.get('ns', 'l');
    await kube.server.version();
    assert.deepEqual(
      kube.calls.map((call) => call.method),
      ['nodes.get', 'leases.get', 'server.version'],
    );
    kube.nextError('pods.evict', new Error('once'));
    await assert.rejects(kube.pods.evict('default', 'web', 0), /once/);
    assert.deepEqual(await kube.pods.evict('default', 'web', 0), { kind: 'gone' });
    kube.failAllUntil(1_000, new Error('down'));
    await assert.rejects(kube.nodes.get('n'), /down/);
    await assert.rejects(kube.daemonSets.list(), /down/);
    now = 1_000;
    assert.equal((await kube.nodes.get('n')).name, 'n');
    kube.reset();
    assert.equal(kube.calls.length, 0);
    assert.equal(kube.nodes.node('n'), undefined);
    assert.equal(kube.leases.lease('ns', 'l'), undefined);
  });

  void it('removes a node with the pods bound to it', () => {
    const kube = new FakeKubernetes();
    kube.nodes.add(aNode({ name: 'n' }));
    kube.pods.add('n', pod);
    kube.removeNode('n');
    assert.equal(kube.nodes.node('n'), undefined);
    assert.deepEqual(kube.pods.podsOn('n'), []);
  });
});
