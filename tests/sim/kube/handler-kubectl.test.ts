// Runs the machine's real kubectl against the simulated API server over HTTPS: get, cordon, a drain
// that a PodDisruptionBudget first blocks, uncordon and annotate.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { isPodReady, nodeNameOf } from '../../../sim/kube/objects.js';
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
} from './fixtures.js';
import { createTestTls } from './tls.js';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

void describe('kubectl against the simulated API server', () => {
  let cluster: TestCluster;
  let directory: string;
  let ticker: NodeJS.Timeout | undefined;

  function kubectl(...args: string[]): Promise<Result> {
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', args, {
        env: { ...process.env, KUBECONFIG: join(directory, 'kubeconfig'), HOME: directory },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  void before(async () => {
    const tls = createTestTls();
    cluster = await startTestCluster({ tls });
    directory = mkdtempSync(join(tmpdir(), 'kube-sim-kubectl-'));
    writeFileSync(join(directory, 'ca.crt'), tls.caPem);
    writeFileSync(
      join(directory, 'kubeconfig'),
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: sim\n  cluster:\n    server: ${cluster.url}\n    certificate-authority: ${join(directory, 'ca.crt')}`,
        'users:',
        `- name: admin\n  user:\n    token: ${ADMIN_TOKEN}`,
        'contexts:',
        '- name: sim\n  context:\n    cluster: sim\n    user: admin',
        'current-context: sim',
        '',
      ].join('\n'),
    );

    const { store } = cluster;
    store.create('namespaces', namespaceObject('default'));
    store.create('namespaces', namespaceObject('apps'));
    store.create('namespaces', namespaceObject('kube-system'));
    store.create('nodes', nodeObject('vmss000000', { 'node-role.kubernetes.io/agent': '' }));
    // The second node is down, so the ReplicaSet's second replica cannot start yet.
    store.create('nodes', nodeObject('vmss000001', {}, false));
    store.create('nodes', nodeObject('vmss000002', {}));
    const labels = { app: 'web' };
    const web = store.create('replicasets', replicaSetObject('apps', 'web-5d8f', 2, labels));
    store.create('pods', runningPod('apps', 'web-5d8f-aaaaa', 'vmss000000', { labels, owner: web }));
    store.create('pods', {
      ...runningPod('apps', 'web-5d8f-bbbbb', 'vmss000001', { labels, owner: web }),
      status: { phase: 'Pending' },
    });
    store.create(
      'poddisruptionbudgets',
      pdbObject('apps', 'web', { minAvailable: 1, selector: { matchLabels: labels } }),
    );
    const cacheLabels = { app: 'cache' };
    const cache = store.create('replicasets', replicaSetObject('apps', 'cache-77c9', 1, cacheLabels));
    store.create(
      'pods',
      runningPod('apps', 'cache-77c9-ccccc', 'vmss000000', {
        labels: cacheLabels,
        owner: cache,
        emptyDir: true,
      }),
    );
    store.create('daemonsets', {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'kured', namespace: 'kube-system' },
      spec: {
        selector: { matchLabels: { name: 'kured' } },
        template: {
          metadata: { labels: { name: 'kured' } },
          spec: { containers: [{ name: 'kured', image: 'kured:1.23.0' }] },
        },
      },
    });
    store.create(
      'pods',
      runningPod('kube-system', 'kube-proxy-vmss000000', 'vmss000000', {
        annotations: { 'kubernetes.io/config.mirror': 'abc123' },
      }),
    );
    cluster.time.advance(3);
    // Simulated time runs ten times faster than the wall clock while kubectl works.
    ticker = setInterval(() => cluster.time.advance(1), 100);
  });

  void after(async () => {
    if (ticker) clearInterval(ticker);
    await cluster.close();
    rmSync(directory, { recursive: true, force: true });
  });

  void it('lists nodes with their status and roles', async () => {
    const result = await kubectl('get', 'nodes');

    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    assert.match(lines[1] ?? '', /^vmss000000\s+Ready\s+agent\s+\S+\s+v1\.32\.4$/);
    assert.match(lines[2] ?? '', /^vmss000001\s+NotReady\s+<none>/);
  });

  void it('cordons a node', async () => {
    const result = await kubectl('cordon', 'vmss000000');
    const nodes = await kubectl('get', 'nodes', 'vmss000000');

    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'node/vmss000000 cordoned');
    assert.match(nodes.stdout, /vmss000000\s+Ready,SchedulingDisabled/);
    assert.equal(
      (cluster.store.get('nodes', undefined, 'vmss000000')?.spec as { unschedulable?: boolean } | undefined)
        ?.unschedulable,
      true,
    );
  });

  void it(
    'drains once the disruption budget allows it, retrying the blocked eviction',
    { timeout: 60_000 },
    async () => {
      const blocked = new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (
            cluster.log.entries.some(
              (entry) => entry.operation === 'pods/eviction:create' && entry.status === 429,
            )
          ) {
            clearInterval(poll);
            // Bring the second node back: its web replica starts and the budget can spare the first.
            cluster.store.mutate('nodes', undefined, 'vmss000001', (node) => {
              node.status = {
                ...(node.status as object),
                conditions: [readyCondition('True', cluster.time.nowMs())],
              };
            });
            resolve();
          }
        }, 50);
      });

      const result = await kubectl(
        'drain',
        'vmss000000',
        '--ignore-daemonsets',
        '--delete-emptydir-data',
        '--grace-period=5',
        '--timeout=45s',
      );
      await blocked;

      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /evicting pod apps\/web-5d8f-aaaaa/);
      assert.match(result.stdout, /node\/vmss000000 drained/);
      assert.match(result.stderr, /Cannot evict pod as it would violate the pod's disruption budget/);
      assert.match(result.stderr, /ignoring DaemonSet-managed Pods: kube-system\/kured-/);
      const onNode = cluster.store.list('pods').filter((pod: KubeObject) => nodeNameOf(pod) === 'vmss000000');
      assert.deepEqual(
        onNode.map((pod) => pod.metadata.name).filter((name) => !name.startsWith('kured-')),
        ['kube-proxy-vmss000000'],
      );
      const web = cluster.store.list('pods', 'apps').filter((pod) => pod.metadata.labels?.app === 'web');
      assert.equal(web.length, 2);
      assert.ok(web.every((pod) => nodeNameOf(pod) !== 'vmss000000'));
      assert.ok(web.some((pod) => isPodReady(pod)));
    },
  );

  void it('uncordons and annotates the node', async () => {
    const uncordon = await kubectl('uncordon', 'vmss000000');
    const annotate = await kubectl(
      'annotate',
      'node',
      'vmss000000',
      'cluster-autoscaler.kubernetes.io/scale-down-disabled=true',
    );

    assert.equal(uncordon.code, 0, uncordon.stderr);
    assert.equal(annotate.code, 0, annotate.stderr);
    const node = cluster.store.get('nodes', undefined, 'vmss000000');
    assert.equal((node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable, undefined);
    assert.equal(
      node?.metadata.annotations?.['cluster-autoscaler.kubernetes.io/scale-down-disabled'],
      'true',
    );
  });
});
