/**
 * Pure converters from client-node API objects (V1Node, V1Pod) to the domain's ClusterNode and PodOnNode,
 * keeping only the fields the product decides on.
 */
import type { V1Node, V1NodeCondition, V1Pod, V1Taint } from '@kubernetes/client-node';

import type { ClusterNode, NodeCondition, NodeTaint } from '../../domain/cluster-node.js';
import type { PodOnNode } from '../../domain/drain.js';
import { TerminalError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { KARPENTER_DO_NOT_DISRUPT_ANNOTATION } from '../../domain/retirement.js';
import type { PodPhase } from '../../ports/kubernetes/index.js';

/** Annotation the kubelet puts on the API copy ("mirror") of a static pod. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

const POD_PHASES: ReadonlySet<string> = new Set<PodPhase>([
  'Pending',
  'Running',
  'Succeeded',
  'Failed',
  'Unknown',
]);
const TAINT_EFFECTS: ReadonlySet<string> = new Set<NodeTaint['effect']>([
  'NoSchedule',
  'PreferNoSchedule',
  'NoExecute',
]);
const CONDITION_STATUSES: ReadonlySet<string> = new Set<NodeCondition['status']>([
  'True',
  'False',
  'Unknown',
]);

/**
 * client-node revives RFC 3339 timestamps into Dates. Kubernetes `metav1.Time` has second precision
 * and is always sent in UTC, so printing without zero milliseconds gives back what the server sent.
 */
export function toRfc3339(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (Number.isNaN(value.getTime())) return undefined;
  return value.toISOString().replace('.000Z', 'Z');
}

/** An unrecognised phase (a newer server, a bad write) is `Unknown`, never a guess. */
export function toPodPhase(phase: string | undefined): PodPhase {
  return phase !== undefined && POD_PHASES.has(phase) ? (phase as PodPhase) : 'Unknown';
}

function toCondition(condition: V1NodeCondition): NodeCondition {
  const status = CONDITION_STATUSES.has(condition.status)
    ? (condition.status as NodeCondition['status'])
    : 'Unknown';
  const lastTransitionTime = toRfc3339(condition.lastTransitionTime);
  const lastHeartbeatTime = toRfc3339(condition.lastHeartbeatTime);
  return {
    type: condition.type,
    status,
    ...definedOnly({ lastTransitionTime, lastHeartbeatTime, reason: condition.reason }),
  };
}

function toTaints(taints: readonly V1Taint[] | undefined): NodeTaint[] {
  const result: NodeTaint[] = [];
  // API validation only admits the three effects; anything else cannot be reasoned about, so it is dropped.
  for (const taint of taints ?? []) {
    if (!TAINT_EFFECTS.has(taint.effect)) continue;
    result.push({
      key: taint.key,
      effect: taint.effect as NodeTaint['effect'],
      ...(taint.value === undefined || taint.value === '' ? {} : { value: taint.value }),
    });
  }
  return result;
}

function requireName(name: string | undefined, what: string): string {
  if (name === undefined || name === '') {
    throw new TerminalError(
      'MalformedKubeObject',
      `converting ${what}: the API server sent an object without metadata.name`,
    );
  }
  return name;
}

export function toClusterNode(node: V1Node): ClusterNode {
  const metadata = node.metadata;
  const createdAt = toRfc3339(metadata?.creationTimestamp);
  const providerId = node.spec?.providerID;
  return {
    name: requireName(metadata?.name, 'node'),
    ...(providerId === undefined || providerId === '' ? {} : { providerId }),
    labels: { ...metadata?.labels },
    annotations: { ...metadata?.annotations },
    unschedulable: node.spec?.unschedulable === true,
    taints: toTaints(node.spec?.taints),
    conditions: (node.status?.conditions ?? []).map(toCondition),
    ...definedOnly({ createdAt }),
  };
}

export function toPodOnNode(pod: V1Pod): PodOnNode {
  const metadata = pod.metadata;
  const namespace = requireName(metadata?.namespace, 'pod namespace');
  const name = requireName(metadata?.name, `pod in namespace ${namespace}`);
  const owner = metadata?.ownerReferences?.find((reference) => reference.controller === true);
  return {
    namespace,
    name,
    uid: metadata?.uid ?? '',
    phase: toPodPhase(pod.status?.phase),
    ...(owner === undefined
      ? {}
      : { controller: { kind: owner.kind, name: owner.name, apiVersion: owner.apiVersion } }),
    mirror: metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined,
    usesEmptyDir: (pod.spec?.volumes ?? []).some(
      (volume) => volume.emptyDir !== undefined && volume.emptyDir !== null,
    ),
    terminating: metadata?.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
    ready: (pod.status?.conditions ?? []).some(
      (condition) => condition.type === 'Ready' && condition.status === 'True',
    ),
    ...(metadata?.annotations?.[KARPENTER_DO_NOT_DISRUPT_ANNOTATION] === 'true'
      ? { doNotDisrupt: true }
      : {}),
  };
}

/** A pod with the node it is bound to (unset while it is unscheduled). */
export function toPodWithNode(pod: V1Pod): PodOnNode & { readonly nodeName?: string } {
  const nodeName = pod.spec?.nodeName;
  return { ...toPodOnNode(pod), ...(nodeName === undefined || nodeName === '' ? {} : { nodeName }) };
}
