// The pool lease over client-node against the simulated API server on a manual clock: every answer
// carries the server's time from its Date header (the simulated clock, not the wall clock), which is
// what lease expiry is judged on (docs/design.md#ownership-the-pool-lease-and-the-run-id).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  type ClientNodeKubernetes,
  clientNodeKubernetes,
} from '../../../../shared/adapters/kubernetes/client-node-kubernetes.js';
import { namespace, SA_TOKEN, type SimCluster, startSimCluster } from './sim-cluster.js';

const REF = { namespace: 'vmss-prototype', name: 'vmssp-pool1-0a1b2c3d' };

/** The simulated clock's time at a whole second (an HTTP date has no fraction). */
function secondOf(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString();
}

void describe("the client-node lease adapter returns the API server's time", () => {
  let cluster: SimCluster;
  let kube: ClientNodeKubernetes;

  before(async () => {
    cluster = await startSimCluster();
    cluster.seed('namespaces', namespace('vmss-prototype'));
    kube = clientNodeKubernetes({ server: cluster.server, caPem: cluster.tls.caPem, token: SA_TOKEN });
  });

  after(async () => {
    await kube.close();
    await cluster.close();
  });

  void it('on create, read and replace: the simulated clock, as it moves', async () => {
    const created = await kube.leases.create({ ...REF, durationSeconds: 900, annotations: {} });
    assert.notEqual(created, 'exists');
    assert.equal(typeof created === 'object' && created.serverTime, secondOf(cluster.clock.nowMs()));

    cluster.clock.advanceBy(10 * 60);
    const read = await kube.leases.get(REF.namespace, REF.name);
    assert.equal(read?.serverTime, secondOf(cluster.clock.nowMs()));
    assert.ok(Math.abs(Date.parse(read?.serverTime ?? '') - Date.now()) > 60_000, 'not the wall clock');

    cluster.clock.advanceBy(60);
    const replaced = await kube.leases.replace(
      {
        ...REF,
        holder: 'cli/laptop/run-1',
        renewedAt: read?.serverTime ?? '',
        durationSeconds: 900,
        annotations: {},
      },
      read?.resourceVersion ?? '',
    );
    assert.equal(typeof replaced === 'object' && replaced.serverTime, secondOf(cluster.clock.nowMs()));
    assert.equal(
      typeof replaced === 'object' && Date.parse(replaced.renewedAt ?? ''),
      Date.parse(read?.serverTime ?? ''),
    );
  });
});
