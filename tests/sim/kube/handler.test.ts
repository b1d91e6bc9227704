// Drives the simulated API server with the real @kubernetes/client-node over HTTP on 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import type { V1Node, V1Pod } from '@kubernetes/client-node';
import {
  ApiException,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';

import type { KubeObject } from '../../../sim/contracts.js';
import type { TestCluster } from './fixtures.js';
import {
  ADMIN_TOKEN,
  namespaceObject,
  nodeObject,
  pdbObject,
  readyCondition,
  replicaSetObject,
  runningPod,
  startTestCluster,
  statusBody,
} from './fixtures.js';

async function rejection(promise: Promise<unknown>): Promise<ApiException<unknown>> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiException, `expected ApiException, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

function names(items: { metadata?: { name?: string } }[]): string[] {
  return items.map((item) => item.metadata?.name ?? '');
}

void describe('simulated Kubernetes API server with client-node', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let policy: PolicyV1Api;
  let coordination: CoordinationV1Api;

  void before(async () => {
    cluster = await startTestCluster();
    const config = cluster.kubeConfig(ADMIN_TOKEN);
    core = config.makeApiClient(CoreV1Api);
    apps = config.makeApiClient(AppsV1Api);
    policy = config.makeApiClient(PolicyV1Api);
    coordination = config.makeApiClient(CoordinationV1Api);
  });

  void after(async () => {
    await cluster.close();
  });

  void beforeEach(() => {
    const { store } = cluster;
    for (const resource of [
      'pods',
      'nodes',
      'replicasets',
      'daemonsets',
      'poddisruptionbudgets',
      'namespaces',
      'leases',
    ] as const) {
      for (const object of store.list(resource))
        store.remove(resource, object.metadata.namespace, object.metadata.name);
    }
    cluster.faults.faults.clear();
    cluster.time.advance(1);
    store.create('namespaces', namespaceObject('default'));
    store.create('namespaces', namespaceObject('apps'));
    store.create('nodes', nodeObject('vmss000000', { 'node-role.kubernetes.io/agent': '', tier: 'a' }));
    store.create('nodes', nodeObject('vmss000001', { tier: 'b' }));
    store.create('nodes', nodeObject('vmss000002', { tier: 'c', gpu: 'true' }));
    store.create('nodes', nodeObject('vmss000003', {}));
    store.create('nodes', nodeObject('vmss000004', { tier: 'a' }, false));
    cluster.time.advance(1);
  });

  void describe('discovery', () => {
    void it('advertises pods/eviction as policy/v1 Eviction in /api/v1', async () => {
      const response = await fetch(`${cluster.url}/api/v1`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const body = (await response.json()) as {
        resources: { name: string; kind: string; group?: string; version?: string }[];
      };

      const eviction = body.resources.find((resource) => resource.name === 'pods/eviction');

      assert.deepEqual(
        eviction && { kind: eviction.kind, group: eviction.group, version: eviction.version },
        {
          kind: 'Eviction',
          group: 'policy',
          version: 'v1',
        },
      );
    });

    void it('lists apps, policy, coordination.k8s.io, the self-review groups and apiextensions.k8s.io under /apis', async () => {
      const response = await fetch(`${cluster.url}/apis`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const body = (await response.json()) as { groups: { name: string }[] };

      assert.deepEqual(
        body.groups.map((group) => group.name),
        [
          'apps',
          'policy',
          'coordination.k8s.io',
          'authorization.k8s.io',
          'authentication.k8s.io',
          'apiextensions.k8s.io',
        ],
      );
    });
  });

  void describe('nodes', () => {
    void it('pages through nodes with limit and continue', async () => {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await core.listNode({ limit: 2, ...(token ? { _continue: token } : {}) });
        seen.push(...names(page.items));
        token = page.metadata?._continue;
        pages += 1;
      } while (token);

      assert.equal(pages, 3);
      assert.deepEqual(seen, ['vmss000000', 'vmss000001', 'vmss000002', 'vmss000003', 'vmss000004']);
    });

    const labelCases: { selector: string; expected: string[] }[] = [
      { selector: 'tier=a', expected: ['vmss000000', 'vmss000004'] },
      { selector: 'tier==b', expected: ['vmss000001'] },
      { selector: 'tier!=a', expected: ['vmss000001', 'vmss000002', 'vmss000003'] },
      { selector: 'tier in (b, c)', expected: ['vmss000001', 'vmss000002'] },
      { selector: 'tier notin (a,b)', expected: ['vmss000002', 'vmss000003'] },
      { selector: 'gpu', expected: ['vmss000002'] },
      { selector: '!tier', expected: ['vmss000003'] },
      { selector: 'tier=a,node-role.kubernetes.io/agent', expected: ['vmss000000'] },
    ];
    for (const { selector, expected } of labelCases) {
      void it(`filters nodes by labelSelector "${selector}"`, async () => {
        const list = await core.listNode({ labelSelector: selector });

        assert.deepEqual(names(list.items), expected);
      });
    }

    void it('filters nodes by spec.unschedulable and metadata.name field selectors', async () => {
      cluster.store.mutate('nodes', undefined, 'vmss000001', (node) => {
        node.spec = { ...(node.spec as object), unschedulable: true };
      });

      const cordoned = await core.listNode({ fieldSelector: 'spec.unschedulable=true' });
      const schedulable = await core.listNode({
        fieldSelector: 'spec.unschedulable=false,metadata.name!=vmss000000',
      });

      assert.deepEqual(names(cordoned.items), ['vmss000001']);
      assert.deepEqual(names(schedulable.items), ['vmss000002', 'vmss000003', 'vmss000004']);
    });

    void it('rejects an unsupported field selector with 400', async () => {
      const error = await rejection(core.listNode({ fieldSelector: 'status.phase=Running' }));

      assert.equal(error.code, 400);
      assert.equal(statusBody(error).reason, 'BadRequest');
    });

    void it('merge-patches annotations and cordons, null deleting a key', async () => {
      await core.patchNode(
        {
          name: 'vmss000001',
          body: { metadata: { annotations: { a: '1', b: '2' } }, spec: { unschedulable: true } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );

      const node = await core.patchNode(
        { name: 'vmss000001', body: { metadata: { annotations: { a: null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );

      assert.deepEqual(node.metadata?.annotations, { b: '2' });
      assert.equal(node.spec?.unschedulable, true);
    });

    void it('strategic-merge-patches like kubectl uncordon and replaces the atomic taints list', async () => {
      cluster.store.mutate('nodes', undefined, 'vmss000002', (node) => {
        node.spec = {
          ...(node.spec as object),
          unschedulable: true,
          taints: [{ key: 'x', effect: 'NoSchedule' }],
        };
      });

      const node = await core.patchNode(
        {
          name: 'vmss000002',
          body: {
            spec: { unschedulable: null, taints: [{ key: 'y', value: 'v', effect: 'PreferNoSchedule' }] },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );

      assert.equal(node.spec?.unschedulable, undefined);
      assert.deepEqual(
        node.spec?.taints?.map((taint) => taint.key),
        ['y'],
      );
    });

    void it('applies a JSON patch with ~1 escapes and a passing test op', async () => {
      cluster.store.mutate('nodes', undefined, 'vmss000003', (node) => {
        node.metadata.annotations = { 'weave.works/kured-reboot-in-progress': '2026-01-01T00:00:00Z' };
      });

      const node = await core.patchNode(
        {
          name: 'vmss000003',
          body: [
            {
              op: 'test',
              path: '/metadata/annotations/weave.works~1kured-reboot-in-progress',
              value: '2026-01-01T00:00:00Z',
            },
            { op: 'remove', path: '/metadata/annotations/weave.works~1kured-reboot-in-progress' },
            { op: 'add', path: '/metadata/labels/pool~1generation', value: '2' },
          ],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );

      assert.deepEqual(node.metadata?.annotations, {});
      assert.equal(node.metadata?.labels?.['pool/generation'], '2');
    });

    void it('answers 422 Invalid when a JSON patch test op fails, leaving the node unchanged', async () => {
      const before = cluster.store.get('nodes', undefined, 'vmss000003');

      const error = await rejection(
        core.patchNode(
          { name: 'vmss000003', body: [{ op: 'test', path: '/spec/unschedulable', value: true }] },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        ),
      );

      assert.equal(error.code, 422);
      assert.equal(statusBody(error).reason, 'Invalid');
      assert.deepEqual(cluster.store.get('nodes', undefined, 'vmss000003'), before);
    });

    void it('answers 422 Invalid for a patch that sets spec.unschedulable to a string', async () => {
      const error = await rejection(
        core.patchNode(
          { name: 'vmss000003', body: { spec: { unschedulable: 'yes' } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );

      assert.equal(error.code, 422);
      assert.match(String(statusBody(error).message), /^Node "vmss000003" is invalid: spec\.unschedulable/);
    });

    void it('answers 409 Conflict to a PUT with a stale resourceVersion', async () => {
      const node = await core.readNode({ name: 'vmss000000' });
      await core.patchNode(
        { name: 'vmss000000', body: { metadata: { labels: { touched: 'yes' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );

      const error = await rejection(
        core.replaceNode({
          name: 'vmss000000',
          body: { ...node, spec: { ...node.spec, unschedulable: true } },
        }),
      );

      assert.equal(error.code, 409);
      assert.equal(statusBody(error).reason, 'Conflict');
      assert.deepEqual(statusBody(error).details, { name: 'vmss000000', kind: 'nodes' });
    });

    void it('answers 409 Conflict to a merge patch carrying a stale resourceVersion precondition', async () => {
      const error = await rejection(
        core.patchNode(
          { name: 'vmss000000', body: { metadata: { resourceVersion: '1', labels: { x: 'y' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );

      assert.equal(error.code, 409);
    });

    void it('replaces a node with the current resourceVersion', async () => {
      const node = await core.readNode({ name: 'vmss000000' });

      const replaced = await core.replaceNode({
        name: 'vmss000000',
        body: { ...node, spec: { ...node.spec, unschedulable: true } },
      });

      assert.equal(replaced.spec?.unschedulable, true);
      assert.notEqual(replaced.metadata?.resourceVersion, node.metadata?.resourceVersion);
    });

    void it('keeps the resourceVersion for a patch that changes nothing', async () => {
      const before = await core.readNode({ name: 'vmss000002' });

      const after = await core.patchNode(
        { name: 'vmss000002', body: { metadata: { labels: { gpu: 'true' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );

      assert.equal(after.metadata?.resourceVersion, before.metadata?.resourceVersion);
    });

    void it('returns a NotFound Status for a missing node', async () => {
      const error = await rejection(core.readNode({ name: 'nope' }));

      assert.equal(error.code, 404);
      assert.deepEqual(statusBody(error), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'nodes "nope" not found',
        reason: 'NotFound',
        details: { name: 'nope', kind: 'nodes' },
        code: 404,
      });
    });

    void it('changes status only through the /status subresource', async () => {
      await core.patchNode(
        { name: 'vmss000001', body: { status: { conditions: [{ type: 'Ready', status: 'False' }] } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const unchanged = await core.readNode({ name: 'vmss000001' });

      await core.patchNodeStatus(
        { name: 'vmss000001', body: { status: { conditions: [{ type: 'Ready', status: 'False' }] } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      const changed = await core.readNodeStatus({ name: 'vmss000001' });

      assert.equal(unchanged.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      assert.equal(changed.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    });

    void it('taints a cordoned node with node.kubernetes.io/unschedulable like the node controller', async () => {
      await core.patchNode(
        { name: 'vmss000001', body: { spec: { unschedulable: true } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );

      const node = await core.readNode({ name: 'vmss000001' });

      assert.deepEqual(
        node.spec?.taints?.map((taint) => `${taint.key}:${taint.effect}`),
        ['node.kubernetes.io/unschedulable:NoSchedule'],
      );
    });
  });

  void describe('pods', () => {
    void it('lists pods across namespaces by spec.nodeName and status.phase', async () => {
      cluster.store.create('pods', runningPod('default', 'a', 'vmss000000'));
      cluster.store.create('pods', runningPod('apps', 'b', 'vmss000000'));
      cluster.store.create('pods', runningPod('apps', 'c', 'vmss000001'));
      cluster.store.create('pods', {
        ...runningPod('apps', 'd', 'vmss000000'),
        status: { phase: 'Succeeded' },
      });

      const onNode = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=vmss000000' });
      const running = await core.listPodForAllNamespaces({
        fieldSelector: 'spec.nodeName=vmss000000,status.phase!=Succeeded',
      });
      const namespaced = await core.listNamespacedPod({ namespace: 'apps' });

      assert.deepEqual(names(onNode.items), ['b', 'd', 'a']);
      assert.deepEqual(names(running.items), ['b', 'a']);
      assert.deepEqual(names(namespaced.items), ['b', 'c', 'd']);
    });

    void it('starts a created pod after podStartSeconds', async () => {
      const created = await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: {
            name: 'web',
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'x', uid: 'u' }],
          },
          spec: {
            nodeName: 'vmss000001',
            containers: [{ name: 'c', image: 'busybox' }],
            volumes: [{ name: 'tmp', emptyDir: {} }],
          },
        },
      });
      cluster.time.advance(2);
      const started = await core.readNamespacedPod({ namespace: 'default', name: 'web' });

      assert.equal(created.status?.phase, 'Pending');
      assert.equal(started.status?.phase, 'Running');
      assert.equal(started.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      assert.equal(started.spec?.volumes?.[0]?.emptyDir !== undefined, true);
      assert.equal(started.metadata?.ownerReferences?.[0]?.kind, 'Node');
    });

    void it('schedules a pod without nodeName by nodeSelector onto a Ready node', async () => {
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'picky' },
          spec: { nodeSelector: { tier: 'a' }, containers: [{ name: 'c', image: 'busybox' }] },
        },
      });
      cluster.time.advance(3);

      const pod = await core.readNamespacedPod({ namespace: 'default', name: 'picky' });

      assert.equal(pod.spec?.nodeName, 'vmss000000'); // vmss000004 has tier=a but is NotReady
      assert.equal(pod.status?.phase, 'Running');
    });

    void it('refuses to create a pod in a missing namespace', async () => {
      const error = await rejection(
        core.createNamespacedPod({
          namespace: 'ghost',
          body: { metadata: { name: 'p' }, spec: { containers: [] } },
        }),
      );

      assert.equal(error.code, 404);
      assert.equal(statusBody(error).message, 'namespaces "ghost" not found');
    });

    void it('answers 409 AlreadyExists for a duplicate pod', async () => {
      cluster.store.create('pods', runningPod('default', 'dup', 'vmss000000'));

      const error = await rejection(
        core.createNamespacedPod({
          namespace: 'default',
          body: { metadata: { name: 'dup' }, spec: { containers: [] } },
        }),
      );

      assert.equal(error.code, 409);
      assert.equal(statusBody(error).reason, 'AlreadyExists');
    });

    void it('deletes with a grace period: terminating first, gone after the grace', async () => {
      cluster.store.create('pods', runningPod('default', 'slow', 'vmss000000'));

      const deleted = await core.deleteNamespacedPod({
        namespace: 'default',
        name: 'slow',
        gracePeriodSeconds: 10,
      });
      cluster.time.advance(9);
      const during = await core.readNamespacedPod({ namespace: 'default', name: 'slow' });
      cluster.time.advance(1);
      const error = await rejection(core.readNamespacedPod({ namespace: 'default', name: 'slow' }));

      assert.equal(deleted.metadata?.deletionGracePeriodSeconds, 10);
      assert.ok(during.metadata?.deletionTimestamp);
      assert.equal(error.code, 404);
    });

    void it('keeps a pod Terminating while its node is down, and removes it once the node is back', async () => {
      cluster.store.create('pods', runningPod('default', 'stuck', 'vmss000004'));

      await core.deleteNamespacedPod({ namespace: 'default', name: 'stuck', gracePeriodSeconds: 5 });
      cluster.time.advance(60);
      const whileDown = cluster.store.get('pods', 'default', 'stuck');
      cluster.store.mutate('nodes', undefined, 'vmss000004', (node) => {
        node.status = {
          ...(node.status as object),
          conditions: [readyCondition('True', cluster.time.nowMs())],
        };
      });
      cluster.time.advance(1);

      assert.ok(whileDown?.metadata.deletionTimestamp);
      assert.equal(cluster.store.get('pods', 'default', 'stuck'), undefined);
    });

    void it('re-creates a deleted mirror pod while its node runs', async () => {
      cluster.store.create('namespaces', namespaceObject('kube-system'));
      cluster.store.create(
        'pods',
        runningPod('kube-system', 'etcd-vmss000000', 'vmss000000', {
          annotations: { 'kubernetes.io/config.mirror': 'x' },
        }),
      );

      await core.deleteNamespacedPod({
        namespace: 'kube-system',
        name: 'etcd-vmss000000',
        gracePeriodSeconds: 0,
      });
      const gone = cluster.store.get('pods', 'kube-system', 'etcd-vmss000000');
      cluster.time.advance(3);

      assert.equal(gone, undefined);
      assert.ok(cluster.store.get('pods', 'kube-system', 'etcd-vmss000000'));
    });

    void it('refuses to move a pod to another node with 422', async () => {
      cluster.store.create('pods', runningPod('default', 'pinned', 'vmss000000'));

      const error = await rejection(
        core.patchNamespacedPod(
          { namespace: 'default', name: 'pinned', body: { spec: { nodeName: 'vmss000001' } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );

      assert.equal(error.code, 422);
      assert.match(
        String(statusBody(error).message),
        /^Pod "pinned" is invalid: spec: Forbidden: pod updates may not change/,
      );
    });

    void it('deletes at once with gracePeriodSeconds 0', async () => {
      cluster.store.create('pods', runningPod('default', 'fast', 'vmss000000'));

      await core.deleteNamespacedPod({ namespace: 'default', name: 'fast', gracePeriodSeconds: 0 });

      assert.equal(cluster.store.get('pods', 'default', 'fast'), undefined);
    });
  });

  void describe('eviction and disruption budgets', () => {
    function seedReplicaSet(replicas: number, minAvailable: number | string): KubeObject {
      const labels = { app: 'web' };
      const replicaSet = cluster.store.create(
        'replicasets',
        replicaSetObject('apps', 'web-1', replicas, labels),
      );
      cluster.store.create(
        'pods',
        runningPod('apps', 'web-1-a', 'vmss000000', { labels, owner: replicaSet }),
      );
      if (replicas > 1)
        cluster.store.create(
          'pods',
          runningPod('apps', 'web-1-b', 'vmss000001', { labels, owner: replicaSet }),
        );
      cluster.store.create(
        'poddisruptionbudgets',
        pdbObject('apps', 'web', { minAvailable, selector: { matchLabels: labels } }),
      );
      return replicaSet;
    }

    function evict(name: string, gracePeriodSeconds?: number): Promise<unknown> {
      return core.createNamespacedPodEviction({
        name,
        namespace: 'apps',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace: 'apps' },
          ...(gracePeriodSeconds === undefined ? {} : { deleteOptions: { gracePeriodSeconds } }),
        },
      });
    }

    void it('answers 429 with the API server Status when the budget allows no disruption', async () => {
      seedReplicaSet(2, 2);

      const error = await rejection(evict('web-1-a'));

      assert.equal(error.code, 429);
      assert.deepEqual(statusBody(error), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: "Cannot evict pod as it would violate the pod's disruption budget.",
        reason: 'TooManyRequests',
        details: {
          causes: [
            {
              reason: 'DisruptionBudget',
              message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
            },
          ],
        },
        code: 429,
      });
    });

    void it('evicts, and the ReplicaSet replaces the pod on another schedulable node so the budget recovers', async () => {
      seedReplicaSet(2, 1);
      await core.patchNode(
        { name: 'vmss000000', body: { spec: { unschedulable: true } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );

      await evict('web-1-a', 5);
      const blocked = await rejection(evict('web-1-b'));
      cluster.time.advance(5);
      const pods = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=web' })).items;

      assert.equal(blocked.code, 429);
      assert.equal(pods.length, 2);
      assert.ok(
        pods.every(
          (pod: V1Pod) => pod.spec?.nodeName !== 'vmss000000' && pod.spec?.nodeName !== 'vmss000004',
        ),
      );
      assert.ok(pods.every((pod: V1Pod) => pod.status?.phase === 'Running'));
      await evict('web-1-b');
    });

    void it('reports the live budget status on the PDB', async () => {
      seedReplicaSet(2, '50%');

      const pdb = await policy.readNamespacedPodDisruptionBudget({ namespace: 'apps', name: 'web' });

      assert.deepEqual(
        {
          currentHealthy: pdb.status?.currentHealthy,
          desiredHealthy: pdb.status?.desiredHealthy,
          disruptionsAllowed: pdb.status?.disruptionsAllowed,
          expectedPods: pdb.status?.expectedPods,
        },
        { currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1, expectedPods: 2 },
      );
    });

    void it('answers 500 when two budgets select the pod', async () => {
      seedReplicaSet(2, 1);
      await policy.createNamespacedPodDisruptionBudget({
        namespace: 'apps',
        body: {
          metadata: { name: 'web-too' },
          spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
        },
      });

      const error = await rejection(evict('web-1-a'));

      assert.equal(error.code, 500);
      assert.equal(
        statusBody(error).message,
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      );
    });

    void it('allows evicting a pod that is already terminating', async () => {
      seedReplicaSet(2, 2);
      await core.deleteNamespacedPod({ namespace: 'apps', name: 'web-1-a', gracePeriodSeconds: 30 });

      await evict('web-1-a');

      assert.ok(cluster.store.get('pods', 'apps', 'web-1-a')?.metadata.deletionTimestamp);
    });

    void it('answers 404 for evicting a missing pod', async () => {
      const error = await rejection(evict('ghost'));

      assert.equal(error.code, 404);
      assert.equal(statusBody(error).message, 'pods "ghost" not found');
    });

    void it('re-creates a DaemonSet pod on its own node', async () => {
      const daemonSet = await apps.createNamespacedDaemonSet({
        namespace: 'apps',
        body: {
          metadata: { name: 'agent' },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            template: {
              metadata: { labels: { app: 'agent' } },
              spec: { containers: [{ name: 'a', image: 'agent' }] },
            },
          },
        },
      });
      cluster.time.advance(1);
      const first = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=agent' })).items;
      const onNode1 = first.find((pod) => pod.spec?.nodeName === 'vmss000001');
      await core.deleteNamespacedPod({
        namespace: 'apps',
        name: onNode1?.metadata?.name ?? '',
        gracePeriodSeconds: 0,
      });
      cluster.time.advance(2);
      const second = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=agent' })).items;
      const read = await apps.readNamespacedDaemonSet({ namespace: 'apps', name: 'agent' });

      assert.equal(first.length, 5);
      assert.equal(second.length, 5);
      assert.equal(second.filter((pod) => pod.spec?.nodeName === 'vmss000001').length, 1);
      assert.equal(read.metadata?.uid, daemonSet.metadata?.uid);
      assert.equal(read.status?.desiredNumberScheduled, 5);
    });

    void it('reads ReplicaSets through AppsV1Api', async () => {
      seedReplicaSet(2, 1);

      const list = await apps.listReplicaSetForAllNamespaces({});

      assert.deepEqual(names(list.items), ['web-1']);
      assert.equal(list.items[0]?.spec?.replicas, 2);
    });
  });

  void describe('other resources', () => {
    void it('reads and updates a node lease with CoordinationV1Api', async () => {
      cluster.store.create('namespaces', namespaceObject('kube-node-lease'));
      cluster.store.create('leases', {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'vmss000000', namespace: 'kube-node-lease' },
        spec: {
          holderIdentity: 'vmss000000',
          leaseDurationSeconds: 40,
          renewTime: '2026-01-15T12:00:00.000000Z',
        },
      });

      const lease = await coordination.readNamespacedLease({
        namespace: 'kube-node-lease',
        name: 'vmss000000',
      });
      const updated = await coordination.replaceNamespacedLease({
        namespace: 'kube-node-lease',
        name: 'vmss000000',
        body: { ...lease, spec: { ...lease.spec, leaseDurationSeconds: 41 } },
      });
      const list = await coordination.listNamespacedLease({ namespace: 'kube-node-lease' });

      assert.equal(updated.spec?.leaseDurationSeconds, 41);
      assert.equal(list.items.length, 1);
    });

    void it('creates and lists events and namespaces', async () => {
      await core.createNamespace({ body: { metadata: { name: 'vmss-prototype' } } });
      await core.createNamespacedEvent({
        namespace: 'vmss-prototype',
        body: {
          metadata: { generateName: 'drain-' },
          involvedObject: { kind: 'Node', name: 'vmss000000' },
          reason: 'Drained',
          message: 'node drained',
          type: 'Normal',
        },
      });

      const events = await core.listNamespacedEvent({ namespace: 'vmss-prototype' });
      const namespaces = await core.listNamespace({});

      assert.equal(events.items.length, 1);
      assert.match(events.items[0]?.metadata?.name ?? '', /^drain-[0-9a-z]{5}$/);
      assert.deepEqual(names(namespaces.items), ['apps', 'default', 'vmss-prototype']);
    });
  });

  void describe('errors, faults and the request log', () => {
    void it('answers 401 without a valid token', async () => {
      const anonymous = cluster.kubeConfig('wrong').makeApiClient(CoreV1Api);

      const error = await rejection(anonymous.listNode({}));

      assert.equal(error.code, 401);
    });

    void it('answers an injected 429 with Retry-After and logs it', async () => {
      cluster.faults.faults.set('nodes:patch', {
        status: 429,
        retryAfterSeconds: 7,
        code: 'TooManyRequests',
        message: 'throttled',
      });

      const error = await rejection(
        core.patchNode(
          { name: 'vmss000000', body: { spec: { unschedulable: true } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );

      assert.equal(error.code, 429);
      assert.equal(error.headers['retry-after'], '7');
      assert.deepEqual(cluster.log.entries.at(-1), { api: 'kube', operation: 'nodes:patch', status: 429 });
    });

    void it('answers 503 on every call while the API server is down', async () => {
      cluster.faults.faults.set('*', {
        status: 503,
        code: 'ServiceUnavailable',
        message: 'apiserver is down',
      });

      const error = await rejection(core.readNode({ name: 'vmss000000' }));

      assert.equal(error.code, 503);
      assert.equal(statusBody(error).reason, 'ServiceUnavailable');
    });

    void it('logs evictions as pods/eviction:create', async () => {
      cluster.store.create('pods', runningPod('default', 'solo', 'vmss000000'));

      await core.createNamespacedPodEviction({
        name: 'solo',
        namespace: 'default',
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'solo', namespace: 'default' } },
      });

      assert.deepEqual(cluster.log.entries.at(-1), {
        api: 'kube',
        operation: 'pods/eviction:create',
        status: 201,
      });
    });
  });

  void describe('kubectl-facing output', () => {
    void it('renders nodes as a Table with STATUS Ready,SchedulingDisabled and ROLES', async () => {
      cluster.store.mutate('nodes', undefined, 'vmss000000', (node) => {
        node.spec = { ...(node.spec as object), unschedulable: true };
      });

      const response = await fetch(`${cluster.url}/api/v1/nodes?limit=500`, {
        headers: {
          Authorization: `Bearer ${ADMIN_TOKEN}`,
          Accept:
            'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
        },
      });
      const table = (await response.json()) as {
        kind: string;
        columnDefinitions: { name: string }[];
        rows: { cells: unknown[] }[];
      };

      assert.equal(table.kind, 'Table');
      assert.deepEqual(
        table.columnDefinitions.slice(0, 5).map((column) => column.name),
        ['Name', 'Status', 'Roles', 'Age', 'Version'],
      );
      assert.deepEqual(table.rows[0]?.cells.slice(0, 5), [
        'vmss000000',
        'Ready,SchedulingDisabled',
        'agent',
        '1s',
        'v1.32.4',
      ]);
      assert.deepEqual(table.rows[4]?.cells.slice(0, 2), ['vmss000004', 'NotReady']);
    });

    void it('streams watch events for pods until the client stops', async () => {
      const events: string[] = [];
      const watch = new Watch(cluster.kubeConfig(ADMIN_TOKEN));
      let ended!: () => void;
      const done = new Promise<void>((resolve) => {
        ended = resolve;
      });
      const controller = await watch.watch(
        '/api/v1/namespaces/default/pods',
        { resourceVersion: cluster.store.resourceVersion() },
        (phase, object: V1Pod) => events.push(`${phase} ${object.metadata?.name ?? ''}`),
        () => ended(),
      );

      await core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'w' }, spec: { containers: [] } },
      });
      await core.deleteNamespacedPod({ namespace: 'default', name: 'w', gracePeriodSeconds: 0 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort();
      await done;

      assert.deepEqual(events.slice(0, 1), ['ADDED w']);
      assert.equal(events.at(-1), 'DELETED w');
    });

    void it('resumes a watch from a list resourceVersion without missing changes', async () => {
      const list = await core.listNode({});
      cluster.store.mutate('nodes', undefined, 'vmss000002', (node) => {
        node.metadata.labels = { ...node.metadata.labels, changed: 'after-list' };
      });
      const events: string[] = [];
      const watch = new Watch(cluster.kubeConfig(ADMIN_TOKEN));

      const controller = await watch.watch(
        '/api/v1/nodes',
        { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'changed' },
        (phase, object: V1Node) => events.push(`${phase} ${object.metadata?.name ?? ''}`),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort();

      assert.deepEqual(events, ['MODIFIED vmss000002']);
    });

    void it('ends a watch from a compacted resourceVersion with a 410 Expired event', async () => {
      // More writes than the watch history keeps (it trims at twice its 5000-event window).
      for (let index = 0; index < 10_001; index += 1) {
        cluster.store.mutate('namespaces', undefined, 'default', () => undefined);
      }
      const response = await fetch(`${cluster.url}/api/v1/nodes?watch=true&resourceVersion=1`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(5000),
      });

      const event = JSON.parse((await response.text()).trim()) as {
        type: string;
        object: { code: number; reason: string };
      };

      assert.equal(event.type, 'ERROR');
      assert.deepEqual([event.object.code, event.object.reason], [410, 'Expired']);
    });

    void it('serves /version to anonymous callers', async () => {
      const response = await fetch(`${cluster.url}/version`);
      const body = (await response.json()) as { gitVersion: string };

      assert.equal(response.status, 200);
      assert.equal(body.gitVersion, 'v1.32.4');
    });

    void it('returns the Node itself from a GET', async () => {
      const node: V1Node = await core.readNode({ name: 'vmss000002' });

      assert.equal(node.kind, 'Node');
      assert.equal(node.metadata?.labels?.gpu, 'true');
    });
  });
});
