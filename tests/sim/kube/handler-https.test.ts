// The simulated API server over HTTPS with a throwaway CA, as the real client-node verifies it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import type { TestCluster } from './fixtures.js';
import { namespaceObject, nodeObject, runningPod, startTestCluster } from './fixtures.js';
import { createTestTls } from './tls.js';

void describe('simulated Kubernetes API server over HTTPS', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;

  void before(async () => {
    cluster = await startTestCluster({ tls: createTestTls() });
    cluster.store.create('namespaces', namespaceObject('apps'));
    cluster.store.create('nodes', nodeObject('vmss000000'));
    cluster.store.create('pods', runningPod('apps', 'web', 'vmss000000'));
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  });

  void after(async () => {
    await cluster.close();
  });

  void it('serves client-node with certificate verification on', async () => {
    assert.match(cluster.url, /^https:/);

    const node = await core.patchNode(
      { name: 'vmss000000', body: { metadata: { annotations: { 'vmss-prototype/state': 'draining' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.createNamespacedPodEviction({
      name: 'web',
      namespace: 'apps',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web', namespace: 'apps' } },
    });

    assert.equal(node.metadata?.annotations?.['vmss-prototype/state'], 'draining');
    assert.ok(cluster.store.get('pods', 'apps', 'web')?.metadata.deletionTimestamp);
  });
});
