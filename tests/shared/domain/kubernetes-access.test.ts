/** The Kubernetes permissions the product needs, from its RBAC roles; rules reviews read with RBAC's matching. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  describeAccess,
  type KubernetesAccess,
  type RbacRole,
  rbacRolesFromManifests,
  requiredKubernetesAccess,
  type ResourceRule,
  rulesAllow,
} from '../../../shared/domain/kubernetes-access.js';

const ROLES: RbacRole[] = [
  {
    kind: 'ClusterRole',
    name: 'product',
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['one'] },
    ],
  },
  {
    kind: 'Role',
    name: 'prep',
    namespace: 'vmss-prototype',
    captureModes: ['drain-and-stop'],
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create'] }],
  },
  {
    kind: 'Role',
    name: 'lease',
    namespace: 'vmss-prototype',
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }],
  },
];

void describe('requiredKubernetesAccess', () => {
  void it('expands every rule: cluster roles cluster-wide, roles in the configured namespace', () => {
    const accesses = requiredKubernetesAccess(ROLES, { captureMode: 'drain-and-stop', namespace: 'ops' });

    assert.deepEqual(accesses.map(describeAccess), [
      'get nodes (cluster-wide)',
      'patch nodes (cluster-wide)',
      'create pods/eviction (cluster-wide)',
      'create pods in namespace ops',
      'get leases.coordination.k8s.io in namespace ops',
    ]);
    assert.equal(accesses[2]?.subresource, 'eviction');
    assert.equal(accesses[3]?.grantedBy, 'Role prep');
  });

  void it('leaves out a role annotated for another capture mode (Run Command needs no prep pod)', () => {
    const accesses = requiredKubernetesAccess(ROLES, { captureMode: 'run-command', namespace: 'ops' });

    assert.ok(!accesses.map(describeAccess).includes('create pods in namespace ops'));
    assert.ok(accesses.map(describeAccess).includes('get leases.coordination.k8s.io in namespace ops'));
  });
});

void describe('rulesAllow', () => {
  const eviction: KubernetesAccess = {
    verb: 'create',
    group: '',
    resource: 'pods',
    subresource: 'eviction',
    grantedBy: 'ClusterRole product',
  };
  const daemonsets: KubernetesAccess = { verb: 'get', group: 'apps', resource: 'daemonsets', grantedBy: 'x' };
  const cases: { name: string; rules: ResourceRule[]; access: KubernetesAccess; allowed: boolean }[] = [
    {
      name: 'exact',
      rules: [{ verbs: ['create'], apiGroups: [''], resources: ['pods/eviction'] }],
      access: eviction,
      allowed: true,
    },
    {
      name: 'pods is not pods/eviction',
      rules: [{ verbs: ['create'], apiGroups: [''], resources: ['pods'] }],
      access: eviction,
      allowed: false,
    },
    {
      name: '*/eviction',
      rules: [{ verbs: ['create'], apiGroups: [''], resources: ['*/eviction'] }],
      access: eviction,
      allowed: true,
    },
    {
      name: 'any resource',
      rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      access: daemonsets,
      allowed: true,
    },
    {
      name: 'wrong group',
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['daemonsets'] }],
      access: daemonsets,
      allowed: false,
    },
    {
      name: 'wrong verb',
      rules: [{ verbs: ['list'], apiGroups: ['apps'], resources: ['daemonsets'] }],
      access: daemonsets,
      allowed: false,
    },
    {
      name: 'named objects only',
      rules: [{ verbs: ['get'], apiGroups: ['apps'], resources: ['daemonsets'], resourceNames: ['kured'] }],
      access: daemonsets,
      allowed: false,
    },
    { name: 'no rules', rules: [], access: daemonsets, allowed: false },
  ];
  for (const { name, rules, access, allowed } of cases) {
    void it(name, () => assert.equal(rulesAllow(rules, access), allowed));
  }
});

void describe('rbacRolesFromManifests', () => {
  void it('reads roles, their namespace and the capture-mode annotation; skips other kinds', () => {
    const roles = rbacRolesFromManifests([
      { kind: 'Namespace', metadata: { name: 'vmss-prototype' } },
      null,
      {
        kind: 'Role',
        metadata: {
          name: 'prep',
          namespace: 'vmss-prototype',
          annotations: { 'vmss-prototype.io/capture-modes': 'drain-and-stop, live' },
        },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create'] }],
      },
      { kind: 'ClusterRole', metadata: { name: 'c' } },
    ]);

    assert.deepEqual(roles, [
      {
        kind: 'Role',
        name: 'prep',
        namespace: 'vmss-prototype',
        captureModes: ['drain-and-stop', 'live'],
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create'] }],
      },
      { kind: 'ClusterRole', name: 'c', rules: [] },
    ]);
  });
});
