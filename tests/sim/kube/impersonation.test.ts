// Impersonation (`kubectl --as`, `--as-group`): kubectl 1.32 against the simulated API server with the
// product's RBAC manifests. The requester must hold the RBAC verb `impersonate`; the request then runs
// as the impersonated user.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { ADMIN_TOKEN, nodeObject, SA_TOKEN, startTestCluster } from './fixtures.js';
import { type KubectlSession, startKubectlSession } from './kubectl-session.js';

const PRODUCT_SA = 'system:serviceaccount:vmss-prototype:vmss-prototype';

void describe('impersonation through kubectl', () => {
  let session: KubectlSession;

  before(async () => {
    session = await startKubectlSession();
    session.cluster.store.create('nodes', nodeObject('vmss000000', {}));
  });

  after(async () => {
    await session.close();
  });

  void it('answers can-i as the impersonated product service account, not as the admin', async () => {
    const remove = await session.kubectl('--as', PRODUCT_SA, 'auth', 'can-i', 'delete', 'nodes');
    const patch = await session.kubectl('--as', PRODUCT_SA, 'auth', 'can-i', 'patch', 'nodes');

    assert.equal(remove.stdout.trim(), 'no');
    assert.equal(remove.code, 1);
    assert.equal(patch.stdout.trim(), 'yes');
  });

  void it('refuses the product service account, which may not impersonate, with 403', async () => {
    const asUser = await session.kubectl('--context=product', '--as=someone', 'get', 'nodes');
    const asAccount = await session.kubectl(
      '--context=product',
      '--as=system:serviceaccount:kube-system:default',
      'get',
      'nodes',
    );

    assert.equal(asUser.code, 1);
    assert.match(
      asUser.stderr,
      /Error from server \(Forbidden\): users "someone" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    assert.match(
      asAccount.stderr,
      /serviceaccounts "default" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"/,
    );
  });

  void it('acts as the impersonated user and groups, with system:authenticated added', async () => {
    const whoami = await session.kubectl('--as=alice', '--as-group=devs', 'auth', 'whoami', '-o', 'json');

    assert.equal(whoami.code, 0, whoami.stderr);
    const review = JSON.parse(whoami.stdout) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    assert.deepEqual(review.status.userInfo, { username: 'alice', groups: ['devs', 'system:authenticated'] });
  });

  void it('writes as the impersonated user: the product account may not delete a node', async () => {
    const deleted = await session.kubectl('--as', PRODUCT_SA, 'delete', 'node', 'vmss000000');

    assert.equal(deleted.code, 1);
    assert.match(
      deleted.stderr,
      /nodes "vmss000000" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot delete resource "nodes"/,
    );
    assert.ok(session.cluster.store.get('nodes', undefined, 'vmss000000'));
  });
});

void describe('impersonation over raw HTTP', () => {
  void it('answers groups without a user with a plain-text 500, as the upstream filter does', async () => {
    const cluster = await startTestCluster();
    try {
      const groupsOnly = await fetch(`${cluster.url}/api/v1/nodes`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Impersonate-Group': 'devs' },
      });
      const allowed = await fetch(`${cluster.url}/api/v1/nodes`, {
        headers: { Authorization: `Bearer ${SA_TOKEN}`, 'Impersonate-User': 'alice' },
      });

      assert.equal(groupsOnly.status, 500);
      assert.equal(
        await groupsOnly.text(),
        'Internal Server Error: "/api/v1/nodes": requested [{Group  devs    }] without impersonating a user\n',
      );
      // The test cluster allows everything, so impersonation itself is allowed here.
      assert.equal(allowed.status, 200);
    } finally {
      await cluster.close();
    }
  });
});
