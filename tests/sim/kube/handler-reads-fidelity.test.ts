// Read paths of the simulated API server where real clients saw a difference, run with the
// clients themselves: the protobuf /openapi/v2 (curl, kubectl explain's v2 output, kubectl create
// --validate=strict), the scheduler's and controllers' Events (kubectl get events), deletecollection
// (curl and client-node) and streaming-list watches with sendInitialEvents (curl and client-node).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { CoreV1Api, Watch } from '@kubernetes/client-node';

import type { KubeObject } from '../../../sim/contracts.js';
import { isTerminating, nodeNameOf } from '../../../sim/kube/objects.js';
import type { TestCluster } from './fixtures.js';
import { ADMIN_TOKEN, nodeObject, replicaSetObject, runningPod, startTestCluster } from './fixtures.js';
import { type KubectlSession, startKubectlSession } from './kubectl-session.js';
import { bytes, named, text } from './protobuf-reader.js';

const PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

void describe('real clients against the simulated API server: read paths', () => {
  let cluster: TestCluster;
  let directory: string;
  let ticker: NodeJS.Timeout | undefined;

  let session: KubectlSession;
  const run: KubectlSession['run'] = (command, args) => session.run(command, args);
  const kubectl = (...args: string[]) => session.kubectl(...args);

  /** curl with the admin token; `-w` appends the status code and content type on a last line. */
  async function curl(
    path: string,
    ...args: string[]
  ): Promise<{ status: number; type: string; body: Buffer }> {
    const result = await run('curl', [
      '-sS',
      '--cacert',
      join(directory, 'ca.crt'),
      '-H',
      `Authorization: Bearer ${ADMIN_TOKEN}`,
      '-w',
      '\n%{http_code} %{content_type}',
      ...args,
      `${cluster.url}${path}`,
    ]);
    assert.equal(result.code, 0, result.stderr);
    const cut = result.stdout.lastIndexOf('\n');
    const [status = '0', type = ''] = result.stdout
      .subarray(cut + 1)
      .toString()
      .split(' ');
    return { status: Number(status), type, body: result.stdout.subarray(0, cut) };
  }

  before(async () => {
    session = await startKubectlSession({ namespaces: ['default', 'apps', 'batch'], rbac: false });
    ({ cluster, directory } = session);
    const { store } = cluster;
    store.create('nodes', nodeObject('vmss000000'));
    store.create('nodes', nodeObject('vmss000001'));
    store.create('replicasets', replicaSetObject('apps', 'web-5d8f', 2, { app: 'web' }));
    cluster.time.advance(3);
    ticker = setInterval(() => cluster.time.advance(1), 100);
  });

  after(async () => {
    if (ticker) clearInterval(ticker);
    await session.close();
  });

  void describe('/openapi/v2 as protobuf', () => {
    void it('answers the protobuf Accept kubectl 1.20–1.28 send with the gnostic Document', async () => {
      const json = await curl('/openapi/v2');
      const proto = await curl('/openapi/v2', '-H', `Accept: ${PROTOBUF_ACCEPT}`);

      assert.equal(proto.status, 200);
      assert.equal(proto.type, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
      const document = JSON.parse(json.body.toString()) as {
        paths: Record<string, unknown>;
        definitions: Record<string, unknown>;
      };
      assert.equal(text(proto.body, 1), '2.0');
      const paths = named(bytes(proto.body, 8)[0] ?? Buffer.alloc(0), 2);
      assert.deepEqual([...paths.keys()], Object.keys(document.paths));
      const pods = named(bytes(proto.body, 9)[0] ?? Buffer.alloc(0), 1).get('io.k8s.api.core.v1.Pod');
      const gvk = named(pods ?? Buffer.alloc(0), 31).get('x-kubernetes-group-version-kind');
      assert.deepEqual(JSON.parse(text(gvk ?? Buffer.alloc(0), 2) ?? ''), [
        { group: '', version: 'v1', kind: 'Pod' },
      ]);
    });

    void it('kubectl explain reads the v2 document, and create --validate=strict still works', async () => {
      const explained = await kubectl('explain', 'pods.spec.nodeName', '--output=plaintext-openapiv2');
      writeFileSync(
        join(directory, 'pod.yaml'),
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\n  namespace: batch\nspec:\n  containers:\n  - name: main\n    image: nginx:1.27\n',
      );
      const created = await kubectl('create', '--validate=strict', '-f', join(directory, 'pod.yaml'));

      assert.equal(explained.code, 0, explained.stderr);
      assert.match(explained.stdout.toString(), /FIELD:\s+nodeName <string>/);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout.toString(), /pod\/probe created/);
    });

    void it('refuses a media type it has no form for with 406', async () => {
      const refused = await curl('/openapi/v2', '-H', 'Accept: application/vnd.kubernetes.protobuf');

      assert.equal(refused.status, 406);
    });
  });

  void describe('Events of the scheduler and the controllers', () => {
    void it('records Scheduled for every binding and SuccessfulCreate for every controller pod', async () => {
      cluster.store.create('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'loose', namespace: 'batch' },
        spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
      });
      cluster.time.advance(1);
      const bound = cluster.store.get('pods', 'batch', 'loose');
      const result = await kubectl('get', 'events', '-A', '-o', 'json');
      const table = await kubectl('get', 'events', '-n', 'batch', '-o', 'wide');

      assert.equal(result.code, 0, result.stderr);
      const events = (JSON.parse(result.stdout.toString()) as { items: Record<string, unknown>[] }).items;
      const about = (name: string, reason: string): Record<string, unknown> | undefined =>
        events.find(
          (event) => event.reason === reason && (event.involvedObject as { name?: string }).name === name,
        );
      const webPods = cluster.store.list('pods', 'apps').map((pod) => pod.metadata.name);
      assert.equal(webPods.length, 2);
      for (const name of webPods) {
        assert.ok(
          events.some(
            (event) =>
              event.reason === 'SuccessfulCreate' &&
              event.message === `Created pod: ${name}` &&
              (event.involvedObject as { kind?: string; name?: string }).name === 'web-5d8f',
          ),
          `SuccessfulCreate for ${name}`,
        );
        const scheduled = about(name, 'Scheduled');
        assert.equal(scheduled?.reportingComponent, 'default-scheduler');
        assert.match(
          String(scheduled?.message),
          new RegExp(`^Successfully assigned apps/${name} to vmss00000[01]$`),
        );
      }
      const created = about('web-5d8f', 'SuccessfulCreate');
      assert.deepEqual(created?.source, { component: 'replicaset-controller' });
      const loose = about('loose', 'Scheduled');
      assert.equal(
        loose?.message,
        `Successfully assigned batch/loose to ${nodeNameOf(bound as KubeObject) ?? ''}`,
      );
      assert.equal(loose?.action, 'Binding');
      assert.deepEqual(loose?.source, {});
      assert.equal(table.code, 0, table.stderr);
      assert.match(
        table.stdout.toString(),
        /Normal\s+Scheduled\s+pod\/loose\s+default-scheduler, default-scheduler-control-plane\s+Successfully assigned batch\/loose/,
      );
    });
  });

  void describe('deletecollection', () => {
    void it('deletes what the selector matches and answers the list of deleted objects (curl)', async () => {
      const { store } = cluster;
      store.create('pods', runningPod('batch', 'job-a', 'vmss000000', { labels: { job: 'nightly' } }));
      store.create('pods', runningPod('batch', 'job-b', 'vmss000001', { labels: { job: 'nightly' } }));
      store.create('pods', runningPod('batch', 'keeper', 'vmss000001', { labels: { job: 'other' } }));

      const reply = await curl('/api/v1/namespaces/batch/pods?labelSelector=job%3Dnightly', '-X', 'DELETE');

      assert.equal(reply.status, 200, reply.body.toString());
      const list = JSON.parse(reply.body.toString()) as { kind: string; items: KubeObject[] };
      assert.equal(list.kind, 'PodList');
      assert.deepEqual(list.items.map((pod) => pod.metadata.name).sort(), ['job-a', 'job-b']);
      assert.ok(
        list.items.every((pod) => pod.metadata.deletionTimestamp !== undefined),
        'graceful deletes',
      );
      const jobA = store.get('pods', 'batch', 'job-a');
      assert.ok(jobA === undefined || isTerminating(jobA));
      const keeper = store.get('pods', 'batch', 'keeper');
      assert.ok(keeper && !isTerminating(keeper));
    });

    void it('client-node deleteCollectionNamespacedPod with a field selector; 405 where not advertised', async () => {
      const api = cluster.kubeConfig(ADMIN_TOKEN).makeApiClient(CoreV1Api);
      // client-node reads the answer as a V1Status (its OpenAPI says so); the kind says what came.
      const result = await api.deleteCollectionNamespacedPod({
        namespace: 'batch',
        fieldSelector: 'metadata.name=keeper',
        gracePeriodSeconds: 0,
      });
      const namespaces = await curl('/api/v1/namespaces', '-X', 'DELETE');
      const allNamespaces = await curl('/api/v1/pods', '-X', 'DELETE');

      assert.equal(result.kind, 'PodList');
      assert.equal(cluster.store.get('pods', 'batch', 'keeper'), undefined);
      assert.ok(cluster.store.get('pods', 'batch', 'probe'), 'the field selector spared the other pods');
      assert.equal(namespaces.status, 405);
      assert.equal(allNamespaces.status, 405);
      assert.ok(cluster.store.get('namespaces', undefined, 'batch'));
    });
  });

  void describe('watch with sendInitialEvents (streaming lists)', () => {
    void it('sends the state as ADDED, the initial-events-end BOOKMARK, then live events (client-node)', async () => {
      const seen: { type: string; name?: string; annotations?: Record<string, string>; rv?: string }[] = [];
      let controller: AbortController | undefined;
      const done = new Promise<void>((resolve, reject) => {
        void new Watch(cluster.kubeConfig(ADMIN_TOKEN))
          .watch(
            '/api/v1/namespaces/apps/pods',
            {
              sendInitialEvents: true,
              resourceVersionMatch: 'NotOlderThan',
              allowWatchBookmarks: true,
            },
            (type, object: KubeObject) => {
              seen.push({
                type,
                name: object.metadata.name,
                ...(object.metadata.annotations ? { annotations: object.metadata.annotations } : {}),
                ...(object.metadata.resourceVersion ? { rv: object.metadata.resourceVersion } : {}),
              });
              if (type === 'BOOKMARK') {
                cluster.store.create('pods', runningPod('apps', 'late', 'vmss000000'));
              }
              if (type === 'ADDED' && object.metadata.name === 'late') {
                controller?.abort();
                resolve();
              }
            },
            (error: unknown) => {
              if (error instanceof Error && error.name !== 'AbortError') reject(error);
              else if (error && !(error instanceof Error)) reject(new Error(JSON.stringify(error)));
            },
          )
          .then((started) => (controller = started));
      });
      await done;

      const initial = seen.slice(0, 2);
      assert.deepEqual(
        initial.map((event) => event.type),
        ['ADDED', 'ADDED'],
      );
      const bookmark = seen[2];
      assert.equal(bookmark?.type, 'BOOKMARK');
      assert.deepEqual(bookmark.annotations, { 'k8s.io/initial-events-end': 'true' });
      assert.ok(Number(bookmark.rv) >= Math.max(...initial.map((event) => Number(event.rv))));
      assert.deepEqual(seen[3], { type: 'ADDED', name: 'late', rv: seen[3]?.rv });
    });

    void it('refuses sendInitialEvents without resourceVersionMatch=NotOlderThan, and on a list (curl)', async () => {
      const watch = await curl('/api/v1/namespaces/apps/pods?watch=1&sendInitialEvents=true');
      const list = await curl('/api/v1/namespaces/apps/pods?sendInitialEvents=true');

      assert.equal(watch.status, 422);
      const status = JSON.parse(watch.body.toString()) as { message: string; details: { causes: unknown[] } };
      assert.equal(
        status.message,
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      );
      assert.deepEqual(status.details.causes, [
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
          field: 'resourceVersionMatch',
        },
      ]);
      assert.equal(list.status, 422);
      assert.match(list.body.toString(), /sendInitialEvents is forbidden for list/);
    });
  });
});

void describe('a server without the WatchList gate (v1.31)', () => {
  void it('answers a sendInitialEvents watch 422, so client-go falls back to list and watch', async () => {
    const cluster = await startTestCluster({ kubernetesVersion: 'v1.31.5' });
    try {
      const response = await fetch(
        `${cluster.url}/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
        { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } },
      );

      assert.equal(response.status, 422);
      assert.match(
        await response.text(),
        /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/,
      );
    } finally {
      await cluster.close();
    }
  });
});
