/**
 * The composition root's cluster handles: a cluster whose settings have `capz` gets the ports to its
 * management cluster and its CAPZ configuration; one without has neither.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compose } from '../../shared/composition-root.js';
import { generateSimTls } from '../../sim/world/tls.js';

const DIGEST = 'a'.repeat(64);

function cluster(name: string, capz: unknown): Record<string, unknown> {
  const ca = generateSimTls(new Date()).caPem;
  return {
    name,
    subscriptionId: '11111111-2222-3333-4444-555555555555',
    resourceGroup: `k8s-${name}`,
    apiServer: {
      url: `https://${name}.example.com:6443`,
      caCertificate: { pem: ca },
      auth: { serviceAccountToken: { env: 'VMSSP_SECRET_WORKLOAD_TOKEN' } },
    },
    pools: [
      { name: 'agents', scaleSet: 'agents-vmss', capz: { rollout: 'allow' } },
      { name: 'system', scaleSet: 'system-vmss' },
    ],
    capture: { prepImage: `registry.example.com/tools/busybox:1.37@sha256:${DIGEST}` },
    ...(capz === undefined ? {} : { capz }),
  };
}

void describe('compose: cluster handles', () => {
  const ca = generateSimTls(new Date()).caPem;
  const env = {
    VMSSP_CLUSTERS: JSON.stringify([
      cluster('capz', {
        managementCluster: {
          url: 'https://10.0.0.4:6443',
          caCertificate: { pem: ca },
          tlsServerName: 'management.example.com',
          auth: { serviceAccountToken: { env: 'VMSSP_SECRET_MANAGEMENT_TOKEN' } },
        },
        namespace: 'capz-clusters',
      }),
      cluster('plain', undefined),
    ]),
    VMSSP_SECRET_WORKLOAD_TOKEN: 'workload-token',
    VMSSP_SECRET_MANAGEMENT_TOKEN: 'management-token',
  };

  void it('binds the management cluster of a cluster with capz, and its CAPZ configuration', async () => {
    const { dependencies } = compose({ env });

    const handle = await dependencies.cluster('capz');

    assert.ok(handle.clusterApi?.machinePools);
    assert.ok(handle.managementServer);
    assert.deepEqual(handle.configuration.capz, {
      managementCluster: 'https://10.0.0.4:6443',
      namespace: 'capz-clusters',
    });
    const [agents, system] = handle.configuration.pools === 'all' ? [] : handle.configuration.pools;
    assert.ok(agents !== undefined && system !== undefined);
    assert.equal(handle.configuration.poolConfiguration(agents).capz?.rollout, 'allow');
    assert.equal(
      handle.configuration.poolConfiguration(system).capz?.rollout,
      'refuse',
      'the cluster default',
    );
  });

  void it('binds neither for a cluster without capz', async () => {
    const { dependencies } = compose({ env });

    const handle = await dependencies.cluster('plain');

    assert.equal(handle.clusterApi, undefined);
    assert.equal(handle.managementServer, undefined);
    assert.equal(handle.configuration.capz, undefined);
    const [agents] = handle.configuration.pools === 'all' ? [] : handle.configuration.pools;
    assert.ok(agents !== undefined);
    assert.equal(handle.configuration.poolConfiguration(agents).capz, undefined);
  });
});
