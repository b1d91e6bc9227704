// What the machine's kubectl 1.32 found where the simulated API server differed from a real one, run
// again with kubectl itself: server-side dry runs (drain leaves the node schedulable), OpenAPI v3 for
// explain and apply, self reviews (`auth can-i`, `--list` as the product's service account, from the
// RBAC manifests in infra/kubernetes), workload Tables, NotReady, watch rows, Events, label and patch
// directive validation, and a /version kubectl's dispatcher picks its client by.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { isTerminating, isUnschedulable, nodeNameOf } from '../../../sim/kube/objects.js';
import type { TestCluster } from './fixtures.js';
import { nodeObject, readyCondition, replicaSetObject, runningPod } from './fixtures.js';
import { type KubectlResult, type KubectlSession, startKubectlSession } from './kubectl-session.js';

void describe('kubectl 1.32 against the simulated API server: fidelity', () => {
  let cluster: TestCluster;
  let directory: string;
  let ticker: NodeJS.Timeout | undefined;

  let session: KubectlSession;
  const kubectl = (...args: string[]): Promise<KubectlResult> => session.kubectl(...args);

  const node = (name: string): Record<string, unknown> =>
    cluster.store.get('nodes', undefined, name) ?? { metadata: { name } };

  before(async () => {
    session = await startKubectlSession({
      namespaces: ['default', 'apps', 'kube-system', 'vmss-prototype'],
    });
    ({ cluster, directory } = session);
    const { store } = cluster;
    store.create('nodes', nodeObject('vmss000000', { 'node-role.kubernetes.io/agent': '' }));
    store.create('nodes', nodeObject('vmss000001', {}));
    store.create('nodes', nodeObject('vmss000002', {}));
    store.create('nodes', {
      ...nodeObject('vmss000003', {}),
      status: { conditions: [readyCondition('Unknown')] },
    });
    const labels = { app: 'web' };
    const web = store.create('replicasets', replicaSetObject('apps', 'web-5d8f', 2, labels));
    store.create('pods', runningPod('apps', 'web-5d8f-aaaaa', 'vmss000000', { labels, owner: web }));
    store.create('pods', runningPod('apps', 'web-5d8f-bbbbb', 'vmss000001', { labels, owner: web }));
    store.create('daemonsets', {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'kured', namespace: 'kube-system' },
      spec: {
        selector: { matchLabels: { name: 'kured' } },
        template: {
          metadata: { labels: { name: 'kured' } },
          spec: {
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            containers: [{ name: 'kured', image: 'kured:1.23.0' }],
          },
        },
      },
    });
    cluster.time.advance(3);
    ticker = setInterval(() => cluster.time.advance(1), 100);
  });

  after(async () => {
    if (ticker) clearInterval(ticker);
    await session.close();
  });

  void it('reports the server version kubectl picks its 1.32 client by', async () => {
    const result = await kubectl('version', '-o', 'json');

    assert.equal(result.code, 0, result.stderr);
    const versions = JSON.parse(result.stdout) as {
      clientVersion: { minor: string };
      serverVersion: { gitVersion: string; minor: string };
    };
    assert.match(versions.clientVersion.minor, /^32\b/);
    assert.equal(versions.serverVersion.gitVersion, 'v1.32.4');
  });

  void describe('server-side dry runs change nothing', () => {
    void it('drain --dry-run=server leaves the node schedulable and its pods in place', async () => {
      const result = await kubectl('drain', 'vmss000000', '--ignore-daemonsets', '--dry-run=server');

      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /evicting pod apps\/web-5d8f-aaaaa \(server dry run\)/);
      assert.match(result.stdout, /node\/vmss000000 drained \(server dry run\)/);
      assert.equal(isUnschedulable(node('vmss000000') as never), false);
      const pod = cluster.store.get('pods', 'apps', 'web-5d8f-aaaaa');
      assert.ok(pod && !isTerminating(pod), 'the pod is still there, not terminating');
      assert.ok(
        cluster.log.entries.some(
          (entry) => entry.operation === 'pods/eviction:create' && entry.status === 201,
        ),
      );
    });

    void it('create, label, delete with --dry-run=server answer as if done', async () => {
      const created = await kubectl('create', 'namespace', 'scratch', '--dry-run=server');
      const labelled = await kubectl('label', 'node', 'vmss000001', 'tier=gold', '--dry-run=server');
      const deleted = await kubectl('delete', 'pod', '-n', 'apps', 'web-5d8f-bbbbb', '--dry-run=server');

      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, /namespace\/scratch created \(server dry run\)/);
      assert.equal(labelled.code, 0, labelled.stderr);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.equal(cluster.store.get('namespaces', undefined, 'scratch'), undefined);
      assert.equal(cluster.store.get('nodes', undefined, 'vmss000001')?.metadata.labels?.tier, undefined);
      const pod = cluster.store.get('pods', 'apps', 'web-5d8f-bbbbb');
      assert.ok(pod && !isTerminating(pod));
    });
  });

  void describe('self reviews answered from the RBAC manifests', () => {
    void it('auth can-i --list as the service account lists exactly what infra/kubernetes grants it', async () => {
      const result = await kubectl('--context', 'product', 'auth', 'can-i', '--list');

      assert.equal(result.code, 0, result.stderr);
      const rows = result.stdout.split('\n').map((line) => line.trim().split(/\s{2,}/));
      const verbsOf = (resource: string): string | undefined =>
        rows.find((row) => row[0] === resource)?.at(-1);
      assert.equal(verbsOf('nodes'), '[get list patch]');
      assert.equal(verbsOf('pods/eviction'), '[create]');
      assert.equal(verbsOf('daemonsets.apps'), '[get list]');
      assert.equal(verbsOf('pods'), '[list create get delete]');
      assert.equal(verbsOf('selfsubjectaccessreviews.authorization.k8s.io'), '[create]');
      assert.ok(!rows.some((row) => row[0] === 'secrets'), 'no secrets access');
    });

    void it('auth can-i answers yes and no, per namespace', async () => {
      const patchNodes = await kubectl('--context', 'product', 'auth', 'can-i', 'patch', 'nodes');
      const deleteNodes = await kubectl('--context', 'product', 'auth', 'can-i', 'delete', 'nodes');
      const createPods = await kubectl(
        '--context',
        'product',
        'auth',
        'can-i',
        'create',
        'pods',
        '-n',
        'vmss-prototype',
      );
      const createPodsElsewhere = await kubectl(
        '--context',
        'product',
        'auth',
        'can-i',
        'create',
        'pods',
        '-n',
        'default',
      );
      const evict = await kubectl(
        '--context',
        'product',
        'auth',
        'can-i',
        'create',
        'pods',
        '--subresource=eviction',
        '-n',
        'apps',
      );

      assert.equal(patchNodes.stdout.trim(), 'yes');
      assert.equal(deleteNodes.stdout.trim(), 'no');
      assert.equal(deleteNodes.code, 1);
      assert.equal(createPods.stdout.trim(), 'yes');
      assert.equal(createPodsElsewhere.stdout.trim(), 'no');
      assert.equal(evict.stdout.trim(), 'yes');
    });
  });

  void describe('OpenAPI for explain and apply', () => {
    void it('explains a kind and a nested field', async () => {
      const kind = await kubectl('explain', 'node');
      const field = await kubectl('explain', 'pods.spec.tolerations');

      assert.equal(kind.code, 0, kind.stderr);
      assert.match(kind.stdout, /KIND:\s+Node/);
      assert.match(kind.stdout, /spec\s+<NodeSpec>/);
      assert.equal(field.code, 0, field.stderr);
      assert.match(field.stdout, /tolerationSeconds\s+<integer>/);
    });

    void it('applies a Deployment, re-applies it unchanged, and refuses an unknown field strictly', async () => {
      const manifest = (extra: string): string => {
        const file = join(directory, `deployment${extra === '' ? '' : '-bad'}.yaml`);
        writeFileSync(
          file,
          [
            'apiVersion: apps/v1',
            'kind: Deployment',
            'metadata: {name: hello, namespace: default}',
            'spec:',
            '  replicas: 1',
            `  ${extra}`,
            '  selector: {matchLabels: {app: hello}}',
            '  template:',
            '    metadata: {labels: {app: hello}}',
            '    spec: {containers: [{name: hello, image: "nginx:1.27"}]}',
            '',
          ].join('\n'),
        );
        return file;
      };

      const first = await kubectl('apply', '-f', manifest(''));
      const second = await kubectl('apply', '-f', manifest(''));
      const bad = await kubectl('apply', '-f', manifest('replicaz: 2'));

      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /deployment.apps\/hello created/);
      assert.match(second.stdout, /deployment.apps\/hello unchanged/);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /unknown field "spec.replicaz"/);
    });
  });

  void describe('tables, watch rows, events and validation', () => {
    void it('prints DaemonSets, ReplicaSets and Deployments with their columns, and NotReady nodes', async () => {
      const workloads = await kubectl('get', 'ds,rs,deploy', '-A');
      const nodes = await kubectl('get', 'nodes');

      assert.equal(workloads.code, 0, workloads.stderr);
      assert.match(
        workloads.stdout,
        /NAMESPACE\s+NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE/,
      );
      assert.match(
        workloads.stdout,
        /daemonset.apps\/kured\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+kubernetes.io\/os=linux/,
      );
      assert.match(
        workloads.stdout,
        /NAMESPACE\s+NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\n.*replicaset.apps\/web-5d8f\s+2\s+\d+\s+\d+/,
      );
      assert.match(workloads.stdout, /NAMESPACE\s+NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/);
      assert.match(nodes.stdout, /vmss000003\s+NotReady\s/);
    });

    void it('streams watch events as table rows, and records the cordon as an event', async () => {
      const watching = kubectl('get', 'nodes', 'vmss000002', '--watch', '--request-timeout=4s');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const cordon = await kubectl('cordon', 'vmss000002');
      const watched = await watching;
      const events = await kubectl(
        'get',
        'events',
        '-n',
        'default',
        '--field-selector',
        'involvedObject.name=vmss000002',
      );

      assert.equal(cordon.code, 0, cordon.stderr);
      const lines = watched.stdout.trim().split('\n');
      assert.match(lines[0] ?? '', /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
      assert.ok(
        lines.some((line) => /^vmss000002\s+Ready,SchedulingDisabled\s/.test(line)),
        watched.stdout,
      );
      assert.equal(lines.filter((line) => line.startsWith('NAME')).length, 1, 'one header');
      assert.match(
        events.stdout,
        /Normal\s+NodeNotSchedulable\s+node\/vmss000002\s+Node vmss000002 status is now: NodeNotSchedulable/,
      );
    });

    void it('records an eviction as the kubelet stopping the container', async () => {
      const drain = await kubectl('drain', 'vmss000001', '--ignore-daemonsets', '--timeout=30s');
      const events = await kubectl('get', 'events', '-n', 'apps', '--field-selector', 'reason=Killing');

      assert.equal(drain.code, 0, drain.stderr);
      assert.ok(!cluster.store.list('pods', 'apps').some((pod) => nodeNameOf(pod) === 'vmss000001'));
      assert.match(events.stdout, /Normal\s+Killing\s+pod\/web-5d8f-bbbbb\s+Stopping container main/);
    });

    void it('refuses a malformed label key and an unknown patch directive with 422', async () => {
      const label = await kubectl('label', 'node', 'vmss000000', 'bad key!=x');
      const patch = await kubectl(
        'patch',
        'node',
        'vmss000000',
        '-p',
        '{"metadata":{"labels":{"$patch":"bogus"}}}',
      );

      assert.notEqual(label.code, 0);
      assert.match(
        label.stderr,
        /The Node "vmss000000" is invalid: metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters/,
      );
      assert.notEqual(patch.code, 0);
      assert.match(patch.stderr, /unknown patch type/);
      assert.ok(
        cluster.log.entries.some((entry) => entry.operation === 'nodes:patch' && entry.status === 422),
      );
    });
  });
});
