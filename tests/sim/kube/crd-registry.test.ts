// What the simulated API server serves from its CRDs over HTTP: naming conflicts, several versions,
// namespaced custom resources, Table output, the OpenAPI documents and CRD updates.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { compareKubeVersions } from '../../../sim/kube/crd-registry.js';
import { CRD_NAME, GROUP, PLURAL, policy, poolImagePolicyCrd, VERSION, widgetCrd } from './crd-fixtures.js';
import type { TestCluster } from './fixtures.js';
import { ADMIN_TOKEN, namespaceObject, startTestCluster } from './fixtures.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

void describe('the custom resources a CRD registers', () => {
  let cluster: TestCluster;

  async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${cluster.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${ADMIN_TOKEN}`,
        'Content-Type': 'application/json',
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

  void before(async () => {
    cluster = await startTestCluster();
    cluster.store.create('namespaces', namespaceObject('default'));
    cluster.store.create('namespaces', namespaceObject('team'));
  });
  void after(() => cluster.close());
  void beforeEach(() => {
    for (const crd of cluster.store.list('customresourcedefinitions'))
      cluster.store.remove('customresourcedefinitions', undefined, crd.metadata.name);
  });

  void it('sorts versions GA first, then beta, then alpha, then others by name', () => {
    assert.deepEqual(
      ['v1alpha1', 'foo', 'v2beta1', 'v1', 'v10', 'v11alpha2', 'bar'].sort(compareKubeVersions),
      ['v10', 'v1', 'v2beta1', 'v11alpha2', 'v1alpha1', 'bar', 'foo'],
    );
  });

  void it('refuses names another CRD of the group accepted and serves nothing under them', async () => {
    await call('POST', CRDS, poolImagePolicyCrd());
    const rival = poolImagePolicyCrd();
    rival.metadata.name = `rivals.${GROUP}`;
    (rival.spec as { names: unknown }).names = {
      plural: 'rivals',
      singular: 'rival',
      kind: 'PoolImagePolicy',
    };
    await call('POST', CRDS, rival);

    const read = await call('GET', `${CRDS}/rivals.${GROUP}`);
    const conditions = (read.body.status as { conditions: Record<string, unknown>[] }).conditions;

    assert.deepEqual(
      conditions.map((condition) => [condition.type, condition.status, condition.reason, condition.message]),
      [
        ['NamesAccepted', 'False', 'KindConflict', '"PoolImagePolicy" is already in use'],
        ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
      ],
    );
    assert.equal((await call('GET', `/apis/${GROUP}/${VERSION}/rivals`)).status, 404);
  });

  void it('serves every served version, prefers the highest and answers in the version asked for', async () => {
    const crd = poolImagePolicyCrd();
    const [first] = (crd.spec as { versions: Record<string, unknown>[] }).versions;
    (crd.spec as { versions: unknown[] }).versions = [
      { ...first, storage: false },
      { ...first, name: 'v1', storage: true },
      { ...first, name: 'v2', served: false, storage: false },
    ];
    await call('POST', CRDS, crd);
    await call('POST', `/apis/${GROUP}/v1/${PLURAL}`, { ...policy('p'), apiVersion: `${GROUP}/v1` });

    const group = await call('GET', `/apis/${GROUP}`);
    const old = await call('GET', `/apis/${GROUP}/${VERSION}/${PLURAL}/p`);

    assert.deepEqual(group.body.preferredVersion, { groupVersion: `${GROUP}/v1`, version: 'v1' });
    assert.deepEqual(
      (group.body.versions as { version: string }[]).map((entry) => entry.version),
      ['v1', VERSION],
    );
    assert.equal(old.body.apiVersion, `${GROUP}/${VERSION}`);
    assert.equal((await call('GET', `/apis/${GROUP}/v2/${PLURAL}`)).status, 404);
    assert.deepEqual(
      ((await call('GET', `${CRDS}/${CRD_NAME}`)).body.status as { storedVersions: string[] }).storedVersions,
      ['v1'],
    );
  });

  void it('serves namespaced custom resources, keeps preserved fields and deletes them with their namespace', async () => {
    await call('POST', CRDS, widgetCrd());
    const widget = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { any: { thing: 1 } },
    };
    const created = await call('POST', `/apis/${GROUP}/${VERSION}/namespaces/team/widgets`, widget);
    const all = await call('GET', `/apis/${GROUP}/${VERSION}/widgets`);
    const clusterScoped = await call('GET', `/apis/${GROUP}/${VERSION}/widgets/w`);
    await call('DELETE', '/api/v1/namespaces/team');

    assert.equal(created.status, 201);
    assert.deepEqual(created.body.spec, { any: { thing: 1 } });
    assert.equal((created.body.metadata as { namespace: string }).namespace, 'team');
    assert.deepEqual(
      (all.body.items as KubeObject[]).map((item) => item.metadata.name),
      ['w'],
    );
    assert.equal(clusterScoped.status, 404);
    assert.equal(cluster.store.list(`widgets.${GROUP}`).length, 0);
    cluster.store.create('namespaces', namespaceObject('team'));
  });

  void it('prints typed cells in a Table, nothing for a missing value', async () => {
    await call('POST', CRDS, poolImagePolicyCrd());
    await call('POST', `/apis/${GROUP}/${VERSION}/${PLURAL}`, policy('t'));
    await call(
      'PATCH',
      `/apis/${GROUP}/${VERSION}/${PLURAL}/t/status`,
      { status: { freshnessDays: 4 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    cluster.time.advance(7200);

    const table = await call('GET', `/apis/${GROUP}/${VERSION}/${PLURAL}`, undefined, { Accept: TABLE });

    assert.deepEqual(
      (table.body.columnDefinitions as { name: string; type: string; priority: number }[]).map((column) => [
        column.name,
        column.type,
        column.priority,
      ]),
      [
        ['Name', 'string', 0],
        ['Pool', 'string', 0],
        ['Version', 'string', 0],
        ['Freshness', 'integer', 1],
        ['Fresh', 'string', 0],
        ['Last Run', 'date', 0],
        ['Age', 'date', 0],
      ],
    );
    assert.deepEqual((table.body.rows as { cells: unknown[] }[])[0]?.cells, [
      't',
      't',
      null,
      4,
      null,
      null,
      '120m',
    ]);
  });

  void it('describes the kind in OpenAPI v3 and v2, and follows a CRD update', async () => {
    await call('POST', CRDS, poolImagePolicyCrd());
    const definition = `test.sim.policies.${VERSION}.PoolImagePolicy`;
    const index = await call('GET', '/openapi/v3');
    const path = `apis/${GROUP}/${VERSION}`;
    const v3 = await call('GET', `/openapi/v3/${path}`);
    const schemas = (v3.body.components as { schemas: Record<string, Record<string, unknown>> }).schemas;

    assert.match(
      String((index.body.paths as Record<string, { serverRelativeURL: string }>)[path]?.serverRelativeURL),
      /^\/openapi\/v3\/apis\/policies\.sim\.test\/v1alpha1\?hash=/,
    );
    assert.deepEqual(schemas[definition]?.['x-kubernetes-group-version-kind'], [
      { group: GROUP, version: VERSION, kind: 'PoolImagePolicy' },
    ]);
    assert.ok(`/apis/${GROUP}/${VERSION}/${PLURAL}/{name}/status` in (v3.body.paths as object));

    const crd = (await call('GET', `${CRDS}/${CRD_NAME}`)).body as unknown as KubeObject;
    const spec = crd.spec as {
      versions: {
        schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } };
      }[];
    };
    spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.window = {
      type: 'string',
      default: 'nights',
    };
    const updated = await call('PUT', `${CRDS}/${CRD_NAME}`, crd);
    const created = await call('POST', `/apis/${GROUP}/${VERSION}/${PLURAL}`, policy('u'));
    const v2 = await call('GET', '/openapi/v2');
    const v2Spec = (
      v2.body.definitions as Record<string, { properties: { spec: { properties: Record<string, unknown> } } }>
    )[definition];
    // v3 follows it too: the documents are built once per served state, and the update is a new state.
    const indexAfter = await call('GET', '/openapi/v3');
    const v3After = await call('GET', `/openapi/v3/${path}`);
    const v3Spec = (
      v3After.body.components as {
        schemas: Record<string, { properties: { spec: { properties: Record<string, unknown> } } }>;
      }
    ).schemas[definition];
    const urlOf = (reply: typeof index): string =>
      String((reply.body.paths as Record<string, { serverRelativeURL: string }>)[path]?.serverRelativeURL);

    assert.equal(updated.status, 200);
    assert.equal((updated.body.metadata as { generation: number }).generation, 2);
    assert.equal((created.body.spec as { window: string }).window, 'nights');
    assert.deepEqual(v2Spec?.properties.spec.properties.window, { type: 'string', default: 'nights' });
    assert.deepEqual(v3Spec?.properties.spec.properties.window, { type: 'string', default: 'nights' });
    assert.notEqual(urlOf(indexAfter), urlOf(index), 'the index names the changed document by a new hash');
  });

  void it('applies a policy server-side: defaults added, status ignored, the applier owning what it sent', async () => {
    await call('POST', CRDS, poolImagePolicyCrd());
    const response = await fetch(
      `${cluster.url}/apis/${GROUP}/${VERSION}/${PLURAL}/applied?fieldManager=tester`,
      {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/apply-patch+yaml' },
        body: JSON.stringify({ ...policy('applied'), status: { currentVersion: 'forged' } }),
      },
    );
    const applied = (await response.json()) as KubeObject;

    assert.equal(response.status, 201);
    assert.deepEqual(applied.spec, {
      pool: 'applied',
      captureMode: 'offline',
      keepGenerations: 3,
      paused: false,
    });
    assert.equal(applied.status, undefined);
    assert.deepEqual(
      (applied.metadata.managedFields as { manager: string; fieldsV1: unknown }[]).map((entry) => [
        entry.manager,
        entry.fieldsV1,
      ]),
      [['tester', { 'f:spec': { 'f:pool': {} } }]],
    );
  });

  void it('warns that CEL rules are not evaluated', async () => {
    const crd = poolImagePolicyCrd();
    const schema = (crd.spec as { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] })
      .versions[0]!.schema.openAPIV3Schema;
    (schema.properties as Record<string, Record<string, unknown>>).spec!['x-kubernetes-validations'] = [
      { rule: 'self.pool != ""' },
    ];
    const response = await fetch(`${cluster.url}${CRDS}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(crd),
    });

    assert.equal(response.status, 201);
    assert.equal(
      response.headers.get('warning'),
      '299 - "the simulated API server does not evaluate x-kubernetes-validations (CEL) rules: spec.versions[0].schema.openAPIV3Schema.properties[spec]"',
    );
  });
});
