/**
 * Server-side `meta.k8s.io/v1` Table rendering, what `kubectl get` asks for, with the columns the real
 * API server prints for nodes, pods, PodDisruptionBudgets, Deployments, ReplicaSets and DaemonSets
 * (STATUS `Ready,SchedulingDisabled` / `NotReady`, READY `1/1`, DESIRED/CURRENT…, AGE).
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

/**
 * kubectl's node STATUS: `Ready` when the Ready condition is True, `NotReady` for False and Unknown
 * alike (a node whose kubelet stopped posting), `Unknown` only without a Ready condition.
 */
function nodeStatus(node: KubeObject): string {
  const ready = conditionStatus(node, 'Ready');
  const parts = [ready === 'True' ? 'Ready' : ready === undefined ? 'Unknown' : 'NotReady'];
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

const CREATED_COLUMN = column(
  'Age',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
);

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

interface TemplateContainer {
  name?: string;
  image?: string;
}

function templateContainers(object: KubeObject): TemplateContainer[] {
  const template = specOf(object).template as { spec?: { containers?: unknown } } | undefined;
  const containers = template?.spec?.containers;
  return Array.isArray(containers) ? (containers as TemplateContainer[]) : [];
}

function selectorText(object: KubeObject): string {
  const selector = specOf(object).selector as
    | {
        matchLabels?: Record<string, string>;
        matchExpressions?: { key: string; operator: string; values?: string[] }[];
      }
    | undefined;
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const expression of selector?.matchExpressions ?? []) {
    const values = (expression.values ?? []).join(',');
    parts.push(
      expression.operator === 'Exists'
        ? expression.key
        : expression.operator === 'DoesNotExist'
          ? `!${expression.key}`
          : `${expression.key} ${expression.operator.toLowerCase()} (${values})`,
    );
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
}

/** CONTAINERS, IMAGES, SELECTOR: the wide columns the apps printers share. */
const WORKLOAD_WIDE_COLUMNS = [
  column('Containers', 'Names of each container in the template.', 1),
  column('Images', 'Images referenced by each container in the template.', 1),
  column(
    'Selector',
    'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
    1,
  ),
];

function workloadWideCells(object: KubeObject): unknown[] {
  const containers = templateContainers(object);
  return [
    containers.map((container) => container.name ?? '').join(','),
    containers.map((container) => container.image ?? '').join(','),
    selectorText(object),
  ];
}

const DEPLOYMENT_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column('Ready', 'Number of the pod with ready state'),
    column(
      'Up-to-date',
      'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      0,
      'integer',
    ),
    column(
      'Available',
      'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      0,
      'integer',
    ),
    CREATED_COLUMN,
    ...WORKLOAD_WIDE_COLUMNS,
  ],
  cells: (deployment, nowMs) => [
    deployment.metadata.name,
    `${count(statusOf(deployment).readyReplicas)}/${typeof specOf(deployment).replicas === 'number' ? String(specOf(deployment).replicas) : '1'}`,
    count(statusOf(deployment).updatedReplicas),
    count(statusOf(deployment).availableReplicas),
    age(deployment, nowMs),
    ...workloadWideCells(deployment),
  ],
};

const REPLICA_SET_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column('Desired', 'Replicas is the number of desired replicas.', 0, 'integer'),
    column('Current', 'Replicas is the most recently observed number of replicas.', 0, 'integer'),
    column('Ready', 'The number of ready replicas for this replica set.', 0, 'integer'),
    CREATED_COLUMN,
    ...WORKLOAD_WIDE_COLUMNS,
  ],
  cells: (replicaSet, nowMs) => [
    replicaSet.metadata.name,
    typeof specOf(replicaSet).replicas === 'number' ? specOf(replicaSet).replicas : 1,
    count(statusOf(replicaSet).replicas),
    count(statusOf(replicaSet).readyReplicas),
    age(replicaSet, nowMs),
    ...workloadWideCells(replicaSet),
  ],
};

function nodeSelectorText(daemonSet: KubeObject): string {
  const template = specOf(daemonSet).template as
    { spec?: { nodeSelector?: Record<string, string> } } | undefined;
  const entries = Object.entries(template?.spec?.nodeSelector ?? {});
  return entries.length === 0 ? '<none>' : entries.map(([key, value]) => `${key}=${value}`).join(',');
}

const DAEMON_SET_TABLE: TableShape = {
  columns: [
    column('Name', 'Name must be unique within a namespace.', 0, 'string', 'name'),
    column('Desired', 'The total number of nodes that should be running the daemon pod.', 0, 'integer'),
    column(
      'Current',
      'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.',
      0,
      'integer',
    ),
    column(
      'Ready',
      'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.',
      0,
      'integer',
    ),
    column('Up-to-date', 'The total number of nodes that are running updated daemon pod', 0, 'integer'),
    column(
      'Available',
      'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
      0,
      'integer',
    ),
    column(
      'Node Selector',
      "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.",
    ),
    CREATED_COLUMN,
    ...WORKLOAD_WIDE_COLUMNS,
  ],
  cells: (daemonSet, nowMs) => [
    daemonSet.metadata.name,
    count(statusOf(daemonSet).desiredNumberScheduled),
    count(statusOf(daemonSet).currentNumberScheduled),
    count(statusOf(daemonSet).numberReady),
    count(statusOf(daemonSet).updatedNumberScheduled),
    count(statusOf(daemonSet).numberAvailable),
    nodeSelectorText(daemonSet),
    age(daemonSet, nowMs),
    ...workloadWideCells(daemonSet),
  ],
};

function sinceText(value: unknown, nowMs: number): string {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? '<unknown>' : humanDuration(nowMs - at);
}

/** The event printer's columns (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; the rest with -o wide). */
const EVENT_TABLE: TableShape = {
  columns: [
    column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
    column('Type', 'Type of this event (Normal, Warning), new types could be added in the future.'),
    column(
      'Reason',
      'This should be a short, machine understandable string that gives the reason for this event being generated.',
    ),
    column('Object', 'The object that this event is about.'),
    column('Subobject', 'The subobject that this event is about.', 1),
    column(
      'Source',
      'The component reporting this event. Should be a short machine understandable string.',
      1,
    ),
    column('Message', 'A human-readable description of the status of this operation.'),
    column('First Seen', 'The time at which the event was first recorded.', 1),
    column('Count', 'The number of times this event has occurred.', 1),
    column('Name', 'Name must be unique within a namespace.', 1, 'string', 'name'),
  ],
  cells: (event, nowMs) => {
    const involved = (event.involvedObject ?? {}) as { kind?: string; name?: string; fieldPath?: string };
    const source = (event.source ?? {}) as { component?: string; host?: string };
    // Events from the events.k8s.io recorder (the scheduler's) have no lastTimestamp or source: the
    // printer falls back to eventTime and reportingController (kubernetes/kubernetes
    // `pkg/printers/internalversion/printers.go`, printEvent and formatEventSource).
    const firstNonEmpty = (...values: unknown[]): string | undefined =>
      values.find((value): value is string => typeof value === 'string' && value !== '');
    const component = firstNonEmpty(source.component, event.reportingComponent);
    const host = firstNonEmpty(source.host, event.reportingInstance);
    return [
      sinceText(event.lastTimestamp ?? event.eventTime, nowMs),
      typeof event.type === 'string' ? event.type : '',
      typeof event.reason === 'string' ? event.reason : '',
      `${(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`,
      involved.fieldPath ?? '',
      [component, host].filter((part) => part !== undefined).join(', '),
      typeof event.message === 'string' ? event.message : '',
      sinceText(event.firstTimestamp ?? event.eventTime, nowMs),
      typeof event.count === 'number' ? event.count : 1,
      event.metadata.name,
    ];
  },
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
  deployments: DEPLOYMENT_TABLE,
  replicasets: REPLICA_SET_TABLE,
  daemonsets: DAEMON_SET_TABLE,
  events: EVENT_TABLE,
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
  withColumns = true,
): object {
  const shape = TABLES[resource] ?? DEFAULT_TABLE;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    // A watch sends the column definitions with its first event only, like the API server.
    columnDefinitions: withColumns ? shape.columns : [],
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
