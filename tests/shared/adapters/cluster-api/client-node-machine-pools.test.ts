/**
 * The MachinePools adapter over HTTPS against a minimal management-cluster API server on 127.0.0.1 that
 * serves the Cluster API paths the adapter calls (GET, list with a label selector, JSON patch with `test`,
 * create, delete) and discovery (`GET /apis`, cluster.x-k8s.io at v1beta1 unless told v1beta2 too): the
 * requests it sends (paths, verbs, bodies) and how answers map to the port's results and errors.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';

import {
  type ClientNodeClusterApi,
  clientNodeClusterApi,
} from '../../../../shared/adapters/cluster-api/client-node-cluster-api.js';
import { NotFoundError, TerminalError, TransientError } from '../../../../shared/domain/errors.js';
import type { CanaryPoolSpec } from '../../../../shared/ports/cluster-api/machine-pools.js';
import { generateSimTls } from '../../../../sim/world/tls.js';
import { clusterApiFixture } from './fixtures.js';

const TOKEN = 'management-token';
const NS = 'default';

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly contentType: string | undefined;
  readonly body: unknown;
}

/** `/apis/<group>/<version>/namespaces/<ns>/<plural>[/<name>]` → the object's key `<plural>/<name>`. */
const PATH = /^\/apis\/[^/]+\/v1beta[12]\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/;

class FakeManagementServer {
  readonly requests: Recorded[] = [];
  /** `GET /apis` requests, kept apart from the object requests. */
  discoveries = 0;
  /** The versions discovery lists for cluster.x-k8s.io, the preferred first. */
  coreVersions: readonly string[] = ['v1beta1'];
  objects = new Map<string, Record<string, unknown>>();
  /** One-shot answers: the next request matching `method path` gets this status and body. */
  failures: { method: string; path: string; status: number; body: unknown }[] = [];
  #version = 100;
  server: Server | undefined;
  port = 0;

  put(plural: string, object: Record<string, unknown>): void {
    const metadata = object['metadata'] as Record<string, unknown>;
    this.#version += 1;
    metadata['resourceVersion'] = String(this.#version);
    this.objects.set(`${plural}/${String(metadata['name'])}`, object);
  }

  get(plural: string, name: string): Record<string, unknown> | undefined {
    return this.objects.get(`${plural}/${name}`);
  }

  async start(certPem: string, keyPem: string): Promise<void> {
    this.server = createServer({ cert: certPem, key: keyPem }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const url = new URL(request.url ?? '/', 'https://localhost');
        const text = Buffer.concat(chunks).toString('utf8');
        const recorded: Recorded = {
          method: request.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          contentType: request.headers['content-type'],
          body: text === '' ? undefined : (JSON.parse(text) as unknown),
        };
        if (recorded.method === 'GET' && recorded.path === '/apis') this.discoveries += 1;
        else this.requests.push(recorded);
        const answer =
          request.headers.authorization === `Bearer ${TOKEN}`
            ? this.#answer(recorded)
            : { status: 401, body: status(401, 'Unauthorized', 'Unauthorized') };
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  #groups(): Record<string, unknown> {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        groupOf('cluster.x-k8s.io', this.coreVersions),
        groupOf('infrastructure.cluster.x-k8s.io', ['v1beta1']),
        groupOf('bootstrap.cluster.x-k8s.io', ['v1beta1']),
      ],
    };
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  #answer(request: Recorded): { status: number; body: unknown } {
    const failure = this.failures.findIndex((f) => f.method === request.method && f.path === request.path);
    if (failure >= 0) {
      const [entry] = this.failures.splice(failure, 1);
      if (entry !== undefined) return { status: entry.status, body: entry.body };
    }
    if (request.method === 'GET' && request.path === '/apis') return { status: 200, body: this.#groups() };
    const match = PATH.exec(request.path);
    const plural = match?.[2] ?? '';
    const name = match?.[3];
    const key = `${plural}/${name ?? ''}`;
    const existing = this.objects.get(key);
    const notFound = { status: 404, body: status(404, 'NotFound', `${plural} "${name ?? ''}" not found`) };
    switch (request.method) {
      case 'GET': {
        if (name !== undefined) return existing === undefined ? notFound : { status: 200, body: existing };
        const selector = request.query.get('labelSelector') ?? '';
        const wanted = selector === '' ? [] : selector.split(',').map((pair) => pair.split('='));
        const items = [...this.objects.entries()]
          .filter(([k]) => k.startsWith(`${plural}/`))
          .map(([, object]) => object)
          .filter((object) => {
            const labels = (object['metadata'] as { labels?: Record<string, string> }).labels ?? {};
            return wanted.every(([k, v]) => k !== undefined && labels[k] === v);
          });
        return { status: 200, body: { apiVersion: 'v1', kind: 'List', items, metadata: {} } };
      }
      case 'PATCH': {
        if (existing === undefined) return notFound;
        const copy = structuredClone(existing);
        for (const op of request.body as { op: string; path: string; value: unknown }[]) {
          if (op.op === 'test') {
            const current = (copy['metadata'] as { resourceVersion?: string }).resourceVersion;
            if (current !== op.value) {
              return {
                status: 422,
                body: {
                  ...status(422, 'Invalid', 'the server rejected our request due to an error in our request'),
                  details: {
                    causes: [
                      {
                        reason: 'UnexpectedServerResponse',
                        message: `testing value ${op.path} failed: test failed`,
                      },
                    ],
                  },
                },
              };
            }
          } else if (op.op === 'add' && op.path === '/spec/template/image') {
            ((copy['spec'] as Record<string, unknown>)['template'] as Record<string, unknown>)['image'] =
              op.value;
          }
        }
        this.put(plural, copy);
        return { status: 200, body: copy };
      }
      case 'POST': {
        const body = request.body as { metadata: { name: string } };
        if (this.objects.has(`${plural}/${body.metadata.name}`)) {
          return {
            status: 409,
            body: status(409, 'AlreadyExists', `${plural} "${body.metadata.name}" already exists`),
          };
        }
        const stored = structuredClone(body) as Record<string, unknown>;
        (stored['metadata'] as Record<string, unknown>)['uid'] = `uid-${plural}-${body.metadata.name}`;
        this.put(plural, stored);
        return { status: 201, body: stored };
      }
      case 'DELETE': {
        if (existing === undefined) return notFound;
        this.objects.delete(key);
        return { status: 200, body: existing };
      }
      default:
        return { status: 405, body: status(405, 'MethodNotAllowed', 'no') };
    }
  }
}

function groupOf(name: string, versions: readonly string[]): Record<string, unknown> {
  const entries = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

function ampVersionOf(fake: FakeManagementServer): string {
  const stored = fake.get('azuremachinepools', 'capz-pool0') as { metadata: { resourceVersion: string } };
  return stored.metadata.resourceVersion;
}

const AMP = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/azuremachinepools';
const MP = '/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools';
const KC = '/apis/bootstrap.cluster.x-k8s.io/v1beta1/namespaces/default/kubeadmconfigs';
const AMPM = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/azuremachinepoolmachines';

void describe('ClientNodeMachinePools over HTTPS', () => {
  const fake = new FakeManagementServer();
  const tls = generateSimTls(new Date());
  let api: ClientNodeClusterApi;
  const ampVersion = (): string => ampVersionOf(fake);

  before(async () => {
    await fake.start(tls.certPem, tls.keyPem);
    api = clientNodeClusterApi({
      server: `https://127.0.0.1:${fake.port}`,
      caPem: tls.caPem,
      token: TOKEN,
      tlsServerName: 'localhost',
      cluster: 'capz (management)',
    });
  });
  after(async () => {
    await api.close();
    await fake.stop();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.failures = [];
    fake.objects = new Map();
    fake.put('machinepools', clusterApiFixture('machinepool.json'));
    fake.put('azuremachinepools', clusterApiFixture('azuremachinepool.json'));
    fake.put('kubeadmconfigs', clusterApiFixture('kubeadmconfig.json'));
    const machine = clusterApiFixture('azuremachinepoolmachine.json');
    fake.put('azuremachinepoolmachines', machine);
    const other = structuredClone(machine);
    (other['metadata'] as Record<string, unknown>)['name'] = 'other-0';
    (other['metadata'] as { labels: Record<string, string> }).labels[
      'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool'
    ] = 'other';
    fake.put('azuremachinepoolmachines', other);
  });

  void it('finds the pool of a scale set: the AzureMachinePool of that name, then its owner', async () => {
    const view = await api.machinePools.findByScaleSet(NS, 'capz-pool0');

    assert.deepEqual(
      fake.requests.map((r) => `${r.method} ${r.path}`),
      [`GET ${AMP}/capz-pool0`, `GET ${MP}/capz-pool0`],
    );
    assert.equal(view.name, 'capz-pool0');
    assert.equal(view.autoscaled, true);
    assert.equal(view.image?.kind, 'compute-gallery');
    assert.equal(view.resourceVersion, ampVersion());
  });

  void it('answers NotFoundError when no AzureMachinePool has the name', async () => {
    const error = await rejection(api.machinePools.findByScaleSet(NS, 'aks-pool'));
    assert.ok(error instanceof NotFoundError);
    assert.equal(error.code, 'AzureMachinePoolNotFound');
    assert.match(error.message, /^reading AzureMachinePool default\/aks-pool: not found/);
  });

  void it('writes the whole image with a JSON patch conditional on the resourceVersion', async () => {
    const image = {
      id: '/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/galleries/g/images/d/versions/2.0.0',
    };

    const version = ampVersion();
    assert.equal(await api.machinePools.setTemplateImage(NS, 'capz-pool0', image, version), 'set');

    const [patch] = fake.requests;
    assert.equal(patch?.method, 'PATCH');
    assert.equal(patch.path, `${AMP}/capz-pool0`);
    assert.equal(patch.contentType, 'application/json-patch+json');
    assert.deepEqual(patch.body, [
      { op: 'test', path: '/metadata/resourceVersion', value: version },
      { op: 'add', path: '/spec/template/image', value: image },
    ]);
    const stored = fake.get('azuremachinepools', 'capz-pool0') as { spec: { template: { image: unknown } } };
    assert.deepEqual(stored.spec.template.image, image, 'computeGallery is gone, not merged');
  });

  void it('answers conflict when the object changed (failed test, or a 409 from the store)', async () => {
    assert.equal(await api.machinePools.setTemplateImage(NS, 'capz-pool0', { id: 'x' }, '1'), 'conflict');
    fake.failures.push({
      method: 'PATCH',
      path: `${AMP}/capz-pool0`,
      status: 409,
      body: status(409, 'Conflict', 'the object has been modified'),
    });
    assert.equal(
      await api.machinePools.setTemplateImage(NS, 'capz-pool0', { id: 'x' }, ampVersion()),
      'conflict',
    );
  });

  void it('lists the machines of one AzureMachinePool by CAPZ label', async () => {
    const machines = await api.machinePools.listMachines(NS, 'capz-pool0');

    assert.deepEqual(
      machines.map((m) => m.name),
      ['capz-pool0-0'],
    );
    const [list] = fake.requests;
    assert.equal(list?.path, AMPM);
    assert.equal(
      list.query.get('labelSelector'),
      'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool=capz-pool0',
    );
  });

  const canary: CanaryPoolSpec = {
    namespace: NS,
    source: { machinePool: 'capz-pool0', azureMachinePool: 'capz-pool0' },
    name: 'capz-pool0-canary',
    replicas: 1,
    image: { computeGallery: { gallery: 'ours', name: 'capz-capz-pool0', version: '2026.1127.1' } },
    labels: { 'vmss-prototype.io/run': 'run-1' },
  };

  void it('creates the canary: KubeadmConfig, AzureMachinePool, MachinePool cloned, idempotently', async () => {
    await api.machinePools.createCanaryPool(canary);

    const posts = fake.requests.filter((r) => r.method === 'POST');
    assert.deepEqual(
      posts.map((r) => r.path),
      [KC, AMP, MP],
    );
    const labels = {
      'vmss-prototype.io/run': 'run-1',
      'cluster.x-k8s.io/cluster-name': 'capz',
      'vmss-prototype.io/canary-of': 'capz-pool0',
    };
    for (const post of posts) {
      const metadata = (post.body as { metadata: unknown }).metadata;
      assert.deepEqual(metadata, { name: 'capz-pool0-canary', namespace: NS, labels });
      assert.equal((post.body as { status?: unknown }).status, undefined);
    }
    const [config, amp, mp] = posts.map((p) => p.body as { spec: Record<string, unknown> });
    assert.deepEqual(config?.spec, (clusterApiFixture('kubeadmconfig.json') as { spec: unknown }).spec);
    assert.equal(amp?.spec['providerIDList'], undefined);
    assert.deepEqual((amp?.spec['template'] as { image: unknown }).image, canary.image);
    assert.equal((amp?.spec['template'] as { vmSize: string }).vmSize, 'Standard_D2s_v3');
    assert.equal(mp?.spec['replicas'], 1);
    assert.equal(mp?.spec['providerIDList'], undefined);
    const template = (mp?.spec['template'] as { spec: Record<string, unknown> }).spec;
    assert.deepEqual(template['bootstrap'], {
      configRef: {
        apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
        kind: 'KubeadmConfig',
        name: 'capz-pool0-canary',
      },
    });
    assert.deepEqual(template['infrastructureRef'], {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'AzureMachinePool',
      name: 'capz-pool0-canary',
    });
    assert.equal(template['version'], 'v1.31.4');
    const created = fake.get('machinepools', 'capz-pool0-canary') as { metadata: { annotations?: unknown } };
    assert.equal(created.metadata.annotations, undefined, 'the autoscaler annotations are not copied');

    fake.requests.length = 0;
    await api.machinePools.createCanaryPool(canary);
    assert.deepEqual(
      fake.requests.filter((r) => r.method === 'POST').map((r) => r.path),
      [KC, AMP, MP],
      'a second call finds them all and answers quietly',
    );
  });

  void it('lists canary pools by label and deletes them, MachinePool first; missing objects are no-ops', async () => {
    await api.machinePools.createCanaryPool(canary);
    assert.deepEqual(await api.machinePools.listCanaryPools(NS, { 'vmss-prototype.io/run': 'run-1' }), [
      'capz-pool0-canary',
    ]);
    assert.deepEqual(await api.machinePools.listCanaryPools(NS, { 'vmss-prototype.io/run': 'run-2' }), []);

    fake.requests.length = 0;
    await api.machinePools.deleteCanaryPool(NS, 'capz-pool0-canary');
    const deletes = fake.requests.filter((r) => r.method === 'DELETE');
    assert.deepEqual(
      deletes.map((r) => r.path),
      [`${MP}/capz-pool0-canary`, `${AMP}/capz-pool0-canary`, `${KC}/capz-pool0-canary`],
    );
    assert.deepEqual(deletes[0]?.body, { preconditions: { uid: 'uid-machinepools-capz-pool0-canary' } });
    assert.equal(fake.get('machinepools', 'capz-pool0-canary'), undefined);

    await api.machinePools.deleteCanaryPool(NS, 'capz-pool0-canary');
  });

  void it('refuses to delete a pool that is not a canary', async () => {
    const error = await rejection(api.machinePools.deleteCanaryPool(NS, 'capz-pool0'));

    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'NotACanaryPool');
    assert.equal(fake.requests.filter((r) => r.method === 'DELETE').length, 0);
    assert.ok(fake.get('machinepools', 'capz-pool0'));
  });

  const errors: {
    status: number;
    reason: string;
    message: string;
    kind: unknown;
    code: string;
    text: RegExp;
  }[] = [
    {
      status: 403,
      reason: 'Forbidden',
      message:
        'machinepools.cluster.x-k8s.io "capz-pool0" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot get resource "machinepools" in API group "cluster.x-k8s.io" in the namespace "default"',
      kind: TerminalError,
      code: 'ClusterForbidden',
      text: /may not get machinepools\.cluster\.x-k8s\.io in the namespace "default"/,
    },
    {
      status: 500,
      reason: 'InternalError',
      message: 'etcd timeout',
      kind: TransientError,
      code: 'KubeServerError',
      text: /API server error 500: etcd timeout/,
    },
    {
      status: 404,
      reason: 'NotFound',
      message: 'gone',
      kind: NotFoundError,
      code: 'MachinePoolNotFound',
      text: /^reading MachinePool default\/capz-pool0: not found/,
    },
  ];
  for (const { status: code, reason, message, kind, code: expected, text } of errors) {
    void it(`maps HTTP ${code} on the owner's read to ${expected}`, async () => {
      fake.failures.push({
        method: 'GET',
        path: `${MP}/capz-pool0`,
        status: code,
        body: status(code, reason, message),
      });

      const error = await rejection(api.machinePools.findByScaleSet(NS, 'capz-pool0'));

      assert.ok(error instanceof (kind as typeof Error));
      assert.equal((error as TerminalError).code, expected);
      assert.match(error.message, text);
    });
  }

  void it('verifies the server certificate for tlsServerName', async () => {
    const misnamed = clientNodeClusterApi({
      server: `https://127.0.0.1:${fake.port}`,
      caPem: tls.caPem,
      token: TOKEN,
      tlsServerName: 'not-the-server.example.com',
    });
    try {
      const error = await rejection(misnamed.machinePools.findByScaleSet(NS, 'capz-pool0'));
      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'ClusterTlsVerificationFailed');
    } finally {
      await misnamed.close();
    }
  });

  void it('maps 409 on a create other than AlreadyExists to a transient conflict', async () => {
    fake.failures.push({ method: 'POST', path: KC, status: 409, body: status(409, 'Conflict', 'try again') });
    const error = await rejection(api.machinePools.createCanaryPool(canary));
    assert.ok(error instanceof TransientError);
    assert.equal(error.code, 'KubeConflict');
  });

  void it("discovers the MachinePools' version once per connection: v1beta1 where v1beta2 is not served", async () => {
    await api.machinePools.findByScaleSet(NS, 'capz-pool0');
    await api.machinePools.listCanaryPools(NS, {});
    assert.equal(fake.discoveries, 1);
    assert.ok(fake.requests.every((r) => !r.path.includes('/v1beta2/')));
  });

  void it('reads and writes MachinePools at v1beta2 where discovery offers it, after a failed discovery', async () => {
    const current = clientNodeClusterApi({
      server: `https://127.0.0.1:${fake.port}`,
      caPem: tls.caPem,
      token: TOKEN,
      tlsServerName: 'localhost',
      cluster: 'capz (management)',
    });
    try {
      fake.coreVersions = ['v1beta2', 'v1beta1'];
      const pool = clusterApiFixture('machinepool.json') as {
        apiVersion: string;
        spec: { template: { spec: Record<string, unknown> } };
      };
      pool.apiVersion = 'cluster.x-k8s.io/v1beta2';
      pool.spec.template.spec['bootstrap'] = {
        configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name: 'capz-pool0' },
      };
      pool.spec.template.spec['infrastructureRef'] = {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'AzureMachinePool',
        name: 'capz-pool0',
      };
      fake.put('machinepools', pool);
      fake.failures.push({
        method: 'GET',
        path: '/apis',
        status: 503,
        body: status(503, 'ServiceUnavailable', 'x'),
      });
      const error = await rejection(current.machinePools.findByScaleSet(NS, 'capz-pool0'));
      assert.ok(error instanceof TransientError, 'a failed discovery is transient');
      fake.requests.length = 0;

      assert.equal((await current.machinePools.findByScaleSet(NS, 'capz-pool0')).name, 'capz-pool0');
      await current.machinePools.createCanaryPool(canary);

      const v1beta2 = MP.replace('/v1beta1/', '/v1beta2/');
      assert.deepEqual(
        fake.requests
          .filter((r) => r.path.startsWith('/apis/cluster.x-k8s.io/'))
          .map((r) => `${r.method} ${r.path}`),
        [`GET ${v1beta2}/capz-pool0`, `GET ${v1beta2}/capz-pool0`, `POST ${v1beta2}`],
      );
      const posted = fake.requests.at(-1)?.body as {
        apiVersion: string;
        spec: { template: { spec: Record<string, unknown> } };
      };
      assert.equal(posted.apiVersion, 'cluster.x-k8s.io/v1beta2');
      assert.deepEqual(posted.spec.template.spec['bootstrap'], {
        configRef: {
          apiGroup: 'bootstrap.cluster.x-k8s.io',
          kind: 'KubeadmConfig',
          name: 'capz-pool0-canary',
        },
      });
      assert.deepEqual(posted.spec.template.spec['infrastructureRef'], {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'AzureMachinePool',
        name: 'capz-pool0-canary',
      });
    } finally {
      fake.coreVersions = ['v1beta1'];
      await current.close();
    }
  });
});
