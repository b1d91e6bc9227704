/** Table tests of the identity plan per bootstrap flavour and of the flavour detection. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  BOOTSTRAP_FLAVOURS,
  chooseCaptureFlavour,
  detectBootstrapFlavour,
  identityPlan,
} from '../../../shared/domain/bootstrap-flavour.js';

const IDENTITY = [
  '/etc/hostname',
  '/var/lib/cloud/data/*',
  '/var/lib/cloud/instance',
  '/var/lib/cloud/instances/*',
  '/var/lib/waagent/history/*',
  '/var/lib/waagent/events/*',
  '/var/log/journal/*',
  '/etc/ssh/ssh_host_*',
];

void describe('identityPlan', () => {
  for (const flavour of ['aks-engine', 'k3s', 'rke2'] as const) {
    void it(`${flavour}: removes every identity file, empties machine-id`, () => {
      const plan = identityPlan(flavour);

      assert.deepEqual([...plan.removes], IDENTITY);
      assert.deepEqual([...plan.empties], ['/etc/machine-id']);
    });
  }

  const kept: { flavour: 'aks-engine' | 'k3s' | 'rke2'; keeps: string[] }[] = [
    { flavour: 'aks-engine', keeps: ['/etc/kubernetes/certs', '/var/lib/kubelet/kubeconfig'] },
    { flavour: 'k3s', keeps: ['/etc/rancher/k3s/config.yaml', '/etc/rancher/node/password'] },
    { flavour: 'rke2', keeps: ['/etc/rancher/rke2/config.yaml', '/etc/rancher/node/password'] },
  ];
  for (const { flavour, keeps } of kept) {
    void it(`${flavour}: keeps what joining needs, and never removes it`, () => {
      const plan = identityPlan(flavour);

      assert.deepEqual(
        plan.keeps.map((entry) => entry.path),
        keeps,
      );
      for (const path of keeps) {
        assert.ok(
          !plan.removes.some((removed) => path.startsWith(removed.replace(/\*$/, ''))),
          `${path} is not removed`,
        );
      }
    });
  }

  void it('kubeadm: removes what kubeadm reset removes, on a copy only; new nodes run kubeadm join', () => {
    const plan = identityPlan('kubeadm');

    assert.equal(plan.scrub, 'copy-only');
    assert.equal(plan.newNodes, 'run-pool-bootstrap');
    // The common identity set, then kubeadm reset's cleanup (cleanupnode.go) and join preflight's files.
    assert.deepEqual(plan.removes.slice(0, IDENTITY.length), IDENTITY);
    for (const path of [
      '/etc/kubernetes/kubelet.conf',
      '/etc/kubernetes/bootstrap-kubelet.conf',
      '/etc/kubernetes/pki/*',
      '/etc/kubernetes/manifests/*',
      '/var/lib/kubelet/*',
    ]) {
      assert.ok(plan.removes.includes(path), `${path} is removed`);
    }
    assert.deepEqual([...plan.empties], ['/etc/machine-id']);
    // The image cache stays warm: nothing under /var/lib/containerd goes.
    assert.ok(plan.keeps.some((kept) => kept.path === '/var/lib/containerd'));
    assert.ok(!plan.removes.some((path) => path.startsWith('/var/lib/containerd')));
  });

  void it('scrubs the donor itself only where its identity can be given back', () => {
    assert.deepEqual(
      BOOTSTRAP_FLAVOURS.map((flavour) => {
        const plan = identityPlan(flavour);
        return `${plan.scrub}/${plan.newNodes}`;
      }),
      [
        'donor-or-copy/boot-from-image',
        'copy-only/run-pool-bootstrap',
        'donor-or-copy/boot-from-image',
        'donor-or-copy/boot-from-image',
      ],
    );
  });
});

void describe('detectBootstrapFlavour', () => {
  const cases: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    expected: string;
  }[] = [
    { name: 'k3s node args', annotations: { 'k3s.io/node-args': '["agent"]' }, expected: 'k3s' },
    { name: 'rke2 node args', annotations: { 'rke2.io/node-args': '["agent"]' }, expected: 'rke2' },
    {
      name: 'Cluster API machine',
      annotations: { 'cluster.x-k8s.io/cluster-name': 'capz-1' },
      labels: { 'kubernetes.azure.com/role': 'agent' },
      expected: 'kubeadm',
    },
    {
      name: 'kubeadm CRI socket annotation',
      annotations: { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock' },
      expected: 'kubeadm',
    },
    {
      name: 'aks-engine role label',
      labels: { 'kubernetes.azure.com/role': 'agent' },
      expected: 'aks-engine',
    },
    {
      name: 'aks-engine also writes the cluster label (its resource group)',
      labels: { 'kubernetes.azure.com/role': 'agent', 'kubernetes.azure.com/cluster': 'rg-k8s-prod' },
      expected: 'aks-engine',
    },
    {
      name: 'AKS (managed) is not aks-engine: MC_ resource group',
      labels: {
        'kubernetes.azure.com/role': 'agent',
        'kubernetes.azure.com/cluster': 'MC_rg_aks_westeurope',
      },
      expected: 'unknown',
    },
    {
      name: 'AKS (managed) is not aks-engine: its agentpool label',
      labels: {
        'kubernetes.azure.com/role': 'agent',
        'kubernetes.azure.com/cluster': 'nodes-rg',
        'kubernetes.azure.com/agentpool': 'nodepool1',
      },
      expected: 'unknown',
    },
    {
      name: 'AKS (managed) is not aks-engine: its node image version label',
      labels: {
        'kubernetes.azure.com/role': 'agent',
        'kubernetes.azure.com/node-image-version': 'AKSUbuntu-2204gen2containerd-202611.01.0',
      },
      expected: 'unknown',
    },
    { name: 'nothing to go by', expected: 'unknown' },
  ];
  for (const { name, labels, annotations, expected } of cases) {
    void it(name, () => {
      const detection = detectBootstrapFlavour({
        name: 'node-0',
        labels: labels ?? {},
        annotations: annotations ?? {},
      });

      assert.equal(detection.kind === 'detected' ? detection.flavour : 'unknown', expected);
      if (detection.kind === 'unknown') assert.match(detection.reason, /pools\[\]\.bootstrapFlavour/);
    });
  }
});

void describe('chooseCaptureFlavour', () => {
  const aksEngine = { name: 'donor', labels: { 'kubernetes.azure.com/role': 'agent' }, annotations: {} };
  const capz = { name: 'donor', labels: {}, annotations: { 'cluster.x-k8s.io/machine': 'm-1' } };
  const bare = { name: 'donor', labels: {}, annotations: {} };
  const cases: {
    name: string;
    configured?: 'aks-engine' | 'kubeadm' | 'k3s' | 'rke2';
    donor?: typeof bare;
    expected: string;
    reason?: RegExp;
  }[] = [
    { name: 'nothing configured, no donor: nothing to decide', expected: 'undecided' },
    { name: 'configured k3s', configured: 'k3s', expected: 'capture k3s configured' },
    {
      name: 'the configured flavour wins over what the donor shows',
      configured: 'rke2',
      donor: aksEngine,
      expected: 'capture rke2 configured',
    },
    { name: 'detected aks-engine', donor: aksEngine, expected: 'capture aks-engine detected' },
    {
      name: 'configured kubeadm, no donor yet',
      configured: 'kubeadm',
      expected: 'capture kubeadm configured',
    },
    { name: 'detected kubeadm (Cluster API marks)', donor: capz, expected: 'capture kubeadm detected' },
    {
      name: 'an unknown flavour is refused with the fix',
      donor: bare,
      expected: 'refuse',
      reason: /the bootstrap flavour is unknown: .*set pools\[\]\.bootstrapFlavour/,
    },
  ];
  for (const { name, configured, donor, expected, reason } of cases) {
    void it(name, () => {
      const choice = chooseCaptureFlavour({
        ...(configured === undefined ? {} : { configured }),
        ...(donor === undefined ? {} : { donor }),
      });

      const summary =
        choice === undefined
          ? 'undecided'
          : choice.kind === 'refuse'
            ? 'refuse'
            : `capture ${choice.flavour} ${choice.source}`;
      assert.equal(summary, expected);
      if (reason !== undefined && choice?.kind === 'refuse') assert.match(choice.reason, reason);
    });
  }
});
