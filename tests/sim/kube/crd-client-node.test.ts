// @kubernetes/client-node against the simulated API server's CustomResourceDefinitions: registration
// and discovery, the custom resource verbs (CustomObjectsApi), defaulting, pruning, validation, the
// status subresource, generation, conflicts, watch, RBAC and Events about custom objects.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';

import type { KubeObject } from '../../../sim/contracts.js';
import { createRbacAuthorizerFromDocuments } from '../../../sim/kube/rbac.js';
import { CRD_NAME, GROUP, PLURAL, policy, poolImagePolicyCrd, VERSION } from './crd-fixtures.js';
import type { TestCluster } from './fixtures.js';
import { ADMIN_TOKEN, namespaceObject, SA_TOKEN, startTestCluster, statusBody } from './fixtures.js';

/** A service account that may read the policies and write their status, nothing else. */
const STATUS_WRITER = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'policy-status-writer' },
    rules: [
      { apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ['update'] },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'policy-status-writer' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'policy-status-writer' },
    subjects: [{ kind: 'ServiceAccount', name: 'vmss-prototype', namespace: 'vmss-prototype' }],
  },
];

const ids = { group: GROUP, version: VERSION, plural: PLURAL };

async function failure(
  promise: Promise<unknown>,
): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code: number }).code, status: statusBody(error) };
  }
  throw new Error('expected the request to fail');
}

void describe('custom resources with client-node', () => {
  let cluster: TestCluster;
  let objects: CustomObjectsApi;
  let extensions: ApiextensionsV1Api;

  void before(async () => {
    cluster = await startTestCluster({ authorizer: createRbacAuthorizerFromDocuments(STATUS_WRITER) });
    cluster.store.create('namespaces', namespaceObject('default'));
    objects = cluster.kubeConfig(ADMIN_TOKEN).makeApiClient(CustomObjectsApi);
    extensions = cluster.kubeConfig(ADMIN_TOKEN).makeApiClient(ApiextensionsV1Api);
  });
  void after(() => cluster.close());

  /**
   * POSTs the CRD as JSON: client-node's typed ApiextensionsV1Api serialises a plain object through
   * its models, which spell `default` and `enum` `_default` and `_enum`, and would drop them.
   */
  async function createCrd(crd: KubeObject): Promise<KubeObject> {
    const response = await fetch(`${cluster.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(crd),
    });
    assert.equal(response.status, 201, await response.clone().text());
    return (await response.json()) as KubeObject;
  }

  void beforeEach(async () => {
    for (const crd of cluster.store.list('customresourcedefinitions'))
      cluster.store.remove('customresourcedefinitions', undefined, crd.metadata.name);
    await createCrd(poolImagePolicyCrd());
  });

  void it('answers a created CRD with its storage version, then names and establishes it', async () => {
    cluster.store.remove('customresourcedefinitions', undefined, CRD_NAME);
    const created = await createCrd(poolImagePolicyCrd());
    assert.deepEqual(created.status, { acceptedNames: { kind: '', plural: '' }, storedVersions: [VERSION] });

    const read = await extensions.readCustomResourceDefinition({ name: CRD_NAME });

    assert.deepEqual(
      read.status?.conditions?.map((condition) => [condition.type, condition.status, condition.reason]),
      [
        ['NamesAccepted', 'True', 'NoConflicts'],
        ['Established', 'True', 'InitialNamesAccepted'],
      ],
    );
    assert.equal(read.status?.acceptedNames?.kind, 'PoolImagePolicy');
    assert.equal(read.spec.names.listKind, 'PoolImagePolicyList');
  });

  void it('lists the group, its version and the resource with its status subresource in discovery', async () => {
    const get = async (path: string): Promise<Record<string, unknown>> =>
      (await (
        await fetch(`${cluster.url}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
      ).json()) as Record<string, unknown>;
    const groups = (await get('/apis')).groups as { name: string; preferredVersion: unknown }[];
    const resources = (await get(`/apis/${GROUP}/${VERSION}`)).resources as Record<string, unknown>[];

    assert.deepEqual(groups.find((entry) => entry.name === GROUP)?.preferredVersion, {
      groupVersion: `${GROUP}/${VERSION}`,
      version: VERSION,
    });
    assert.equal((await get(`/apis/${GROUP}`)).kind, 'APIGroup');
    assert.deepEqual(
      resources.map((resource) => [resource.name, resource.namespaced, resource.kind]),
      [
        [PLURAL, false, 'PoolImagePolicy'],
        [`${PLURAL}/status`, false, 'PoolImagePolicy'],
      ],
    );
    assert.deepEqual(resources[0]?.shortNames, ['pip']);
  });

  void it('defaults a created policy, drops the status it was sent and starts at generation 1', async () => {
    const created = (await objects.createClusterCustomObject({
      ...ids,
      body: { ...policy('pool1'), status: { currentVersion: 'forged' } },
    })) as KubeObject;

    assert.deepEqual(created.spec, {
      pool: 'pool1',
      captureMode: 'offline',
      keepGenerations: 3,
      paused: false,
    });
    assert.equal(created.status, undefined);
    assert.equal(created.metadata.generation, 1);
  });

  void it('refuses an invalid policy with every field error in the API server wording', async () => {
    const { code, status } = await failure(
      objects.createClusterCustomObject({
        ...ids,
        body: policy('bad', {
          pool: 'Bad_Pool',
          keepGenerations: 0,
          captureMode: 'sometimes',
          paused: 'yes',
        }),
      }),
    );

    assert.equal(code, 422);
    assert.equal(
      status.message,
      'PoolImagePolicy.policies.sim.test "bad" is invalid: [spec.pool: Invalid value: "Bad_Pool": spec.pool in body should match \'^[a-z][a-z0-9-]*$\', ' +
        'spec.captureMode: Unsupported value: "sometimes": supported values: "live", "offline", ' +
        'spec.keepGenerations: Invalid value: 0: spec.keepGenerations in body should be greater than or equal to 1, ' +
        'spec.paused: Invalid value: "string": spec.paused in body must be of type boolean: "string"]',
    );
    assert.deepEqual(status.details, {
      name: 'bad',
      group: GROUP,
      kind: 'PoolImagePolicy',
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "Bad_Pool": spec.pool in body should match \'^[a-z][a-z0-9-]*$\'',
          field: 'spec.pool',
        },
        {
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "sometimes": supported values: "live", "offline"',
          field: 'spec.captureMode',
        },
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: 0: spec.keepGenerations in body should be greater than or equal to 1',
          field: 'spec.keepGenerations',
        },
        {
          reason: 'FieldValueTypeInvalid',
          message: 'Invalid value: "string": spec.paused in body must be of type boolean: "string"',
          field: 'spec.paused',
        },
      ],
    });
    const missing = await failure(objects.createClusterCustomObject({ ...ids, body: policy('empty', {}) }));
    assert.equal(
      missing.status.message,
      'PoolImagePolicy.policies.sim.test "empty" is invalid: spec.pool: Required value',
    );
  });

  void it('drops unknown fields with a warning, refuses them under Strict, keeps preserved ones', async () => {
    const send = (query: string, name: string): Promise<Response> =>
      fetch(`${cluster.url}/apis/${GROUP}/${VERSION}/${PLURAL}${query}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...policy(name), spec: { pool: name, colour: 'blue' }, extra: 1 }),
      });
    const warned = await send('', 'warned');
    const strict = await send('?fieldValidation=Strict', 'strict');

    assert.equal(warned.status, 201);
    assert.equal(
      warned.headers.get('warning'),
      '299 - "unknown field \\"spec.colour\\"", 299 - "unknown field \\"extra\\""',
    );
    const stored = (await warned.json()) as KubeObject;
    assert.equal((stored.spec as Record<string, unknown>).colour, undefined);
    assert.equal(stored.extra, undefined);
    assert.equal(strict.status, 400);
    assert.equal(
      ((await strict.json()) as { message: string }).message,
      'strict decoding error: unknown field "spec.colour", unknown field "extra"',
    );
  });

  void it('bumps the generation on spec changes only and keeps status on the main resource', async () => {
    await objects.createClusterCustomObject({ ...ids, body: policy('pool2') });
    const read = (await objects.getClusterCustomObject({ ...ids, name: 'pool2' })) as KubeObject;
    const replaced = (await objects.replaceClusterCustomObject({
      ...ids,
      name: 'pool2',
      body: { ...read, spec: { ...(read.spec as object), paused: true }, status: { currentVersion: 'x' } },
    })) as KubeObject;
    const labelled = (await objects.patchClusterCustomObject(
      { ...ids, name: 'pool2', body: { metadata: { labels: { team: 'a' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as KubeObject;
    const stale = await failure(objects.replaceClusterCustomObject({ ...ids, name: 'pool2', body: read }));

    assert.equal(replaced.metadata.generation, 2);
    assert.equal(replaced.status, undefined);
    assert.equal(labelled.metadata.generation, 2);
    assert.equal(stale.code, 409);
    assert.match(
      String(stale.status.message),
      /^Operation cannot be fulfilled on poolimagepolicies\.policies\.sim\.test "pool2"/,
    );
  });

  void it('writes status through /status only, without a generation bump', async () => {
    await objects.createClusterCustomObject({ ...ids, body: policy('pool3') });
    const read = (await objects.getClusterCustomObject({ ...ids, name: 'pool3' })) as KubeObject;
    const written = (await objects.replaceClusterCustomObjectStatus({
      ...ids,
      name: 'pool3',
      body: {
        ...read,
        metadata: { ...read.metadata, labels: { ignored: 'yes' } },
        spec: { pool: 'other' },
        status: { currentVersion: '2026.01.15', conditions: [{ type: 'Fresh', status: 'True' }] },
      },
    })) as KubeObject;
    const patched = (await objects.patchClusterCustomObjectStatus(
      {
        ...ids,
        name: 'pool3',
        body: [{ op: 'replace', path: '/status/currentVersion', value: '2026.01.16' }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    )) as KubeObject;
    const invalid = await failure(
      objects.patchClusterCustomObjectStatus(
        { ...ids, name: 'pool3', body: { status: { freshnessDays: 'old' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    const strategic = await failure(
      objects.patchClusterCustomObject(
        { ...ids, name: 'pool3', body: { spec: { paused: true } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );

    assert.deepEqual(written.spec, read.spec);
    assert.equal(written.metadata.labels, undefined);
    assert.equal(written.metadata.generation, 1);
    assert.equal((patched.status as Record<string, unknown>).currentVersion, '2026.01.16');
    assert.equal(invalid.code, 422);
    assert.equal(strategic.code, 415);
    assert.match(
      String(strategic.status.message),
      /accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml$/,
    );
  });

  void it('lists with label and field selectors and answers a dry run without storing', async () => {
    await objects.createClusterCustomObject({
      ...ids,
      body: { ...policy('a'), metadata: { name: 'a', labels: { tier: 'x' } } },
    });
    await objects.createClusterCustomObject({ ...ids, body: policy('b') });
    await objects.createClusterCustomObject({ ...ids, body: policy('c'), dryRun: 'All' });
    const names = async (query: { labelSelector?: string; fieldSelector?: string }): Promise<string[]> =>
      ((await objects.listClusterCustomObject({ ...ids, ...query })) as { items: KubeObject[] }).items.map(
        (item) => item.metadata.name,
      );

    assert.deepEqual(await names({}), ['a', 'b']);
    assert.deepEqual(await names({ labelSelector: 'tier=x' }), ['a']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name=b' }), ['b']);
  });

  void it('streams watch events and deletes every policy with its CRD', async () => {
    await objects.createClusterCustomObject({ ...ids, body: policy('watched') });
    const events: string[] = [];
    const controller = await new Watch(cluster.kubeConfig(ADMIN_TOKEN)).watch(
      `/apis/${GROUP}/${VERSION}/${PLURAL}`,
      { resourceVersion: cluster.store.resourceVersion() },
      (phase, object: KubeObject) => events.push(`${phase} ${object.metadata.name} ${object.apiVersion}`),
      () => undefined,
    );
    await objects.patchClusterCustomObject(
      { ...ids, name: 'watched', body: { spec: { paused: true } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await extensions.deleteCustomResourceDefinition({ name: CRD_NAME });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const gone = await failure(objects.listClusterCustomObject(ids));

    assert.deepEqual(events, [`MODIFIED watched ${GROUP}/${VERSION}`, `DELETED watched ${GROUP}/${VERSION}`]);
    assert.equal(cluster.store.list(`${PLURAL}.${GROUP}`).length, 0);
    assert.equal(gone.code, 404);
  });

  void it('lets a service account read policies and update their status, nothing more', async () => {
    await objects.createClusterCustomObject({ ...ids, body: policy('pool4') });
    const account = cluster.kubeConfig(SA_TOKEN).makeApiClient(CustomObjectsApi);
    const read = (await account.getClusterCustomObject({ ...ids, name: 'pool4' })) as KubeObject;
    await account.listClusterCustomObject(ids);
    await account.replaceClusterCustomObjectStatus({
      ...ids,
      name: 'pool4',
      body: { ...read, status: { currentVersion: 'v' } },
    });
    const forbidden = [
      await failure(account.replaceClusterCustomObject({ ...ids, name: 'pool4', body: read })),
      await failure(
        account.patchClusterCustomObjectStatus(
          { ...ids, name: 'pool4', body: { status: {} } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
      await failure(account.createClusterCustomObject({ ...ids, body: policy('pool5') })),
      await failure(
        cluster.kubeConfig(SA_TOKEN).makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition(),
      ),
    ];

    assert.deepEqual(
      forbidden.map((entry) => [entry.code, entry.status.message]),
      [
        [
          403,
          'poolimagepolicies.policies.sim.test "pool4" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot update resource "poolimagepolicies" in API group "policies.sim.test" at the cluster scope',
        ],
        [
          403,
          'poolimagepolicies.policies.sim.test "pool4" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot patch resource "poolimagepolicies/status" in API group "policies.sim.test" at the cluster scope',
        ],
        [
          403,
          'poolimagepolicies.policies.sim.test is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot create resource "poolimagepolicies" in API group "policies.sim.test" at the cluster scope',
        ],
        [
          403,
          'customresourcedefinitions.apiextensions.k8s.io is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot list resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope',
        ],
      ],
    );
  });

  void it('records and finds Events about a policy by its kind and name', async () => {
    const created = (await objects.createClusterCustomObject({
      ...ids,
      body: policy('pool6'),
    })) as KubeObject;
    const core = cluster.kubeConfig(ADMIN_TOKEN).makeApiClient(CoreV1Api);
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'pool6.1' },
        involvedObject: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'PoolImagePolicy',
          name: 'pool6',
          uid: created.metadata.uid ?? '',
        },
        reason: 'InvalidSpec',
        message: 'spec.keepGenerations: must be at least 1',
        type: 'Warning',
      },
    });
    const found = await core.listEventForAllNamespaces({
      fieldSelector: `involvedObject.kind=PoolImagePolicy,involvedObject.name=pool6,involvedObject.uid=${created.metadata.uid ?? ''}`,
    });

    assert.deepEqual(
      found.items.map((event) => [event.reason, event.involvedObject.apiVersion]),
      [['InvalidSpec', `${GROUP}/${VERSION}`]],
    );
  });
});
