/**
 * Fidelity of the simulated API server through @kubernetes/client-node: dry runs on every mutating
 * verb (validated, answered, nothing changed), self reviews as the product's service account, field
 * validation, and the version the server reports.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';

import { isTerminating } from '../../../sim/kube/objects.js';
import type { TestCluster } from './fixtures.js';
import {
  ADMIN_TOKEN,
  namespaceObject,
  nodeObject,
  replicaSetObject,
  runningPod,
  SA_TOKEN,
  startTestCluster,
  statusBody,
} from './fixtures.js';

void describe('simulated API server fidelity through client-node', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;

  before(async () => {
    cluster = await startTestCluster({ kubernetesVersion: 'v1.30.6' });
    core = cluster.kubeConfig(ADMIN_TOKEN).makeApiClient(CoreV1Api);
    const { store } = cluster;
    store.create('namespaces', namespaceObject('apps'));
    store.create('nodes', nodeObject('vmss000000'));
    const web = store.create('replicasets', replicaSetObject('apps', 'web', 1, { app: 'web' }));
    store.create(
      'pods',
      runningPod('apps', 'web-aaaaa', 'vmss000000', { labels: { app: 'web' }, owner: web }),
    );
    cluster.time.advance(1);
  });

  after(async () => {
    await cluster.close();
  });

  void it('reports the configured Kubernetes version on /version', async () => {
    const response = await fetch(`${cluster.url}/version`);
    const version = (await response.json()) as { gitVersion: string; major: string; minor: string };

    assert.deepEqual([version.gitVersion, version.major, version.minor], ['v1.30.6', '1', '30']);
  });

  void it('a dry-run eviction is checked and answered, and evicts nothing', async () => {
    await core.createNamespacedPodEviction({
      name: 'web-aaaaa',
      namespace: 'apps',
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'web-aaaaa', namespace: 'apps' },
        deleteOptions: { dryRun: ['All'] },
      },
    });

    const pod = cluster.store.get('pods', 'apps', 'web-aaaaa');
    assert.ok(pod && !isTerminating(pod));
  });

  void it('a dry-run delete answers the pod as terminating and keeps it', async () => {
    const answered = await core.deleteNamespacedPod({ name: 'web-aaaaa', namespace: 'apps', dryRun: 'All' });

    assert.ok(answered.metadata?.deletionTimestamp);
    const pod = cluster.store.get('pods', 'apps', 'web-aaaaa');
    assert.ok(pod && !isTerminating(pod));
  });

  void it('a dry-run patch returns the patched node and stores nothing; an unknown dryRun value is 422', async () => {
    const version = cluster.store.get('nodes', undefined, 'vmss000000')?.metadata.resourceVersion;

    const patched = await core.patchNode({
      name: 'vmss000000',
      body: [{ op: 'add', path: '/spec/unschedulable', value: true }],
      dryRun: 'All',
    });
    const refused = await core
      .patchNode({
        name: 'vmss000000',
        body: [{ op: 'add', path: '/spec/unschedulable', value: true }],
        dryRun: 'Some',
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    assert.equal(patched.spec?.unschedulable, true);
    const stored = cluster.store.get('nodes', undefined, 'vmss000000');
    assert.equal(stored?.metadata.resourceVersion, version);
    assert.equal((stored?.spec as { unschedulable?: boolean }).unschedulable, undefined);
    assert.equal(statusBody(refused).code, 422);
    assert.match(
      String(statusBody(refused).message),
      /dryRun: Unsupported value: \["Some"\]: supported values: "All"/,
    );
  });

  void it('a dry-run create validates the name and stores nothing', async () => {
    const created = await core.createNamespace({ body: { metadata: { name: 'scratch' } }, dryRun: 'All' });
    const invalid = await core
      .createNamespace({ body: { metadata: { name: 'Not_Valid' } }, dryRun: 'All' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    assert.equal(created.metadata?.name, 'scratch');
    assert.ok(created.metadata?.uid);
    assert.equal(cluster.store.get('namespaces', undefined, 'scratch'), undefined);
    assert.equal(statusBody(invalid).code, 422);
  });

  void it('answers access reviews for the service account; it needs no RBAC of its own to ask', async () => {
    const authorization = cluster.kubeConfig(SA_TOKEN).makeApiClient(AuthorizationV1Api);

    const review = await authorization.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { verb: 'patch', resource: 'nodes' } } },
    });

    // The test cluster allows everything, so the answer is yes; the RBAC answers are in the kubectl tests.
    assert.equal(review.status?.allowed, true);
  });

  void it('strict field validation refuses unknown fields; the default warns', async () => {
    const body = { metadata: { name: 'extra' }, spec: { finalizers: [] }, bogus: true };
    const strict = await fetch(`${cluster.url}/api/v1/namespaces?fieldValidation=Strict`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const warned = await fetch(`${cluster.url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

    assert.equal(strict.status, 400);
    assert.match(
      ((await strict.json()) as { message: string }).message,
      /strict decoding error: unknown field "bogus"/,
    );
    assert.equal(warned.status, 201);
    assert.equal(warned.headers.get('warning'), '299 - "unknown field \\"bogus\\""');
  });
});
