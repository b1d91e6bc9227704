/**
 * Node objects as a kubelet on an Azure VMSS instance registers them (labels, providerID, conditions,
 * nodeInfo, capacity) and the condition/taint changes the node lifecycle controller makes.
 */
import { createHash } from 'node:crypto';

import type { InstanceInfo } from '../arm/compute-state.js';
import type { KubeObject } from '../contracts.js';
import { timestamp } from '../kube/objects.js';
import type { Taint } from './scenario.js';

export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
export const KURED_REBOOT_IN_PROGRESS = 'weave.works/kured-reboot-in-progress';
export const KURED_MOST_RECENT_REBOOT_NEEDED = 'weave.works/kured-most-recent-reboot-needed';
export const KURED_LOCK = 'weave.works/kured-node-lock';
export const SCALE_DOWN_DISABLED = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';

/** Kubernetes condition types a kubelet reports; all but Ready are "False" when healthy. */
const PRESSURE_CONDITIONS: readonly { type: string; reason: string; message: string }[] = [
  {
    type: 'MemoryPressure',
    reason: 'KubeletHasSufficientMemory',
    message: 'kubelet has sufficient memory available',
  },
  { type: 'DiskPressure', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
];

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastHeartbeatTime: string;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface NodeTaint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The kubelet registers with the lowercased computer name (cloud-provider-azure maps it back). */
export function nodeNameOf(instance: InstanceInfo): string {
  return instance.computerName.toLowerCase();
}

/**
 * `spec.providerID` exactly as cloud-provider-azure writes it: `azure://` + the resource id with the
 * resource group lowercased (`ConvertResourceGroupNameToLower`).
 */
export function providerIdOf(instance: InstanceInfo): string {
  const id = instance.id.replace(/\/resourceGroups\/([^/]+)\//i, (_match, group: string) => {
    return `/resourceGroups/${group.toLowerCase()}/`;
  });
  return `azure://${id}`;
}

/** vCPUs and memory of an Azure size such as `Standard_D4s_v5`, from the family and the number. */
export function sizeCapacity(vmSize: string): { cpu: number; memoryGiB: number } {
  const match = /^(?:Standard|Basic)_([A-Z]+)(\d+)/i.exec(vmSize);
  const family = (match?.[1] ?? 'D').toUpperCase();
  const cpu = Number(match?.[2] ?? 2) || 2;
  const perCpu: Record<string, number> = {
    A: 2,
    B: 4,
    D: 4,
    DC: 4,
    E: 8,
    EC: 8,
    F: 2,
    FX: 21,
    L: 8,
    M: 28,
    NC: 7,
    ND: 14,
  };
  return { cpu, memoryGiB: cpu * (perCpu[family] ?? 4) };
}

export interface NodeBlueprint {
  instance: InstanceInfo;
  clusterName: string;
  resourceGroup: string;
  poolName: string;
  role: 'agent' | 'control-plane';
  osType: 'Linux' | 'Windows';
  vmSize: string;
  kubernetesVersion: string;
  /** Position of the pool in the cluster, to give every pool its own address block. */
  poolIndex: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: readonly Taint[];
  unschedulable: boolean;
  /** Ready since (epoch ms), or undefined when the kubelet is not up. */
  readySinceMs: number | undefined;
  /** Extra conditions from the scenario (a Ready entry replaces the computed one). */
  conditions: readonly NodeCondition[];
  nowMs: number;
  bootCount: number;
  /** /etc/machine-id of the node's disk (reported as nodeInfo.machineID). */
  machineId?: string;
  /** Container images on the node's disk (reported in status.images). */
  images?: readonly string[];
  /** How the node got its kubelet credentials: decides the marks its distribution writes on it. */
  flavour?: 'aks-engine' | 'kubeadm' | 'k3s' | 'rke2';
  /** A Cluster API machine (its scale set carries CAPZ's owner tag): kubeadm nodes get its annotations too. */
  clusterApiMachine?: boolean;
}

/**
 * Annotations each distribution writes on its nodes (what the product reads the flavour from): k3s and
 * rke2 their node args and addresses, kubeadm its CRI socket and Cluster API its machine (on a scale set
 * CAPZ owns); aks-engine
 * writes none beyond the labels every node here carries (`kubernetes.azure.com/role`, `…/cluster`).
 */
function flavourAnnotations(
  flavour: NodeBlueprint['flavour'],
  name: string,
  clusterName: string,
  address: string,
  clusterApiMachine: boolean,
): Record<string, string> {
  switch (flavour) {
    case undefined:
    case 'aks-engine':
      return {};
    case 'kubeadm':
      // A self-assembled kubeadm cluster has kubeadm's mark alone; Cluster API adds its machine's.
      return {
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
        ...(clusterApiMachine
          ? { 'cluster.x-k8s.io/cluster-name': clusterName, 'cluster.x-k8s.io/machine': `${name}-machine` }
          : {}),
      };
    case 'k3s':
    case 'rke2':
      return {
        [`${flavour}.io/node-args`]: JSON.stringify(['agent', '--node-name', name]),
        [`${flavour}.io/hostname`]: name,
        [`${flavour}.io/internal-ip`]: address,
      };
  }
}

function instanceNumber(instance: InstanceInfo): number {
  const numeric = Number(instance.instanceId);
  return Number.isInteger(numeric)
    ? numeric
    : Number.parseInt(sha(instance.instanceId).slice(0, 4), 16) % 250;
}

export function bootIdOf(vmId: string, bootCount: number): string {
  const hex = sha(`boot:${vmId}:${bootCount}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function readyCondition(
  status: 'True' | 'False' | 'Unknown',
  sinceMs: number,
  heartbeatMs: number,
): NodeCondition {
  const texts = {
    True: { reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    False: { reason: 'KubeletNotReady', message: 'container runtime network not ready: NetworkReady=false' },
    Unknown: { reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' },
  }[status];
  return {
    type: 'Ready',
    status,
    lastHeartbeatTime: timestamp(heartbeatMs),
    lastTransitionTime: timestamp(sinceMs),
    ...texts,
  };
}

export function healthyConditions(readySinceMs: number, heartbeatMs: number): NodeCondition[] {
  return [
    ...PRESSURE_CONDITIONS.map(({ type, reason, message }) => ({
      type,
      status: 'False' as const,
      lastHeartbeatTime: timestamp(heartbeatMs),
      lastTransitionTime: timestamp(readySinceMs),
      reason,
      message,
    })),
    readyCondition('True', readySinceMs, heartbeatMs),
  ];
}

/** What the node lifecycle controller writes when the kubelet stops posting status. */
export function unknownConditions(existing: readonly NodeCondition[], nowMs: number): NodeCondition[] {
  return existing.map((condition) =>
    condition.status === 'Unknown'
      ? condition
      : {
          ...condition,
          status: 'Unknown',
          lastTransitionTime: timestamp(nowMs),
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
        },
  );
}

export function buildNode(blueprint: NodeBlueprint): KubeObject {
  const { instance, nowMs } = blueprint;
  const name = nodeNameOf(instance);
  const windows = blueprint.osType === 'Windows';
  const zone = instance.zone ? `${instance.location}-${instance.zone}` : String(instanceNumber(instance) % 3);
  const { cpu, memoryGiB } = sizeCapacity(blueprint.vmSize);
  const controlPlane = blueprint.role === 'control-plane';
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/instance-type': blueprint.vmSize,
    'beta.kubernetes.io/os': windows ? 'windows' : 'linux',
    'failure-domain.beta.kubernetes.io/region': instance.location,
    'failure-domain.beta.kubernetes.io/zone': zone,
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': windows ? 'windows' : 'linux',
    'kubernetes.io/role': controlPlane ? 'master' : 'agent',
    'node.kubernetes.io/instance-type': blueprint.vmSize,
    'topology.kubernetes.io/region': instance.location,
    'topology.kubernetes.io/zone': zone,
    agentpool: blueprint.poolName,
    'kubernetes.azure.com/cluster': blueprint.resourceGroup,
    'kubernetes.azure.com/role': controlPlane ? 'master' : 'agent',
    storageprofile: instance.ephemeralOsDisk ? 'ephemeral' : 'managed',
    storagetier: 'Premium_LRS',
    ...(controlPlane
      ? { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/master': '' }
      : { 'node-role.kubernetes.io/agent': '' }),
    ...blueprint.labels,
  };
  const heartbeatMs = nowMs - (Number.parseInt(sha(`heartbeat:${name}`).slice(0, 6), 16) % 240) * 1000;
  let conditions: NodeCondition[];
  if (blueprint.readySinceMs === undefined) {
    conditions = unknownConditions(healthyConditions(nowMs, heartbeatMs), nowMs);
  } else {
    conditions = healthyConditions(blueprint.readySinceMs, Math.max(heartbeatMs, blueprint.readySinceMs));
  }
  for (const extra of blueprint.conditions) {
    const index = conditions.findIndex((condition) => condition.type === extra.type);
    if (index >= 0) conditions[index] = extra;
    else conditions.push(extra);
  }
  const taints: NodeTaint[] = blueprint.taints.map((taint) => ({ ...taint }));
  if (blueprint.readySinceMs === undefined) {
    taints.push(
      { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: timestamp(nowMs) },
      { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: timestamp(nowMs) },
    );
  }
  if (blueprint.unschedulable) {
    taints.push({
      key: 'node.kubernetes.io/unschedulable',
      effect: 'NoSchedule',
      timeAdded: timestamp(nowMs),
    });
  }
  const number = instanceNumber(instance);
  const address = `10.${240 + (blueprint.poolIndex >> 8)}.${blueprint.poolIndex & 255}.${(number % 250) + 4}`;
  const spec: Record<string, unknown> = {
    providerID: providerIdOf(instance),
    podCIDR: `10.244.${(blueprint.poolIndex * 16 + number) % 256}.0/24`,
    podCIDRs: [`10.244.${(blueprint.poolIndex * 16 + number) % 256}.0/24`],
  };
  if (taints.length > 0) spec.taints = taints;
  if (blueprint.unschedulable) spec.unschedulable = true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels,
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        ...flavourAnnotations(
          blueprint.flavour,
          name,
          blueprint.clusterName,
          address,
          blueprint.clusterApiMachine === true,
        ),
        ...blueprint.annotations,
      },
    },
    spec,
    status: {
      capacity: {
        cpu: String(cpu),
        'ephemeral-storage': '129886128Ki',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: `${memoryGiB * 1024 * 1024}Ki`,
        pods: windows ? '30' : '110',
      },
      allocatable: {
        cpu: `${cpu * 1000 - 140}m`,
        'ephemeral-storage': '119703055367',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: `${memoryGiB * 1024 * 1024 - 1_800_000}Ki`,
        pods: windows ? '30' : '110',
      },
      conditions,
      addresses: [
        { type: 'InternalIP', address },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      ...(blueprint.images === undefined ? {} : { images: imageList(blueprint.images) }),
      nodeInfo: {
        machineID: blueprint.machineId ?? sha(`machine:${instance.vmId}`).slice(0, 32),
        systemUUID: instance.vmId,
        bootID: bootIdOf(instance.vmId, blueprint.bootCount),
        kernelVersion: windows ? '10.0.20348.2849' : '5.15.0-1073-azure',
        osImage: windows ? 'Windows Server 2022 Datacenter' : 'Ubuntu 22.04.5 LTS',
        containerRuntimeVersion: windows ? 'containerd://1.7.20+azure' : 'containerd://1.7.23-1',
        kubeletVersion: blueprint.kubernetesVersion,
        kubeProxyVersion: blueprint.kubernetesVersion,
        operatingSystem: windows ? 'windows' : 'linux',
        architecture: 'amd64',
      },
    },
  };
}

/** `status.images` as a kubelet reports it (names and size). */
export function imageList(images: readonly string[]): { names: string[]; sizeBytes: number }[] {
  return images.map((image) => ({ names: [image], sizeBytes: 52_428_800 }));
}

/** The image names a node reports holding. */
export function nodeImages(node: KubeObject): string[] {
  const images = (node.status as { images?: unknown } | undefined)?.images;
  return Array.isArray(images)
    ? (images as { names?: string[] }[]).flatMap((image) => image.names ?? [])
    : [];
}
