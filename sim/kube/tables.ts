/**
 * Server-side `meta.k8s.io/v1` Table rendering, what `kubectl get` asks for, with the columns the real
 * API server prints for nodes and pods (STATUS `Ready,SchedulingDisabled`, READY `1/1`, AGE …).
 */
import type { KubeObject } from '../contracts.js';
import {
  conditionStatus,
  isTerminating,
  isUnschedulable,
  nodeNameOf,
  podPhase,
  specOf,
  statusOf,
} from './objects.js';

interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function column(
  name: string,
  description: string,
  priority = 0,
  type = 'string',
  format = '',
): ColumnDefinition {
  return { name, type, format, description, priority };
}

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const rest = seconds % 60;
    return rest === 0 ? `${minutes}m` : `${minutes}m${rest}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const rest = minutes % 60;
    return rest === 0 ? `${hours}h` : `${hours}h${rest}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const rest = hours % 24;
    return rest === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${rest}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

function age(object: KubeObject, nowMs: number): string {
  const created = Date.parse(object.metadata.creationTimestamp ?? '');
  return Number.isNaN(created) ? '<unknown>' : humanDuration(nowMs - created);
}

function nodeStatus(node: KubeObject): string {
  const ready = conditionStatus(node, 'Ready');
  const parts = [ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown'];
  if (isUnschedulable(node)) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/')) roles.add(key.slice('node-role.kubernetes.io/'.length));
    else if (key === 'kubernetes.io/role' && value !== '') roles.add(value);
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

function nodeInfo(node: KubeObject, field: string): string {
  const info = statusOf(node).nodeInfo as Record<string, unknown> | undefined;
  const value = info?.[field];
  return typeof value === 'string' && value !== '' ? value : '<unknown>';
}

function nodeAddress(node: KubeObject, type: string): string {
  const addresses = statusOf(node).addresses;
  const found = Array.isArray(addresses)
    ? (addresses as { type?: string; address?: string }[]).find((entry) => entry.type === type)
    : undefined;
  return found?.address ?? '<none>';
}

interface ContainerStatus {
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string }; terminated?: { reason?: string } };
}

function podCells(pod: KubeObject, nowMs: number): unknown[] {
  const containers = Array.isArray(specOf(pod).containers) ? (specOf(pod).containers as unknown[]) : [];
  const statuses = Array.isArray(statusOf(pod).containerStatuses)
    ? (statusOf(pod).containerStatuses as ContainerStatus[])
    : [];
  const ready = statuses.filter((status) => status.ready === true).length;
  const restarts = statuses.reduce((sum, status) => sum + (status.restartCount ?? 0), 0);
  let reason = typeof statusOf(pod).reason === 'string' ? String(statusOf(pod).reason) : podPhase(pod);
  for (const status of statuses) {
    const waiting = status.state?.waiting?.reason ?? status.state?.terminated?.reason;
    if (waiting) reason = waiting;
  }
  if (isTerminating(pod)) reason = statusOf(pod).reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  const podIP = typeof statusOf(pod).podIP === 'string' ? String(statusOf(pod).podIP) : '<none>';
  return [
    pod.metadata.name,
    `${ready}/${containers.length}`,
    reason,
    restarts,
    age(pod, nowMs),
    podIP,
    nodeNameOf(pod) ?? '<none>',
    '<none>',
    '<none>',
  ];
}

interface TableShape {
  columns: ColumnDefinition[];
  cells(object: KubeObject, nowMs: number): unknown[];
}

const NODE_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column('Status', 'The status of the node'),
    column('Roles', 'The roles of the node'),
    column(
      'Age',
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    ),
    column('Version', 'Kubelet Version reported by the node.'),
    column(
      'Internal-IP',
      'List of addresses reachable to the node. Queried from cloud provider, if available.',
      1,
    ),
    column(
      'External-IP',
      'List of addresses reachable to the node. Queried from cloud provider, if available.',
      1,
    ),
    column(
      'OS-Image',
      'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
      1,
    ),
    column(
      'Kernel-Version',
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      1,
    ),
    column(
      'Container-Runtime',
      'ContainerRuntime Version reported by the node through runtime remote API.',
      1,
    ),
  ],
  cells: (node, nowMs) => [
    node.metadata.name,
    nodeStatus(node),
    nodeRoles(node),
    age(node, nowMs),
    nodeInfo(node, 'kubeletVersion'),
    nodeAddress(node, 'InternalIP'),
    nodeAddress(node, 'ExternalIP'),
    nodeInfo(node, 'osImage'),
    nodeInfo(node, 'kernelVersion'),
    nodeInfo(node, 'containerRuntimeVersion'),
  ],
};

const POD_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'The number of times the containers in this pod have been restarted.', 0, 'string'),
    column(
      'Age',
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    ),
    column(
      'IP',
      'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
      1,
    ),
    column('Node', 'NodeName is a request to schedule this pod onto a specific node.', 1),
    column('Nominated Node', 'nominatedNodeName is set when this pod preempts other pods on the node.', 1),
    column('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', 1),
  ],
  cells: podCells,
};

const PDB_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column('Min Available', 'The minimum number of pods that must be available.'),
    column('Max Unavailable', 'The maximum number of pods that may be unavailable.'),
    column(
      'Allowed Disruptions',
      'Calculated number of pods that may be disrupted at this time.',
      0,
      'integer',
    ),
    column(
      'Age',
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    ),
  ],
  cells: (pdb, nowMs) => [
    pdb.metadata.name,
    specOf(pdb).minAvailable === undefined ? 'N/A' : String(specOf(pdb).minAvailable),
    specOf(pdb).maxUnavailable === undefined ? 'N/A' : String(specOf(pdb).maxUnavailable),
    Number(statusOf(pdb).disruptionsAllowed ?? 0),
    age(pdb, nowMs),
  ],
};

const DEFAULT_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column(
      'Age',
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    ),
  ],
  cells: (object, nowMs) => [object.metadata.name, age(object, nowMs)],
};

const TABLES: Readonly<Record<string, TableShape>> = {
  nodes: NODE_TABLE,
  pods: POD_TABLE,
  poddisruptionbudgets: PDB_TABLE,
};

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

export function renderTable(
  resource: string,
  objects: KubeObject[],
  listMeta: Record<string, unknown>,
  nowMs: number,
  include: IncludeObject,
): object {
  const shape = TABLES[resource] ?? DEFAULT_TABLE;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: shape.columns,
    rows: objects.map((object) => {
      const row = rowObject(object, include);
      return { cells: shape.cells(object, nowMs), ...(row === undefined ? {} : { object: row }) };
    }),
  };
}

/** True when the client asked for a Table (kubectl get does, client libraries do not). */
export function wantsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept
    .split(',')
    .some((part) => /;\s*as=Table/.test(part) && /g=meta\.k8s\.io/.test(part) && /v=v1(beta1)?\b/.test(part));
}
