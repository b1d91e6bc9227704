/**
 * Converters from API objects to domain types, over recorded-style JSON fixtures that go through
 * client-node's own deserializer (Dates revived exactly as on the wire).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { loadYaml, type V1Node, type V1Pod } from '@kubernetes/client-node';

import {
  toClusterNode,
  toPodOnNode,
  toPodPhase,
  toPodWithNode,
  toRfc3339,
} from '../../../../shared/adapters/kubernetes/to-domain.js';
import type { ClusterNode } from '../../../../shared/domain/cluster-node.js';
import type { PodOnNode } from '../../../../shared/domain/drain.js';

const FIXTURES = new URL('../../../../../tests/fixtures/kubernetes/', import.meta.url);

function fixture<T>(file: string): T {
  // JSON is YAML; loadYaml picks the model from apiVersion/kind, like a response body would.
  return loadYaml<T>(readFileSync(new URL(file, FIXTURES), 'utf8'));
}

const PROVIDER_PREFIX =
  'azure:///subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/capz-rg/providers/Microsoft.Compute/virtualMachineScaleSets/capz-pool0/virtualMachines/';

const NODE_CASES: { file: string; expected: ClusterNode }[] = [
  {
    file: 'node-capz-ready.json',
    expected: {
      name: 'capz-pool0-vmss00000a',
      providerId: `${PROVIDER_PREFIX}10`,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': 'capz-pool0-vmss00000a',
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'Standard_D4s_v5',
        'topology.kubernetes.io/region': 'westeurope',
        'topology.kubernetes.io/zone': 'westeurope-2',
      },
      annotations: {
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'weave.works/kured-most-recent-reboot-needed': '2026-11-20T03:12:09Z',
      },
      unschedulable: false,
      taints: [],
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          lastTransitionTime: '2026-11-20T03:21:40Z',
          lastHeartbeatTime: '2026-11-22T09:01:12Z',
          reason: 'KubeletHasSufficientMemory',
        },
        {
          type: 'DiskPressure',
          status: 'False',
          lastTransitionTime: '2026-11-20T03:21:40Z',
          lastHeartbeatTime: '2026-11-22T09:01:12Z',
          reason: 'KubeletHasNoDiskPressure',
        },
        {
          type: 'Ready',
          status: 'True',
          lastTransitionTime: '2026-11-20T03:22:05Z',
          lastHeartbeatTime: '2026-11-22T09:01:12Z',
          reason: 'KubeletReady',
        },
      ],
      createdAt: '2026-10-02T08:14:51Z',
    },
  },
  {
    file: 'node-cordoned-autoscaler.json',
    expected: {
      name: 'capz-pool0-vmss00000b',
      providerId: `${PROVIDER_PREFIX}11`,
      labels: {
        'kubernetes.io/hostname': 'capz-pool0-vmss00000b',
        'kubernetes.io/os': 'linux',
        'node-role.kubernetes.io/worker': '',
      },
      annotations: {
        'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
        // Annotation values are opaque strings: kured's offset form is kept as written.
        'weave.works/kured-reboot-in-progress': '2026-11-22T02:00:31+01:00',
      },
      unschedulable: true,
      taints: [
        { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
        { key: 'ToBeDeletedByClusterAutoscaler', value: '1763802180', effect: 'NoSchedule' },
        { key: 'DeletionCandidateOfClusterAutoscaler', value: '1763801880', effect: 'PreferNoSchedule' },
        { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          lastTransitionTime: '2026-11-22T09:04:05Z',
          lastHeartbeatTime: '2026-11-22T09:02:20Z',
          reason: 'NodeStatusUnknown',
        },
      ],
      createdAt: '2026-11-21T17:40:03Z',
    },
  },
  {
    file: 'node-minimal.json',
    expected: {
      name: 'kind-worker',
      labels: {},
      annotations: {},
      unschedulable: false,
      taints: [],
      conditions: [],
    },
  },
];

const POD_CASES: { file: string; expected: PodOnNode; nodeName?: string }[] = [
  {
    file: 'pod-replicaset-emptydir.json',
    nodeName: 'capz-pool0-vmss00000a',
    expected: {
      ready: false,
      namespace: 'shop',
      name: 'web-7d9c8b6f5-x2k4p',
      uid: '4a1e9f7c-2b3d-4e5f-8a9b-0c1d2e3f4a5b',
      phase: 'Running',
      controller: { kind: 'ReplicaSet', name: 'web-7d9c8b6f5', apiVersion: 'apps/v1' },
      mirror: false,
      usesEmptyDir: true,
      terminating: false,
    },
  },
  {
    file: 'pod-daemonset.json',
    nodeName: 'capz-pool0-vmss00000a',
    expected: {
      ready: false,
      namespace: 'kube-system',
      name: 'kured-8xq2v',
      uid: 'c3b2a190-8f7e-4d6c-b5a4-938271605f4e',
      phase: 'Running',
      controller: { kind: 'DaemonSet', name: 'kured', apiVersion: 'apps/v1' },
      mirror: false,
      // hostPath is node-local but survives the node, so kubectl does not count it as local storage.
      usesEmptyDir: false,
      terminating: false,
    },
  },
  {
    file: 'pod-mirror.json',
    nodeName: 'capz-pool0-vmss00000a',
    expected: {
      ready: false,
      namespace: 'kube-system',
      name: 'kube-proxy-capz-pool0-vmss00000a',
      uid: 'd4c3b2a1-0f9e-4d8c-a7b6-5e4d3c2b1a09',
      phase: 'Running',
      controller: { kind: 'Node', name: 'capz-pool0-vmss00000a', apiVersion: 'v1' },
      mirror: true,
      usesEmptyDir: false,
      terminating: false,
    },
  },
  {
    file: 'pod-terminating-statefulset.json',
    nodeName: 'capz-pool0-vmss00000a',
    expected: {
      ready: false,
      namespace: 'shop',
      name: 'db-0',
      uid: 'e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9',
      phase: 'Running',
      controller: { kind: 'StatefulSet', name: 'db', apiVersion: 'apps/v1' },
      mirror: false,
      usesEmptyDir: false,
      terminating: true,
    },
  },
  {
    // An owner without `controller: true` is not a controller: nothing would recreate the pod.
    file: 'pod-bare-succeeded.json',
    nodeName: 'capz-pool0-vmss00000a',
    expected: {
      ready: false,
      namespace: 'default',
      name: 'debug-shell',
      uid: 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d',
      phase: 'Succeeded',
      mirror: false,
      usesEmptyDir: false,
      terminating: false,
    },
  },
  {
    file: 'pod-pending-unscheduled.json',
    expected: {
      ready: false,
      namespace: 'jobs',
      name: 'batch-x7',
      uid: 'c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f',
      phase: 'Pending',
      controller: { kind: 'Job', name: 'batch', apiVersion: 'batch/v1' },
      mirror: false,
      usesEmptyDir: true,
      terminating: false,
    },
  },
];

void describe('toClusterNode', () => {
  for (const { file, expected } of NODE_CASES) {
    void it(`converts ${file}`, () => {
      assert.deepEqual(toClusterNode(fixture<V1Node>(file)), expected);
    });
  }

  void it('refuses a node without a name', () => {
    assert.throws(() => toClusterNode({ metadata: {} }), {
      name: 'TerminalError',
      code: 'MalformedKubeObject',
    });
  });

  void it('reads an unrecognised condition status as Unknown and drops an unrecognised taint effect', () => {
    const node = toClusterNode({
      metadata: { name: 'n' },
      spec: { taints: [{ key: 'k', effect: 'NoWay' }] },
      status: { conditions: [{ type: 'Ready', status: 'Maybe' }] },
    });
    assert.deepEqual(node.conditions, [{ type: 'Ready', status: 'Unknown' }]);
    assert.deepEqual(node.taints, []);
  });
});

void describe('toPodOnNode and toPodWithNode', () => {
  for (const { file, expected, nodeName } of POD_CASES) {
    void it(`converts ${file}`, () => {
      const pod = fixture<V1Pod>(file);
      assert.deepEqual(toPodOnNode(pod), expected);
      assert.deepEqual(toPodWithNode(pod), nodeName === undefined ? expected : { ...expected, nodeName });
    });
  }

  void it('refuses a pod without a namespace', () => {
    assert.throws(() => toPodOnNode({ metadata: { name: 'p' } }), { code: 'MalformedKubeObject' });
  });
});

void describe('toPodPhase', () => {
  const cases: { phase: string | undefined; expected: string }[] = [
    { phase: 'Pending', expected: 'Pending' },
    { phase: 'Running', expected: 'Running' },
    { phase: 'Succeeded', expected: 'Succeeded' },
    { phase: 'Failed', expected: 'Failed' },
    { phase: 'Unknown', expected: 'Unknown' },
    { phase: 'running', expected: 'Unknown' },
    { phase: undefined, expected: 'Unknown' },
  ];
  for (const { phase, expected } of cases) {
    void it(`maps ${String(phase)} to ${expected}`, () => {
      assert.equal(toPodPhase(phase), expected);
    });
  }
});

void describe('toRfc3339', () => {
  const cases: { input: Date | string | undefined; expected: string | undefined }[] = [
    { input: new Date('2026-11-20T03:22:05Z'), expected: '2026-11-20T03:22:05Z' },
    { input: new Date('2026-11-20T03:22:05.123Z'), expected: '2026-11-20T03:22:05.123Z' },
    { input: '2026-11-20T04:22:05+01:00', expected: '2026-11-20T04:22:05+01:00' },
    { input: new Date('not a date'), expected: undefined },
    { input: undefined, expected: undefined },
  ];
  for (const { input, expected } of cases) {
    void it(`prints ${String(input)} as ${String(expected)}`, () => {
      assert.equal(toRfc3339(input), expected);
    });
  }
});
