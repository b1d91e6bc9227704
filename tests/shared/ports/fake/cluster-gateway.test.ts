// The cluster fake keeps the port's contract: not-found node reads, annotation patches that set and
// remove, evictions refused by a budget, a prep pod whose phase follows the clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isNotFound } from '../../../../shared/domain/errors.js';
import { FakeClusterGateway } from '../../../../shared/ports/fake/cluster-gateway.js';
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

void describe('FakeClusterGateway', () => {
  void it('patches annotations (null removes) and cordons', async () => {
    const kube = new FakeClusterGateway();
    kube.addNode(aNode({ name: 'n', annotations: { keep: 'yes', drop: 'x' } }));
    await kube.patchNodeAnnotations('n', { drop: null, add: '1' });
    await kube.setNodeUnschedulable('n', true);
    const node = await kube.getNode('n');
    assert.deepEqual(node.annotations, { keep: 'yes', add: '1' });
    assert.equal(node.unschedulable, true);
    await assert.rejects(kube.getNode('missing'), isNotFound);
  });

  void it('evicts pods unless a budget refuses; an absent pod is gone', async () => {
    const kube = new FakeClusterGateway();
    kube.addPod('n', pod);
    kube.addPod('n', { ...pod, name: 'db' }, 'budget says no');
    assert.deepEqual(await kube.evictPod('default', 'web', 30), { kind: 'evicted' });
    assert.deepEqual(await kube.evictPod('default', 'web', 30), { kind: 'gone' });
    assert.deepEqual(await kube.evictPod('default', 'db', 30), {
      kind: 'blocked',
      message: 'budget says no',
    });
    kube.unblockPod('default', 'db');
    assert.deepEqual(await kube.evictPod('default', 'db', 30), { kind: 'evicted' });
    assert.deepEqual(await kube.listPodsOnNode('n'), []);
  });

  void it('the prep pod runs, then ends; deleting it before the end calls off its effect', async () => {
    let now = 0;
    let poweredOff = 0;
    const kube = new FakeClusterGateway({
      now: () => now,
      prepPodRunMs: 10_000,
      onPrepPodCreated: () => () => (poweredOff -= 1),
    });
    const spec = { namespace: 'p', name: 'prep', nodeName: 'n', image: 'i', script: 's', labels: {} };
    await kube.createPrepPod(spec);
    await kube.createPrepPod(spec);
    assert.equal(await kube.getPodPhase('p', 'prep'), 'Running');
    await kube.deletePod('p', 'prep');
    assert.equal(poweredOff, -1);
    assert.equal(await kube.getPodPhase('p', 'prep'), undefined);
    await kube.createPrepPod(spec);
    now += 10_000;
    assert.equal(await kube.getPodPhase('p', 'prep'), 'Succeeded');
  });
});
