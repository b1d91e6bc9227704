/** Table tests of the capture decision per bootstrap flavour and of the flavour detection. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  BOOTSTRAP_FLAVOURS,
  captureDecision,
  detectBootstrapFlavour,
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

void describe('captureDecision', () => {
  for (const flavour of ['aks-engine', 'k3s', 'rke2'] as const) {
    void it(`${flavour}: removes every identity file, empties machine-id`, () => {
      const decision = captureDecision(flavour);

      assert.equal(decision.kind, 'capture');
      assert.ok(decision.kind === 'capture');
      assert.deepEqual([...decision.plan.removes], IDENTITY);
      assert.deepEqual([...decision.plan.empties], ['/etc/machine-id']);
    });
  }

  const kept: { flavour: 'aks-engine' | 'k3s' | 'rke2'; keeps: string[] }[] = [
    { flavour: 'aks-engine', keeps: ['/etc/kubernetes/certs', '/var/lib/kubelet/kubeconfig'] },
    { flavour: 'k3s', keeps: ['/etc/rancher/k3s/config.yaml', '/etc/rancher/node/password'] },
    { flavour: 'rke2', keeps: ['/etc/rancher/rke2/config.yaml', '/etc/rancher/node/password'] },
  ];
  for (const { flavour, keeps } of kept) {
    void it(`${flavour}: keeps what joining needs, and never removes it`, () => {
      const decision = captureDecision(flavour);
      assert.ok(decision.kind === 'capture');

      assert.deepEqual(
        decision.plan.keeps.map((entry) => entry.path),
        keeps,
      );
      for (const path of keeps) {
        assert.ok(
          !decision.plan.removes.some((removed) => path.startsWith(removed.replace(/\*$/, ''))),
          `${path} is not removed`,
        );
      }
    });
  }

  void it('kubeadm: refused with the reason (donor credentials, NodeRestriction, bootstrap token)', () => {
    const decision = captureDecision('kubeadm');

    assert.equal(decision.kind, 'refuse');
    assert.ok(decision.kind === 'refuse');
    assert.match(decision.reason, /\/var\/lib\/kubelet\/pki/);
    assert.match(decision.reason, /NodeRestriction/);
    assert.match(decision.reason, /bootstrap token/);
  });

  void it('decides every flavour', () => {
    assert.deepEqual(
      BOOTSTRAP_FLAVOURS.map((flavour) => captureDecision(flavour).kind),
      ['capture', 'refuse', 'capture', 'capture'],
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
      name: 'AKS (managed) is not aks-engine',
      labels: {
        'kubernetes.azure.com/role': 'agent',
        'kubernetes.azure.com/cluster': 'MC_rg_aks_westeurope',
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
