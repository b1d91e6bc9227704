import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  checkKubernetesAccess,
  requiredAccessFor,
  requireKubernetesAccess,
} from '../../../shared/application/kubernetes-permissions.js';
import { isRefreshError } from '../../../shared/domain/errors.js';
import { describeAccess } from '../../../shared/domain/kubernetes-access.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';

const DRAIN_AND_STOP = { captureMode: 'drain-and-stop', namespace: 'vmss-prototype' } as const;
const RUN_COMMAND = { captureMode: 'run-command', namespace: 'vmss-prototype' } as const;

void describe('requiredAccessFor', () => {
  void it('needs the prep pod permissions in the namespace only with drain-and-stop', () => {
    const withPod = requiredAccessFor(DRAIN_AND_STOP).map(describeAccess);
    const withoutPod = requiredAccessFor(RUN_COMMAND).map(describeAccess);
    assert.ok(withPod.includes('create pods in namespace vmss-prototype'));
    assert.ok(!withoutPod.some((access) => access.includes('pods in namespace')));
    // The pool leases are needed in every mode.
    for (const verb of ['get', 'create', 'update']) {
      assert.ok(withoutPod.includes(`${verb} leases.coordination.k8s.io in namespace vmss-prototype`), verb);
      assert.ok(withPod.includes(`${verb} leases.coordination.k8s.io in namespace vmss-prototype`), verb);
    }
    assert.ok(withoutPod.includes('create pods/eviction (cluster-wide)'));
    assert.deepEqual(withPod.filter((access) => !withoutPod.includes(access)).sort(), [
      'create pods in namespace vmss-prototype',
      'delete pods in namespace vmss-prototype',
      'get pods in namespace vmss-prototype',
    ]);
  });

  void it('reads the pool policies cluster-wide, writes only their status, and records their events in default', () => {
    const accesses = requiredAccessFor({ captureMode: 'run-command', namespace: 'tools' }).map(
      describeAccess,
    );
    const policies = accesses.filter((access) => /poolimagepolicies|events/.test(access));
    assert.deepEqual(policies, [
      'get poolimagepolicies.vmss-prototype.io (cluster-wide)',
      'list poolimagepolicies.vmss-prototype.io (cluster-wide)',
      'update poolimagepolicies/status.vmss-prototype.io (cluster-wide)',
      // Not moved with capture.prepNamespace: the API server keeps events of cluster-scoped objects there.
      'create events in namespace default',
    ]);
    assert.ok(accesses.includes('get leases.coordination.k8s.io in namespace tools'));
  });
});

void describe('checkKubernetesAccess', () => {
  void it('asks access reviews and lists exactly the denied permissions', async () => {
    const kube = new FakeKubernetes();
    kube.server.deny('create pods/eviction (cluster-wide)');
    const check = await checkKubernetesAccess(kube, requiredAccessFor(DRAIN_AND_STOP), 'vmss-prototype');
    assert.equal(check.method, 'access-review');
    assert.deepEqual(check.missing.map(describeAccess), ['create pods/eviction (cluster-wide)']);
    assert.equal(check.incomplete, false);
  });

  void it('falls back to the rules review on a server without access reviews', async () => {
    const kube = new FakeKubernetes();
    kube.server.withoutAccessReviews();
    kube.server.grant([
      { verbs: ['get', 'list', 'patch'], apiGroups: [''], resources: ['nodes'] },
      { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['daemonsets'] },
      { verbs: ['get', 'create', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] },
      { verbs: ['get', 'list'], apiGroups: ['vmss-prototype.io'], resources: ['poolimagepolicies'] },
      { verbs: ['update'], apiGroups: ['vmss-prototype.io'], resources: ['poolimagepolicies/status'] },
      { verbs: ['create'], apiGroups: [''], resources: ['events'] },
    ]);
    const check = await checkKubernetesAccess(kube, requiredAccessFor(RUN_COMMAND), 'vmss-prototype');
    assert.equal(check.method, 'rules-review');
    assert.deepEqual(check.missing.map(describeAccess), ['create pods/eviction (cluster-wide)']);
    // The policy Events' Role is in `default`: its rules are asked there, the others in the product's.
    assert.deepEqual(
      kube.callsTo('server.reviewRules').map((call) => call.args[0]),
      ['vmss-prototype', 'default'],
    );
  });
});

void describe('requireKubernetesAccess', () => {
  void it('fails naming every missing permission and the role that grants it; passes when nothing is missing', async () => {
    const kube = new FakeKubernetes();
    await requireKubernetesAccess(kube, 'prod', DRAIN_AND_STOP);
    kube.server.deny('patch nodes (cluster-wide)');
    kube.server.deny('create pods in namespace vmss-prototype');
    await assert.rejects(requireKubernetesAccess(kube, 'prod', DRAIN_AND_STOP), (error: unknown) => {
      assert.ok(isRefreshError(error));
      assert.equal(error.kind, 'terminal');
      assert.match(
        error.message,
        /cluster prod: it may not patch nodes \(cluster-wide\), create pods in namespace vmss-prototype; nothing was changed/,
      );
      assert.match(error.advice ?? '', /ClusterRole vmss-prototype, Role vmss-prototype-prep-pod/);
      return true;
    });
    // Run Command needs no pod permission: only the node patch is missing then.
    await assert.rejects(
      requireKubernetesAccess(kube, 'prod', RUN_COMMAND),
      /may not patch nodes \(cluster-wide\); nothing/,
    );
  });
});
