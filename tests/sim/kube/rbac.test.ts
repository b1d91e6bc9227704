// RBAC over the manifests in infra/kubernetes: the product's service account may do exactly what the
// product needs, and a missing permission fails with the API server's Forbidden message.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  ApiException,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

import type { RbacAuthorizer, ResourceAttributes } from '../../../sim/kube/rbac.js';
import {
  createRbacAuthorizer,
  createRbacAuthorizerFromDocuments,
  serviceAccountUser,
} from '../../../sim/kube/rbac.js';
import type { TestCluster } from './fixtures.js';
import {
  ADMIN_TOKEN,
  namespaceObject,
  nodeObject,
  runningPod,
  SA_TOKEN,
  startTestCluster,
  statusBody,
} from './fixtures.js';

const INFRA = fileURLToPath(new URL('../../../../infra/kubernetes/', import.meta.url));
const SA = serviceAccountUser('vmss-prototype', 'vmss-prototype');

function manifestFiles(): string[] {
  return readdirSync(INFRA)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .map((file) => `${INFRA}${file}`);
}

void describe('RBAC authorizer', () => {
  const cases: { attributes: ResourceAttributes; allowed: boolean }[] = [
    { attributes: { verb: 'list', apiGroup: '', resource: 'nodes' }, allowed: true },
    { attributes: { verb: 'patch', apiGroup: '', resource: 'nodes', name: 'n' }, allowed: true },
    { attributes: { verb: 'delete', apiGroup: '', resource: 'nodes', name: 'n' }, allowed: false },
    {
      attributes: { verb: 'patch', apiGroup: '', resource: 'nodes', subresource: 'status', name: 'n' },
      allowed: false,
    },
    {
      attributes: {
        verb: 'create',
        apiGroup: '',
        resource: 'pods',
        subresource: 'eviction',
        name: 'p',
        namespace: 'apps',
      },
      allowed: true,
    },
    {
      attributes: { verb: 'delete', apiGroup: '', resource: 'pods', name: 'p', namespace: 'apps' },
      allowed: false,
    },
    {
      attributes: { verb: 'create', apiGroup: '', resource: 'pods', namespace: 'vmss-prototype' },
      allowed: true,
    },
    {
      attributes: {
        verb: 'delete',
        apiGroup: '',
        resource: 'pods',
        name: 'prep',
        namespace: 'vmss-prototype',
      },
      allowed: true,
    },
    { attributes: { verb: 'create', apiGroup: '', resource: 'pods', namespace: 'default' }, allowed: false },
    {
      attributes: {
        verb: 'get',
        apiGroup: 'apps',
        resource: 'daemonsets',
        name: 'kured',
        namespace: 'kube-system',
      },
      allowed: true,
    },
    // The canary gate lists DaemonSets to know which must run a pod on the canary; watch is not granted.
    {
      attributes: { verb: 'list', apiGroup: 'apps', resource: 'daemonsets', namespace: 'kube-system' },
      allowed: true,
    },
    {
      attributes: { verb: 'watch', apiGroup: 'apps', resource: 'daemonsets', namespace: 'kube-system' },
      allowed: false,
    },
    {
      attributes: {
        verb: 'get',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        name: 'n',
        namespace: 'kube-node-lease',
      },
      allowed: false,
    },
    // The pool leases: exactly get, create and update, in the product's namespace only.
    {
      attributes: {
        verb: 'get',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        name: 'vmssp-agents',
        namespace: 'vmss-prototype',
      },
      allowed: true,
    },
    {
      attributes: {
        verb: 'create',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        namespace: 'vmss-prototype',
      },
      allowed: true,
    },
    {
      attributes: {
        verb: 'update',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        name: 'vmssp-agents',
        namespace: 'vmss-prototype',
      },
      allowed: true,
    },
    {
      attributes: {
        verb: 'patch',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        name: 'vmssp-agents',
        namespace: 'vmss-prototype',
      },
      allowed: false,
    },
    {
      attributes: {
        verb: 'delete',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        name: 'vmssp-agents',
        namespace: 'vmss-prototype',
      },
      allowed: false,
    },
    {
      attributes: {
        verb: 'list',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        namespace: 'vmss-prototype',
      },
      allowed: false,
    },
    {
      attributes: {
        verb: 'watch',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        namespace: 'vmss-prototype',
      },
      allowed: false,
    },
    {
      attributes: {
        verb: 'create',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        namespace: 'default',
      },
      allowed: false,
    },
    {
      attributes: {
        verb: 'update',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        name: 'vmssp-agents',
        namespace: 'kube-system',
      },
      allowed: false,
    },
  ];
  for (const { attributes, allowed } of cases) {
    const scope = attributes.namespace ?? 'cluster';
    const resource = attributes.subresource
      ? `${attributes.resource}/${attributes.subresource}`
      : attributes.resource;
    void it(`${allowed ? 'allows' : 'denies'} ${attributes.verb} ${resource} (${scope}) for the service account`, () => {
      const authorizer = createRbacAuthorizer(manifestFiles());

      assert.equal(authorizer.authorize(SA, attributes).allowed, allowed);
    });
  }

  void it('allows everything to system:masters', () => {
    const authorizer = createRbacAuthorizer(manifestFiles());

    const decision = authorizer.authorize(
      { name: 'admin', groups: ['system:masters'] },
      { verb: 'delete', apiGroup: '', resource: 'nodes', name: 'n' },
    );

    assert.equal(decision.allowed, true);
  });

  void it('honours resourceNames', () => {
    const authorizer = createRbacAuthorizerFromDocuments([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'one-ds' },
        rules: [
          {
            apiGroups: ['apps'],
            resources: ['daemonsets'],
            verbs: ['get', 'update'],
            resourceNames: ['kured'],
          },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'one-ds', namespace: 'kube-system' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'one-ds' },
        subjects: [{ kind: 'ServiceAccount', name: 'vmss-prototype', namespace: 'vmss-prototype' }],
      },
    ]);
    const attributes = { verb: 'update', apiGroup: 'apps', resource: 'daemonsets', namespace: 'kube-system' };

    assert.equal(authorizer.authorize(SA, { ...attributes, name: 'kured' }).allowed, true);
    assert.equal(authorizer.authorize(SA, { ...attributes, name: 'other' }).allowed, false);
    assert.equal(
      authorizer.authorize(SA, { ...attributes, name: 'kured', namespace: 'default' }).allowed,
      false,
    );
  });
});

void describe('RBAC over the wire with the product service account', () => {
  let cluster: TestCluster;
  let authorizer: RbacAuthorizer;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let coordination: CoordinationV1Api;
  let custom: CustomObjectsApi;

  void before(async () => {
    authorizer = createRbacAuthorizer(manifestFiles());
    cluster = await startTestCluster({ authorizer });
    const { store } = cluster;
    for (const namespace of ['apps', 'kube-system', 'vmss-prototype', 'default'])
      store.create('namespaces', namespaceObject(namespace));
    store.create('nodes', nodeObject('vmss000000'));
    store.create('nodes', nodeObject('vmss000001'));
    store.create('pods', runningPod('apps', 'web', 'vmss000000'));
    const config = cluster.kubeConfig(SA_TOKEN);
    core = config.makeApiClient(CoreV1Api);
    apps = config.makeApiClient(AppsV1Api);
    coordination = config.makeApiClient(CoordinationV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    // The product's PoolImagePolicy CRD, as `kubectl apply -k infra/kubernetes` installs it (POSTed as
    // JSON: client-node's typed API would drop the schema's `default` and `enum`).
    const crd = parseAllDocuments(
      readFileSync(`${INFRA}pool-image-policy.crd.yaml`, 'utf8'),
    )[0]?.toJS() as unknown;
    const created = await fetch(`${cluster.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(crd),
    });
    assert.equal(created.status, 201, await created.text());
  });

  void after(async () => {
    await cluster.close();
  });

  void it('answers 403 with the API server message for a permission the roles lack', async () => {
    let error: unknown;
    try {
      await core.deleteNode({ name: 'vmss000001' });
    } catch (caught) {
      error = caught;
    }

    assert.ok(error instanceof ApiException);
    assert.equal(error.code, 403);
    assert.deepEqual(statusBody(error), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'nodes "vmss000001" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot delete resource "nodes" in API group "" at the cluster scope',
      reason: 'Forbidden',
      details: { name: 'vmss000001', kind: 'nodes' },
      code: 403,
    });
  });

  void it('names the namespace when a prep pod is created outside vmss-prototype', async () => {
    let error: unknown;
    try {
      await core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'prep' }, spec: { containers: [] } },
      });
    } catch (caught) {
      error = caught;
    }

    assert.ok(error instanceof ApiException);
    assert.equal(
      statusBody(error).message,
      'pods is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot create resource "pods" in API group "" in the namespace "default"',
    );
  });

  void it('uses every granted rule for the product operations', async () => {
    await core.listNode({ limit: 500 });
    await core.readNode({ name: 'vmss000000' });
    await core.patchNode(
      { name: 'vmss000000', body: { spec: { unschedulable: true } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=vmss000000' });
    await apps
      .readNamespacedDaemonSet({ namespace: 'kube-system', name: 'kured' })
      .catch((error: unknown) => {
        assert.ok(error instanceof ApiException && error.code === 404);
      });
    await core.createNamespacedPodEviction({
      name: 'web',
      namespace: 'apps',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web', namespace: 'apps' } },
    });
    await core.createNamespacedPod({
      namespace: 'vmss-prototype',
      body: {
        metadata: { name: 'prep' },
        spec: { nodeName: 'vmss000000', containers: [{ name: 'c', image: 'i' }] },
      },
    });
    await core.readNamespacedPod({ namespace: 'vmss-prototype', name: 'prep' });
    await core.deleteNamespacedPod({ namespace: 'vmss-prototype', name: 'prep', gracePeriodSeconds: 0 });
    // The pool lease: created the first time, read, then updated (acquire, renew, release).
    await coordination.createNamespacedLease({
      namespace: 'vmss-prototype',
      body: {
        metadata: { name: 'vmssp-agents' },
        spec: { holderIdentity: 'run-1', leaseDurationSeconds: 900 },
      },
    });
    const lease = await coordination.readNamespacedLease({
      namespace: 'vmss-prototype',
      name: 'vmssp-agents',
    });
    await coordination.replaceNamespacedLease({
      namespace: 'vmss-prototype',
      name: 'vmssp-agents',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'run-2' } },
    });
    // The pools' PoolImagePolicy objects (docs/pool-policy.md): listed, read by name, their status
    // written, Events recorded about them in `default`. Authorized before the server finds none here.
    const policies = { group: 'vmss-prototype.io', version: 'v1alpha1', plural: 'poolimagepolicies' };
    const absent = (error: unknown): void => {
      assert.ok(error instanceof ApiException && error.code === 404, String(error));
    };
    await custom.listClusterCustomObject(policies).catch(absent);
    await custom.getClusterCustomObject({ ...policies, name: 'agents' }).catch(absent);
    await custom
      .replaceClusterCustomObjectStatus({
        ...policies,
        name: 'agents',
        body: { metadata: { name: 'agents', resourceVersion: '1' }, status: {} },
      })
      .catch(absent);
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'agents.1', namespace: 'default' },
        involvedObject: { apiVersion: 'vmss-prototype.io/v1alpha1', kind: 'PoolImagePolicy', name: 'agents' },
        reason: 'InvalidSpec',
        message: 'spec.canary.soak: …',
        type: 'Warning',
      },
    });
    const unused = authorizer
      .ruleUsage()
      .filter((usage) => usage.uses === 0)
      .map((usage) => `${usage.role}#${usage.index}`);

    assert.deepEqual(unused, []);
  });
});
