/**
 * The Kubernetes adapters end to end: client-node over verified TLS against the simulator's Kubernetes API server,
 * authenticated as the product's service account and authorised by the product's RBAC manifests.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  type ClientNodeKubernetes,
  clientNodeKubernetes,
  type ClientNodeKubernetesOptions,
} from '../../../../shared/adapters/kubernetes/client-node-kubernetes.js';
import { TerminalError, TransientError } from '../../../../shared/domain/errors.js';
import type { PrepPodSpec } from '../../../../shared/ports/kubernetes/index.js';
import { type RunningSimulator, SAMPLE_SCENARIO, startSimulator } from '../../../../sim/index.js';
import { parseScenarioYaml } from '../../../../sim/world/scenario.js';
import { generateSimTls } from '../../../../sim/world/tls.js';
import {
  disruptionBudget,
  namespace,
  readyNode,
  runningPod,
  SA_TOKEN,
  type SimCluster,
  startSimCluster,
  STRANGER_TOKEN,
} from './sim-cluster.js';

const NODE = 'pool0-vmss000001';
const OTHER_NODE = 'pool0-vmss000002';
const NODE_COUNT = 1203;
const PODS_ON_NODE = 523;

const PREP: PrepPodSpec = {
  namespace: 'vmss-prototype',
  name: 'prep-pool0-vmss000001',
  nodeName: NODE,
  image: 'mcr.microsoft.com/cbl-mariner/busybox:2.0',
  script: 'rm -f /etc/hostname && systemctl poweroff --force',
  labels: { 'app.kubernetes.io/name': 'vmss-prototype-prep' },
};

function nodeName(index: number): string {
  return `pool0-vmss${index.toString(36).padStart(6, '0')}`;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to fail');
}

const opened: ClientNodeKubernetes[] = [];

/** Every adapter bundle a test opens is closed after the file, so no keep-alive socket outlives it. */
function open(options: ClientNodeKubernetesOptions): ClientNodeKubernetes {
  const created = clientNodeKubernetes(options);
  opened.push(created);
  return created;
}

after(async () => {
  await Promise.all(opened.map((each) => each.close()));
});

void describe('The client-node Kubernetes adapters paging against a large simulated cluster', () => {
  let cluster: SimCluster;
  let kube: ClientNodeKubernetes;

  before(async () => {
    cluster = await startSimCluster();
    cluster.seed('namespaces', namespace('shop'), namespace('payments'), namespace('kube-system'));
    cluster.seed(
      'nodes',
      ...Array.from({ length: NODE_COUNT }, (_, index) => readyNode(nodeName(index + 1))),
    );
    // Spread over namespaces so the cross-namespace list is exercised.
    const namespaces = ['shop', 'kube-system', 'payments'];
    cluster.seed(
      'pods',
      ...Array.from({ length: PODS_ON_NODE }, (_, index) =>
        runningPod(namespaces[index % 3] ?? 'shop', `bulk-${index}`, NODE),
      ),
      ...Array.from({ length: 7 }, (_, index) => runningPod('shop', `elsewhere-${index}`, OTHER_NODE)),
    );
    kube = open({ server: cluster.server, caPem: cluster.tls.caPem, token: SA_TOKEN });
  });

  after(async () => {
    await cluster.close();
  });

  void it('lists every node across three pages of 500', async () => {
    cluster.log.reset();

    const nodes = await kube.nodes.list();

    assert.equal(nodes.length, NODE_COUNT);
    assert.equal(new Set(nodes.map((node) => node.name)).size, NODE_COUNT);
    assert.equal(cluster.log.count({ operation: 'nodes:list', status: 200 }), 3);
  });

  void it('restarts a list whose continue token has expired (410)', async () => {
    cluster.log.reset();
    cluster.faults.add({
      api: 'kube',
      operation: 'nodes:list',
      status: 410,
      code: 'Expired',
      message: 'The provided continue parameter is too old to display a consistent list result.',
      times: 1,
    });

    const nodes = await kube.nodes.list();

    assert.equal(nodes.length, NODE_COUNT);
    assert.equal(cluster.log.count({ operation: 'nodes:list', status: 410 }), 1);
    assert.equal(cluster.log.count({ operation: 'nodes:list', status: 200 }), 3);
  });

  void it('gives up with a transient error when the list keeps expiring', async () => {
    cluster.faults.add({
      api: 'kube',
      operation: 'nodes:list',
      status: 410,
      code: 'Expired',
      message: 'The provided continue parameter is too old to display a consistent list result.',
      times: 3,
    });

    const error = await rejection(kube.nodes.list());

    assert.ok(error instanceof TransientError);
    assert.equal(error.code, 'KubeResourceExpired');
  });

  void it('lists only the pods bound to the node, across namespaces, over two pages', async () => {
    cluster.log.reset();

    const pods = await kube.pods.listOnNode(NODE);

    assert.equal(pods.length, PODS_ON_NODE);
    assert.ok(pods.every((pod) => pod.name.startsWith('bulk-')));
    assert.deepEqual(new Set(pods.map((pod) => pod.namespace)), new Set(['shop', 'kube-system', 'payments']));
    assert.equal(cluster.log.count({ operation: 'pods:list', status: 200 }), 2);
  });
});

void describe('The client-node Kubernetes adapters against the simulated API server', () => {
  let cluster: SimCluster;
  let kube: ClientNodeKubernetes;
  /** A CA that did not sign the server's certificate. */
  let otherCa: string;

  before(async () => {
    cluster = await startSimCluster();
    otherCa = generateSimTls(new Date()).caPem;
    cluster.seed(
      'namespaces',
      namespace('vmss-prototype'),
      namespace('shop'),
      namespace('payments'),
      namespace('kube-system'),
    );
    cluster.seed('nodes', readyNode(NODE), readyNode(OTHER_NODE));
    cluster.seed(
      'pods',
      ...Array.from({ length: 3 }, (_, index) => runningPod('shop', `elsewhere-${index}`, OTHER_NODE)),
    );
    kube = open({ server: cluster.server, caPem: cluster.tls.caPem, token: SA_TOKEN });
  });

  after(async () => {
    await cluster.close();
  });

  void describe('reads', () => {
    void it('reuses keep-alive TLS connections across requests', async () => {
      const pooled = open({ server: cluster.server, caPem: cluster.tls.caPem, token: SA_TOKEN });
      const before = cluster.connections();

      for (let index = 0; index < 8; index += 1) await pooled.nodes.get(NODE);

      // A second socket may open while the first is being released; without pooling it is eight.
      assert.ok(cluster.connections() - before <= 2, `${cluster.connections() - before} connections`);
    });

    void it('reads one node into the domain shape', async () => {
      const node = await kube.nodes.get(NODE);

      assert.equal(node.name, NODE);
      assert.equal(node.unschedulable, false);
      assert.match(node.providerId ?? '', /^azure:\/\/\/subscriptions\//);
      assert.deepEqual(node.conditions[0], {
        type: 'Ready',
        status: 'True',
        lastTransitionTime: '2026-11-20T03:22:05Z',
        lastHeartbeatTime: '2026-11-22T08:59:00Z',
        reason: 'KubeletReady',
      });
    });

    void it('lists nodes into the same domain shape as a read (plain JSON pages, timestamps as sent)', async () => {
      const listed = (await kube.nodes.list()).find((node) => node.name === NODE);

      assert.deepEqual(listed, await kube.nodes.get(NODE));
      assert.equal(listed?.conditions[0]?.lastTransitionTime, '2026-11-20T03:22:05Z');
    });

    void it('reports a missing node as NodeNotFound', async () => {
      const error = await rejection(kube.nodes.get('no-such-node'));

      assert.ok(error instanceof Error && 'kind' in error);
      assert.equal(error.kind, 'not-found');
      assert.equal((error as { code?: string }).code, 'NodeNotFound');
    });

    void it('refuses a node name that would change the field selector', async () => {
      const error = await rejection(kube.pods.listOnNode(`${NODE},metadata.namespace!=x`));

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'InvalidNodeName');
    });

    void it('tells whether a DaemonSet exists', async () => {
      cluster.seed('daemonsets', {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'kured', namespace: 'kube-system' },
        spec: {
          selector: { matchLabels: { name: 'kured' } },
          template: { metadata: { labels: { name: 'kured' } } },
        },
      });

      assert.equal(await kube.daemonSets.exists('kube-system', 'kured'), true);
      assert.equal(await kube.daemonSets.exists('kube-system', 'gone'), false);
    });
  });

  void describe('node writes', () => {
    void it('sets and removes annotations, leaving the others intact', async () => {
      cluster.store.mutate('nodes', undefined, NODE, (node) => {
        node.metadata.annotations = { 'weave.works/kured-most-recent-reboot-needed': '2026-11-20T03:12:09Z' };
      });

      await kube.nodes.patchAnnotations(NODE, {
        'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
        'vmss-prototype.io/capture': 'run-1',
      });
      await kube.nodes.patchAnnotations(NODE, { 'vmss-prototype.io/capture': null });

      assert.deepEqual(cluster.store.get('nodes', undefined, NODE)?.metadata.annotations, {
        'weave.works/kured-most-recent-reboot-needed': '2026-11-20T03:12:09Z',
        'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
      });
      assert.deepEqual((await kube.nodes.get(NODE)).annotations, {
        'weave.works/kured-most-recent-reboot-needed': '2026-11-20T03:12:09Z',
        'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
      });
    });

    void it('removing an annotation that is not there is a no-op', async () => {
      await kube.nodes.patchAnnotations(NODE, { 'vmss-prototype.io/never-set': null });

      assert.equal(
        cluster.store.get('nodes', undefined, NODE)?.metadata.annotations?.['vmss-prototype.io/never-set'],
        undefined,
      );
    });

    void it('cordons, then uncordons leaving spec.unschedulable absent like kubectl', async () => {
      await kube.nodes.setUnschedulable(NODE, true);
      await kube.nodes.setUnschedulable(NODE, true);
      const cordoned = await kube.nodes.get(NODE);

      await kube.nodes.setUnschedulable(NODE, false);
      const uncordoned = await kube.nodes.get(NODE);

      assert.equal(cordoned.unschedulable, true);
      assert.ok(cordoned.taints.some((taint) => taint.key === 'node.kubernetes.io/unschedulable'));
      assert.equal(uncordoned.unschedulable, false);
      const spec = cluster.store.get('nodes', undefined, NODE)?.spec as Record<string, unknown>;
      assert.equal('unschedulable' in spec, false);
    });
  });

  void describe('evictions', () => {
    void it('evicts a pod without a budget (grace 0 removes it at once)', async () => {
      cluster.seed('pods', runningPod('shop', 'web-1', NODE));

      const outcome = await kube.pods.evict('shop', 'web-1', 0);

      assert.deepEqual(outcome, { kind: 'evicted' });
      assert.equal(cluster.store.get('pods', 'shop', 'web-1'), undefined);
    });

    void it('evicts with the pod’s own grace period: it stays, terminating', async () => {
      cluster.seed('pods', runningPod('shop', 'web-2', NODE));

      const outcome = await kube.pods.evict('shop', 'web-2', undefined);

      assert.deepEqual(outcome, { kind: 'evicted' });
      assert.ok(
        cluster.store.get('pods', 'shop', 'web-2')?.metadata.deletionTimestamp !== undefined,
        'terminating',
      );
    });

    void it('reports a pod that is already gone', async () => {
      assert.deepEqual(await kube.pods.evict('shop', 'not-there', 0), { kind: 'gone' });
    });

    void it('is blocked by a PodDisruptionBudget, with the budget’s explanation', async () => {
      cluster.seed(
        'pods',
        ...['api-1', 'api-2'].map((name) => runningPod('payments', name, NODE, { labels: { app: 'api' } })),
      );
      cluster.seed('poddisruptionbudgets', disruptionBudget('payments', 'api-pdb', { app: 'api' }, 2));

      const outcome = await kube.pods.evict('payments', 'api-1', 0);

      assert.equal(outcome.kind, 'blocked');
      assert.match(
        outcome.kind === 'blocked' ? outcome.message : '',
        /^Cannot evict pod as it would violate the pod's disruption budget\. The disruption budget api-pdb needs 2 healthy pods and has 2 currently$/,
      );
      assert.equal(cluster.store.get('pods', 'payments', 'api-1')?.metadata.deletionTimestamp, undefined);
    });

    void it('fails terminally when two budgets select the pod', async () => {
      cluster.seed(
        'pods',
        runningPod('payments', 'ledger-1', NODE, { labels: { app: 'ledger', tier: 'db' } }),
      );
      cluster.seed(
        'poddisruptionbudgets',
        disruptionBudget('payments', 'ledger-a', { app: 'ledger' }, 0),
        disruptionBudget('payments', 'ledger-b', { tier: 'db' }, 0),
      );

      const error = await rejection(kube.pods.evict('payments', 'ledger-1', 0));

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'MultiplePodDisruptionBudgets');
    });

    void it('treats API throttling (429 without a budget cause) as transient, with Retry-After', async () => {
      cluster.seed('pods', runningPod('shop', 'web-3', NODE));
      cluster.faults.add({
        api: 'kube',
        operation: 'pods/eviction:create',
        status: 429,
        code: 'TooManyRequests',
        message: 'Too many requests, please try again later.',
        retryAfterSeconds: 4,
        times: 1,
      });

      const error = await rejection(kube.pods.evict('shop', 'web-3', 0));

      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'KubeThrottled');
      assert.equal(error.retryAfterMs, 4000);
      assert.deepEqual(await kube.pods.evict('shop', 'web-3', 0), { kind: 'evicted' });
    });

    void it('treats a 503 from the API server as transient', async () => {
      cluster.faults.add({
        api: 'kube',
        operation: 'nodes:list',
        status: 503,
        code: 'ServiceUnavailable',
        message: 'the server is currently unable to handle the request',
        times: 1,
      });

      const error = await rejection(kube.nodes.list());

      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'KubeServerError');
    });
  });

  void describe('the prep pod', () => {
    void it('creates it pinned, privileged in the host namespaces, and a second create is a no-op', async () => {
      await kube.pods.createPrepPod(PREP);
      const firstUid = cluster.store.get('pods', PREP.namespace, PREP.name)?.metadata.uid;
      await kube.pods.createPrepPod(PREP);

      const stored = cluster.store.get('pods', PREP.namespace, PREP.name);
      assert.equal(stored?.metadata.uid, firstUid);
      assert.deepEqual(stored?.metadata.labels, PREP.labels);
      const spec = stored?.spec as Record<string, unknown>;
      assert.equal(spec.nodeName, NODE);
      assert.equal(spec.hostPID, true);
      assert.equal(spec.hostNetwork, true);
      assert.equal(spec.restartPolicy, 'Never');
      assert.equal(spec.terminationGracePeriodSeconds, 0);
      assert.equal(spec.automountServiceAccountToken, false);
      assert.deepEqual(spec.tolerations, [{ operator: 'Exists' }]);
      assert.deepEqual(spec.containers, [
        {
          name: 'prep',
          image: PREP.image,
          imagePullPolicy: 'IfNotPresent',
          command: [
            'nsenter',
            '--target',
            '1',
            '--mount',
            '--uts',
            '--ipc',
            '--net',
            '--pid',
            '--',
            '/bin/sh',
            '-c',
            PREP.script,
          ],
          securityContext: { privileged: true },
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ]);
    });

    void it('follows its phase as the kubelet starts it', async () => {
      assert.equal(await kube.pods.getPhase(PREP.namespace, PREP.name), 'Pending');

      cluster.clock.advanceBy(5);

      assert.equal(await kube.pods.getPhase(PREP.namespace, PREP.name), 'Running');
    });

    void it('refuses to adopt a same-named pod bound to another node', async () => {
      const error = await rejection(kube.pods.createPrepPod({ ...PREP, nodeName: OTHER_NODE }));

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'PrepPodConflict');
      assert.match(error.message, /already runs on node pool0-vmss000001/);
    });

    void it('deletes it, and deleting again is a no-op', async () => {
      await kube.pods.delete(PREP.namespace, PREP.name);
      await kube.pods.delete(PREP.namespace, PREP.name);

      assert.equal(cluster.store.get('pods', PREP.namespace, PREP.name), undefined);
      assert.equal(await kube.pods.getPhase(PREP.namespace, PREP.name), undefined);
    });
  });

  void describe('authentication, authorisation and TLS', () => {
    void it('names the missing permission when RBAC forbids (prep pods only in their own namespace)', async () => {
      const error = await rejection(kube.pods.createPrepPod({ ...PREP, namespace: 'shop' }));

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'ClusterForbidden');
      assert.match(
        error.message,
        /^creating prep pod shop\/prep-pool0-vmss000001 on node pool0-vmss000001: forbidden, the service account may not create pods in the namespace "shop"/,
      );
    });

    void it('names the permission for a cluster-wide list when the user has no binding', async () => {
      const stranger = open({ server: cluster.server, caPem: cluster.tls.caPem, token: STRANGER_TOKEN });

      const error = await rejection(stranger.nodes.list());

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'ClusterForbidden');
      assert.match(error.message, /may not list nodes \(cluster-wide\)/);
    });

    void it('reports a rejected token as terminal, without echoing it', async () => {
      const token = 'revoked-token-5d1e8a';
      const rejected = open({ server: cluster.server, caPem: cluster.tls.caPem, token });

      const error = await rejection(rejected.nodes.get(NODE));

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'ClusterUnauthorized');
      assert.match(
        error.message,
        new RegExp(
          `^reading node ${NODE}: .* rejected the service account token — check the cluster's token reference`,
        ),
      );
      assert.ok(!`${error.message} ${JSON.stringify(error)} ${String(error.cause)}`.includes(token));
    });

    void it('asks a token provider before every request (rotating Entra ID tokens)', async () => {
      let calls = 0;
      const rotating = open({
        server: cluster.server,
        caPem: cluster.tls.caPem,
        token: () => {
          calls += 1;
          return Promise.resolve(SA_TOKEN);
        },
      });

      await rotating.nodes.get(NODE);
      await rotating.nodes.list();

      assert.equal(calls, 2);
    });

    void it('reports a failing token provider as transient', async () => {
      const failing = open({
        server: cluster.server,
        caPem: cluster.tls.caPem,
        token: () => Promise.reject(new Error('ManagedIdentityCredential: no response from IMDS')),
      });

      const error = await rejection(failing.nodes.get(NODE));

      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'ClusterTokenUnavailable');
    });

    void it('fails closed when the server certificate is not signed by the configured CA', async () => {
      cluster.log.reset();
      const misconfigured = open({ server: cluster.server, caPem: otherCa, token: SA_TOKEN });

      const error = await rejection(misconfigured.nodes.list());

      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'ClusterTlsVerificationFailed');
      assert.match(error.message, /^listing nodes: .*check the configured CA certificate/);
      assert.equal(cluster.log.total(), 0, 'no request may reach the server over an unverified connection');
    });

    void it('keeps verifying even when NODE_TLS_REJECT_UNAUTHORIZED=0 is set in the environment', async () => {
      const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      try {
        const misconfigured = open({ server: cluster.server, caPem: otherCa, token: SA_TOKEN });

        const error = await rejection(misconfigured.nodes.get(NODE));

        assert.ok(error instanceof TerminalError);
        assert.equal(error.code, 'ClusterTlsVerificationFailed');
      } finally {
        if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
        else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
      }
    });
  });
});

void describe('The client-node Kubernetes adapters transport failures', () => {
  void it('reports a refused connection as transient', async () => {
    // Bind and release a port so nothing listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const tls = generateSimTls(new Date());
    const kube = open({
      server: `https://127.0.0.1:${port}`,
      caPem: tls.caPem,
      token: SA_TOKEN,
    });

    const error = await rejection(kube.nodes.list());

    assert.ok(error instanceof TransientError);
    assert.equal(error.code, 'ClusterUnreachable');
    assert.match(error.message, /ECONNREFUSED/);
  });

  void it('gives up on a server that never answers after requestTimeoutMs', async () => {
    const tls = generateSimTls(new Date());
    const silent = createServer({ cert: tls.certPem, key: tls.keyPem }, () => {
      // Never answers.
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const kube = open({
        server: `https://127.0.0.1:${port}`,
        caPem: tls.caPem,
        token: SA_TOKEN,
        requestTimeoutMs: 300,
      });

      const error = await rejection(kube.nodes.get(NODE));

      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'ClusterRequestTimeout');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  void it('gives up after requestTimeoutMs on a server that stops halfway through the body', async () => {
    const tls = generateSimTls(new Date());
    const stalls = createServer({ cert: tls.certPem, key: tls.keyPem }, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"kind":"Node",');
      // The rest never comes.
    });
    await new Promise<void>((resolve) => stalls.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = stalls.address() as AddressInfo;
      const kube = open({
        server: `https://127.0.0.1:${port}`,
        caPem: tls.caPem,
        token: SA_TOKEN,
        requestTimeoutMs: 300,
      });

      const error = await rejection(kube.nodes.get(NODE));

      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'ClusterRequestTimeout');
    } finally {
      stalls.closeAllConnections();
      await new Promise<void>((resolve) => stalls.close(() => resolve()));
    }
  });

  void it('reports a response cut short by the server as transient', async () => {
    const tls = generateSimTls(new Date());
    const cuts = createServer({ cert: tls.certPem, key: tls.keyPem }, (request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"kind":"Node",', () => request.socket.destroy());
    });
    await new Promise<void>((resolve) => cuts.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = cuts.address() as AddressInfo;
      const kube = open({ server: `https://127.0.0.1:${port}`, caPem: tls.caPem, token: SA_TOKEN });

      const error = await rejection(kube.nodes.get(NODE));

      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'ClusterUnreachable');
    } finally {
      cuts.closeAllConnections();
      await new Promise<void>((resolve) => cuts.close(() => resolve()));
    }
  });

  const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const invalidConfigurations = [
    {
      why: 'plain HTTP',
      server: 'http://127.0.0.1:6443',
      caPem,
      token: 't',
      code: 'InvalidClusterConfiguration',
    },
    {
      why: 'a server that is not a URL',
      server: 'not a url',
      caPem,
      token: 't',
      code: 'InvalidClusterConfiguration',
    },
    {
      why: 'a CA that is not PEM',
      server: 'https://127.0.0.1:6443',
      caPem: 'c2VjcmV0',
      token: 't',
      code: 'InvalidClusterConfiguration',
    },
    {
      why: 'a blank token',
      server: 'https://127.0.0.1:6443',
      caPem,
      token: '  ',
      code: 'InvalidClusterToken',
    },
    {
      why: 'a token with whitespace inside',
      server: 'https://127.0.0.1:6443',
      caPem,
      token: 'a b',
      code: 'InvalidClusterToken',
    },
  ];
  for (const { why, code, ...options } of invalidConfigurations) {
    void it(`refuses ${why}`, () => {
      assert.throws(() => clientNodeKubernetes(options), { name: 'TerminalError', code });
    });
  }
});

void describe('The client-node Kubernetes adapters against the full simulator (startSimulator, sample scenario)', () => {
  let sim: RunningSimulator;
  let outDir: string;
  let kube: ClientNodeKubernetes;

  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'kube-kube-'));
    const scenario = parseScenarioYaml(await readFile(SAMPLE_SCENARIO, 'utf8'), SAMPLE_SCENARIO);
    // infra/kubernetes binds the service account in vmss-prototype; the scenario defaults to kube-system.
    for (const cluster of scenario.clusters)
      cluster.serviceAccount = { namespace: 'vmss-prototype', name: 'vmss-prototype' };
    sim = await startSimulator({
      scenario,
      outDir,
      clock: 'manual',
      rbacDir: new URL('../../../../../infra/kubernetes/', import.meta.url).pathname,
    });
    kube = open({ server: sim.kubeHttpsUrl, caPem: sim.caPem, token: sim.tokens.serviceAccount });
  });

  after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  void it('lists the scenario’s nodes, each with its scale-set providerID', async () => {
    const nodes = await kube.nodes.list();

    assert.ok(nodes.length > 0);
    for (const node of nodes)
      assert.match(node.providerId ?? '', /virtualMachineScaleSets\/[^/]+\/virtualMachines\/\d+$/);
  });

  void it('lists exactly the pods the world bound to a node', async () => {
    const [node] = await kube.nodes.list();
    assert.ok(node !== undefined);
    const store = [...sim.world.clusters.values()][0]?.world.store;
    const expected = (store?.list('pods') ?? [])
      .filter((pod) => (pod.spec as { nodeName?: string } | undefined)?.nodeName === node.name)
      .map((pod) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`)
      .sort();

    const pods = await kube.pods.listOnNode(node.name);

    assert.ok(expected.length > 0, 'the scenario runs pods on every node');
    assert.deepEqual(pods.map((pod) => `${pod.namespace}/${pod.name}`).sort(), expected);
  });

  void it('cordons and uncordons a node and runs the prep pod cycle with the product’s RBAC', async () => {
    const [node] = await kube.nodes.list();
    assert.ok(node !== undefined);
    const spec = { ...PREP, nodeName: node.name };

    await kube.nodes.setUnschedulable(node.name, true);
    await kube.pods.createPrepPod(spec);
    await kube.pods.createPrepPod(spec);
    const phase = await kube.pods.getPhase(spec.namespace, spec.name);
    await kube.pods.delete(spec.namespace, spec.name);
    await kube.nodes.setUnschedulable(node.name, false);

    assert.equal(phase, 'Pending');
    assert.equal(await kube.pods.getPhase(spec.namespace, spec.name), undefined);
    assert.equal((await kube.nodes.get(node.name)).unschedulable, false);
  });
});
