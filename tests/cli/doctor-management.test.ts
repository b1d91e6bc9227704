/**
 * `doctor`'s check of a CAPZ cluster's management cluster, against the fake API server: reachable, the
 * permissions of infra/kubernetes/management/ in the MachinePools' namespace, each missing one named
 * with the fix, and an unreachable server reported once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { managementClusterChecks } from '../../cli/doctor-management.js';
import { TransientError } from '../../shared/domain/errors.js';
import { FakeServer } from '../../shared/ports/fake/kubernetes/server.js';
import { CallLog } from '../../shared/ports/fake/recording-fake.js';
import type { KubernetesMethod } from '../../shared/ports/kubernetes/index.js';

const CAPZ = { managementCluster: 'https://mgmt.example.com:6443', namespace: 'capz-clusters' };

function server(): FakeServer {
  return new FakeServer(new CallLog<KubernetesMethod>(() => 0));
}

void describe('managementClusterChecks', () => {
  void it('passes when the management cluster answers and grants everything', async () => {
    const fake = server();

    const checks = await managementClusterChecks('capz', CAPZ, { managementServer: fake });

    assert.deepEqual(
      checks.map((check) => [check.check, check.target, check.result]),
      [
        ['management-cluster', 'management cluster https://mgmt.example.com:6443', 'ok'],
        [
          'management-cluster',
          'management cluster https://mgmt.example.com:6443, namespace capz-clusters',
          'ok',
        ],
      ],
    );
    assert.match(checks[0]?.detail ?? '', /reachable, Kubernetes v1\.30\.6/);
    assert.match(
      checks[1]?.detail ?? '',
      /all 18 permissions on the MachinePools \(SelfSubjectAccessReview\)/,
    );
  });

  void it('names each missing permission in the configured namespace and the fix', async () => {
    const fake = server();
    fake.deny('patch azuremachinepools.infrastructure.cluster.x-k8s.io in namespace capz-clusters');
    fake.deny('create kubeadmconfigs.bootstrap.cluster.x-k8s.io in namespace capz-clusters');

    const [, permissions] = await managementClusterChecks('capz', CAPZ, { managementServer: fake });

    assert.equal(permissions?.result, 'missing');
    assert.deepEqual(permissions.missing, [
      'patch azuremachinepools.infrastructure.cluster.x-k8s.io in namespace capz-clusters',
      'create kubeadmconfigs.bootstrap.cluster.x-k8s.io in namespace capz-clusters',
    ]);
    assert.match(
      permissions.fix ?? '',
      /kubectl apply -k infra\/kubernetes\/management: Role vmss-prototype-machine-pools, its Role and RoleBinding moved to namespace capz-clusters/,
    );
  });

  void it('falls back to the rules review on a server without access reviews', async () => {
    const fake = server();
    fake.withoutAccessReviews();
    fake.grant([{ verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] }]);

    const [, permissions] = await managementClusterChecks('capz', CAPZ, { managementServer: fake });

    assert.equal(permissions?.result, 'missing');
    assert.match(permissions.detail, /SelfSubjectRulesReview/);
    assert.ok(
      permissions.missing?.includes('delete machinepools.cluster.x-k8s.io in namespace capz-clusters'),
    );
  });

  void it('reports an unreachable management cluster once, with the reason', async () => {
    const log = new CallLog<KubernetesMethod>(() => 0);
    const unreachable = new FakeServer(log);
    log.failAllUntil(
      1,
      new TransientError(
        'ClusterUnreachable',
        'reading the server version: cannot reach the API server (ECONNREFUSED)',
      ),
    );

    const checks = await managementClusterChecks('capz', CAPZ, { managementServer: unreachable });

    assert.equal(checks.length, 1);
    assert.equal(checks[0]?.result, 'error');
    assert.match(checks[0]?.detail ?? '', /ECONNREFUSED/);
  });

  void it('says so when the management cluster was not connected', async () => {
    const checks = await managementClusterChecks('capz', CAPZ, {});
    assert.equal(checks[0]?.result, 'error');
  });
});
