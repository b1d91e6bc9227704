/**
 * Typed readers for the parts of Node and Pod objects the simulator reasons about (readiness, owners,
 * scheduling constraints), so controllers and the eviction logic share one interpretation.
 */
import type { KubeObject } from '../contracts.js';

export interface Condition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
  lastProbeTime?: string | null;
  reason?: string;
  message?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

export function specOf(object: KubeObject): Record<string, unknown> {
  return record(object.spec);
}

export function statusOf(object: KubeObject): Record<string, unknown> {
  return record(object.status);
}

export function conditionsOf(object: KubeObject): Condition[] {
  const conditions = statusOf(object).conditions;
  return Array.isArray(conditions) ? (conditions as Condition[]) : [];
}

export function conditionStatus(object: KubeObject, type: string): string | undefined {
  return conditionsOf(object).find((condition) => condition.type === type)?.status;
}

export function isNodeReady(node: KubeObject): boolean {
  return conditionStatus(node, 'Ready') === 'True';
}

export function isPodReady(pod: KubeObject): boolean {
  return conditionStatus(pod, 'Ready') === 'True';
}

export function podPhase(pod: KubeObject): string {
  const phase = statusOf(pod).phase;
  return typeof phase === 'string' ? phase : 'Pending';
}

export function nodeNameOf(pod: KubeObject): string | undefined {
  const nodeName = specOf(pod).nodeName;
  return typeof nodeName === 'string' && nodeName !== '' ? nodeName : undefined;
}

export function isTerminating(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined;
}

export function isUnschedulable(node: KubeObject): boolean {
  return specOf(node).unschedulable === true;
}

export function taintsOf(node: KubeObject): Taint[] {
  const taints = specOf(node).taints;
  return Array.isArray(taints) ? (taints as Taint[]) : [];
}

export function tolerationsOf(pod: KubeObject): Toleration[] {
  const tolerations = specOf(pod).tolerations;
  return Array.isArray(tolerations) ? (tolerations as Toleration[]) : [];
}

export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((owner) => owner.controller === true);
}

export function isMirrorPod(pod: KubeObject): boolean {
  return object(pod.metadata.annotations)['kubernetes.io/config.mirror'] !== undefined;
}

function object(value: Record<string, string> | undefined): Record<string, string> {
  return value ?? {};
}

export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.operator === 'Exists') return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

/** The scheduler's filters we model: node Ready, nodeSelector, and NoSchedule/NoExecute taints. */
export function podFitsNode(pod: KubeObject, node: KubeObject): boolean {
  if (!isNodeReady(node) || isTerminating(node)) return false;
  const selector = record(specOf(pod).nodeSelector);
  const labels = node.metadata.labels ?? {};
  for (const [key, value] of Object.entries(selector)) {
    if (labels[key] !== value) return false;
  }
  const tolerations = tolerationsOf(pod);
  const taints = [...taintsOf(node)];
  // The scheduler treats spec.unschedulable as this taint even before the controller adds it.
  if (isUnschedulable(node)) taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
  return taints
    .filter((taint) => taint.effect === 'NoSchedule' || taint.effect === 'NoExecute')
    .every((taint) => tolerations.some((toleration) => tolerates(toleration, taint)));
}

/** RFC 3339 with whole seconds, the form Kubernetes timestamps take on the wire. */
export function timestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
