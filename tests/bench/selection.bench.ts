/**
 * Benchmark of prototype selection on large clusters: converting raw Node objects (as the API server
 * returns them, ~5 KB each) to ClusterNode, grouping by scale set, and selecting over ~40 pools.
 */

import type { ClusterNode, NodeCondition, NodeTaint } from '../../shared/domain/cluster-node.js';
import {
  groupNodesByScaleSet,
  type PoolImageFacts,
  type PoolSelectionInput,
  type PrototypeSelection,
  selectPrototypeNode,
  selectPrototypeNodeForPool,
} from '../../shared/domain/prototype-selection.js';
import { formatProviderId, type ScaleSetRef } from '../../shared/domain/resource-id.js';
import { DEFAULT_SELECTION_POLICY } from '../../shared/domain/selection-policy.js';

export const NOW = new Date('2026-11-22T12:00:00Z');
export const POOLS = 40;
const SIZES = [5_000, 20_000];
const SELECTION_ROUNDS = 5;
const DAY_MS = 86_400_000;

/** The subset of a v1 Node (JSON) the bench generates; shaped like a kubelet-registered Azure node. */
interface RawNode {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  spec: {
    podCIDR: string;
    podCIDRs: string[];
    providerID?: string;
    unschedulable?: boolean;
    taints?: NodeTaint[];
  };
  status: {
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
    conditions: (NodeCondition & { message: string })[];
    addresses: { type: string; address: string }[];
    daemonEndpoints: { kubeletEndpoint: { Port: number } };
    nodeInfo: Record<string, string>;
    images: { names: string[]; sizeBytes: number }[];
  };
}

/** Registered in tests/bench/index.ts. */
export const selectionBench = {
  name: 'selection',
  run(): void {
    const rows: Row[] = [];
    for (const size of SIZES) {
      rows.push(measureSelection(size));
    }
    printTable(rows);
  },
};

export interface Row {
  readonly nodes: number;
  readonly pools: number;
  readonly avgNodeJsonBytes: number;
  readonly rawHeapMb: number;
  readonly convertMs: number;
  readonly domainHeapMb: number;
  readonly groupMs: number;
  readonly selectAllPoolsMs: number;
  readonly selectPerPoolMs: number;
  readonly naiveAllPoolsMs: number;
  readonly selectionHeapMb: number;
  readonly peakRssMb: number;
  readonly outcomes: string;
}

export function measureSelection(size: number): Row {
  const pools = Array.from({ length: POOLS }, (_, i) => poolRef(i));
  // Mostly images patched 8–12 days ago; some marketplace (unknown) images; some captured an hour ago.
  const images = pools.map((_, i): PoolImageFacts | undefined => {
    if (i % 10 === 9) {
      return undefined;
    }
    const ageMs = i % 8 === 7 ? 3_600_000 : (8 + (i % 5)) * DAY_MS;
    return { version: '2026.1112.0900', patchedAt: new Date(NOW.getTime() - ageMs) };
  });

  collect();
  const heapBeforeRaw = heapUsed();
  const random = mulberry32(size);
  const raw = Array.from({ length: size }, (_, i) => rawNode(i, pools[i % POOLS] ?? poolRef(0), random));
  collect();
  const rawHeapMb = toMb(heapUsed() - heapBeforeRaw);
  const avgNodeJsonBytes = Math.round(
    raw.reduce((sum, node) => sum + JSON.stringify(node).length, 0) / raw.length,
  );

  collect();
  const heapBeforeDomain = heapUsed();
  let start = performance.now();
  const nodes = raw.map(toClusterNode);
  const convertMs = performance.now() - start;
  collect();
  const domainHeapMb = toMb(heapUsed() - heapBeforeDomain);

  const inputs: PoolSelectionInput[] = pools.map((pool, i) => ({
    pool: { scaleSet: pool },
    policy: { ...DEFAULT_SELECTION_POLICY, maximumImageAgeSeconds: 30 * 86_400 },
    ...(images[i] === undefined ? {} : { image: images[i] }),
    now: NOW,
  }));

  collect();
  const heapBeforeSelection = heapUsed();
  let groupMs = Number.POSITIVE_INFINITY;
  let selectAllPoolsMs = Number.POSITIVE_INFINITY;
  let results: PrototypeSelection[] = [];
  for (let round = 0; round < SELECTION_ROUNDS; round++) {
    start = performance.now();
    const groups = groupNodesByScaleSet(nodes);
    const grouped = performance.now();
    results = inputs.map((input) => selectPrototypeNodeForPool(groups, input));
    const selected = performance.now();
    groupMs = Math.min(groupMs, grouped - start);
    selectAllPoolsMs = Math.min(selectAllPoolsMs, selected - grouped);
  }
  collect();
  const selectionHeapMb = toMb(heapUsed() - heapBeforeSelection);

  // The convenience function re-parses every node for every pool: what grouping avoids.
  start = performance.now();
  for (const input of inputs) {
    selectPrototypeNode({ ...input, nodes });
  }
  const naiveAllPoolsMs = performance.now() - start;

  const outcomes = new Map<string, number>();
  for (const result of results) {
    const key = result.fallback.used ? `${result.outcome}(fallback)` : result.outcome;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const checked = results.reduce((sum, result) => sum + result.poolNodeCount, 0);
  if (checked !== size) {
    throw new Error(`benchmarking selection: pools cover ${checked} nodes, expected ${size}`);
  }

  return {
    nodes: size,
    pools: POOLS,
    avgNodeJsonBytes,
    rawHeapMb,
    convertMs,
    domainHeapMb,
    groupMs,
    selectAllPoolsMs,
    selectPerPoolMs: selectAllPoolsMs / POOLS,
    naiveAllPoolsMs,
    selectionHeapMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    outcomes: [...outcomes].map(([key, count]) => `${key}=${count}`).join(' '),
  };
}

/** Stand-in for the Kubernetes adapter's converter (the real one lives in shared/adapters/kubernetes). */
function toClusterNode(raw: RawNode): ClusterNode {
  return {
    name: raw.metadata.name,
    ...(raw.spec.providerID === undefined ? {} : { providerId: raw.spec.providerID }),
    labels: raw.metadata.labels,
    annotations: raw.metadata.annotations,
    unschedulable: raw.spec.unschedulable === true,
    taints: (raw.spec.taints ?? []).map((taint) => ({
      key: taint.key,
      ...(taint.value === undefined ? {} : { value: taint.value }),
      effect: taint.effect,
    })),
    conditions: raw.status.conditions.map((condition) => ({
      type: condition.type,
      status: condition.status,
      ...(condition.lastTransitionTime === undefined
        ? {}
        : { lastTransitionTime: condition.lastTransitionTime }),
      ...(condition.lastHeartbeatTime === undefined
        ? {}
        : { lastHeartbeatTime: condition.lastHeartbeatTime }),
      ...(condition.reason === undefined ? {} : { reason: condition.reason }),
    })),
    createdAt: raw.metadata.creationTimestamp,
  };
}

export function poolRef(i: number): ScaleSetRef {
  return {
    subscriptionId: '6b1f9c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
    resourceGroup: `rg-prod-weu-${i % 4}`,
    name: `k8s-pool${String(i).padStart(2, '0')}`,
  };
}

const IMAGE_NAMES = [
  'mcr.microsoft.com/oss/kubernetes/kube-proxy',
  'mcr.microsoft.com/containernetworking/azure-cns',
  'mcr.microsoft.com/oss/calico/node',
  'mcr.microsoft.com/oss/calico/cni',
  'registry.k8s.io/pause',
  'docker.io/kubereboot/kured',
  'quay.io/prometheus/node-exporter',
  'docker.io/fluent/fluent-bit',
  'mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi',
  'mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi',
  'mcr.microsoft.com/oss/kubernetes-csi/livenessprobe',
  'mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar',
];

export function rawNode(i: number, pool: ScaleSetRef, random: () => number): RawNode {
  const instanceId = Math.floor(i / POOLS);
  const name = `${pool.name}-vmss${instanceId.toString(36).padStart(6, '0')}`;
  const iso = (msAgo: number): string => new Date(NOW.getTime() - msAgo).toISOString().replace('.000Z', 'Z');
  const roll = random();
  const readyMsAgo = Math.floor(random() * 20 * DAY_MS);
  const annotations: Record<string, string> = {
    'node.alpha.kubernetes.io/ttl': '0',
    'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
    'csi.volume.kubernetes.io/nodeid': JSON.stringify({
      'disk.csi.azure.com': name,
      'file.csi.azure.com': name,
    }),
    'projectcalico.org/IPv4Address': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/16`,
  };
  if (roll > 0.1) {
    annotations['weave.works/kured-most-recent-reboot-needed'] = iso(readyMsAgo + 10 * 60_000);
  }
  if (roll > 0.95) {
    annotations['weave.works/kured-reboot-in-progress'] = iso(60_000);
  }
  const taints: NodeTaint[] = [];
  if (roll > 0.1 && roll < 0.11) {
    taints.push({ key: 'ToBeDeletedByClusterAutoscaler', value: '1763812800', effect: 'NoSchedule' });
  }
  const notReady = roll > 0.11 && roll < 0.13;
  if (notReady) {
    taints.push({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' });
  }
  const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: iso(30_000),
    lastTransitionTime: iso(readyMsAgo),
    reason,
    message,
  });
  return {
    metadata: {
      name,
      uid: `${(i * 2654435761) >>> 0}`.padStart(8, '0') + '-7d1b-4f53-9a53-0b9d7f1f0e21',
      resourceVersion: String(1_000_000 + i),
      creationTimestamp: iso(readyMsAgo + DAY_MS),
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': 'Standard_D8s_v5',
        'beta.kubernetes.io/os': 'linux',
        'failure-domain.beta.kubernetes.io/region': 'westeurope',
        'failure-domain.beta.kubernetes.io/zone': `westeurope-${(i % 3) + 1}`,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/role': 'agent',
        'node-role.kubernetes.io/agent': '',
        'node.kubernetes.io/instance-type': 'Standard_D8s_v5',
        'topology.kubernetes.io/region': 'westeurope',
        'topology.kubernetes.io/zone': `westeurope-${(i % 3) + 1}`,
        'topology.disk.csi.azure.com/zone': `westeurope-${(i % 3) + 1}`,
        agentpool: pool.name,
        'example.com/team': `team-${i % 7}`,
      },
      annotations,
    },
    spec: {
      podCIDR: `10.244.${i % 256}.0/24`,
      podCIDRs: [`10.244.${i % 256}.0/24`],
      providerID: formatProviderId({
        kind: 'scale-set-instance',
        scaleSet: pool,
        instanceId: String(instanceId),
      }),
      ...(roll > 0.13 && roll < 0.16 ? { unschedulable: true } : {}),
      ...(taints.length === 0 ? {} : { taints }),
    },
    status: {
      capacity: {
        cpu: '8',
        'ephemeral-storage': '129886128Ki',
        memory: '32863516Ki',
        pods: '110',
        'hugepages-2Mi': '0',
      },
      allocatable: {
        cpu: '7820m',
        'ephemeral-storage': '119703055367',
        memory: '28362012Ki',
        pods: '110',
        'hugepages-2Mi': '0',
      },
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        notReady
          ? condition('Ready', 'False', 'NodeStatusUnknown', 'Kubelet stopped posting node status.')
          : condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status. AppArmor enabled'),
      ],
      addresses: [
        { type: 'InternalIP', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: `b00710${i.toString(16).padStart(6, '0')}-1c2d-4e5f-8a9b-0c1d2e3f4a5b`,
        containerRuntimeVersion: 'containerd://1.7.27',
        kernelVersion: '6.8.0-1021-azure',
        kubeProxyVersion: 'v1.32.4',
        kubeletVersion: 'v1.32.4',
        machineID: `${i.toString(16).padStart(32, '0')}`,
        operatingSystem: 'linux',
        osImage: 'Ubuntu 24.04.1 LTS',
        systemUUID: `${i.toString(16).padStart(8, '0')}-1c2d-4e5f-8a9b-0c1d2e3f4a5b`,
      },
      images: IMAGE_NAMES.map((image, n) => ({
        names: [`${image}@sha256:${hex(i * 31 + n)}`, `${image}:v1.${(n * 7) % 30}.${n % 10}`],
        sizeBytes: 10_000_000 + n * 3_456_789,
      })),
    },
  };
}

function hex(seed: number): string {
  let out = '';
  let x = seed >>> 0 || 1;
  while (out.length < 64) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, 64);
}

/** Small deterministic PRNG so both runs of the bench see the same cluster. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
}

function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}

function toMb(bytes: number): number {
  return bytes / 1_048_576;
}

function printTable(rows: readonly Row[]): void {
  const gcNote =
    typeof (globalThis as { gc?: unknown }).gc === 'function'
      ? ''
      : ' (no --expose-gc: heap deltas are noisy)';
  const lines: [string, (row: Row) => string][] = [
    ['nodes / pools', (row) => `${row.nodes} / ${row.pools}`],
    ['avg node JSON size', (row) => `${(row.avgNodeJsonBytes / 1024).toFixed(1)} KB`],
    ['raw objects heap', (row) => `${row.rawHeapMb.toFixed(1)} MB`],
    ['convert raw → ClusterNode', (row) => `${row.convertMs.toFixed(1)} ms`],
    ['ClusterNode heap delta', (row) => `${row.domainHeapMb.toFixed(1)} MB`],
    ['groupNodesByScaleSet (best)', (row) => `${row.groupMs.toFixed(1)} ms`],
    [`select all pools (best of ${SELECTION_ROUNDS})`, (row) => `${row.selectAllPoolsMs.toFixed(1)} ms`],
    ['  per pool', (row) => `${row.selectPerPoolMs.toFixed(2)} ms`],
    ['naive: selectPrototypeNode × pools', (row) => `${row.naiveAllPoolsMs.toFixed(1)} ms`],
    ['selection heap delta (retained)', (row) => `${row.selectionHeapMb.toFixed(1)} MB`],
    ['peak RSS so far', (row) => `${row.peakRssMb.toFixed(0)} MB`],
  ];
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  const columnWidth = 14;
  console.log(`\nprototype selection benchmark${gcNote}, node ${process.version}`);
  for (const [label, cell] of lines) {
    console.log(label.padEnd(width) + rows.map((row) => cell(row).padStart(columnWidth)).join(''));
  }
  for (const row of rows) {
    console.log(`outcomes at ${row.nodes} nodes: ${row.outcomes}`);
  }
}
