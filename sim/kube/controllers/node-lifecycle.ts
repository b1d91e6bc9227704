/**
 * The node lifecycle controller's part of the control loops: the not-ready, unreachable and
 * unschedulable taints, pod readiness following the node's, pod GC for pods of a deleted node, and the
 * kubelet's cordon events.
 */
import type { KubeObject } from '../../contracts.js';
import { recordEvent } from '../events.js';
import type { Condition, Taint } from '../objects.js';
import {
  isNodeReady,
  isPodReady,
  isTerminating,
  isUnschedulable,
  podPhase,
  specOf,
  statusOf,
  taintsOf,
  timestamp,
} from '../objects.js';
import { peekOf } from '../store.js';
import { scheduleStart } from './kubelet.js';
import { reconcileDaemonSet } from './replica-daemon-sets.js';
import { bindUnscheduledPods } from './scheduler.js';
import { type ControllerState, safeMutate } from './state.js';

const CONTROLLED_TAINT_KEYS = new Set([
  'node.kubernetes.io/unschedulable',
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
]);

function desiredControlledTaints(state: ControllerState, node: KubeObject, existing: Taint[]): Taint[] {
  const ready = statusOf(node).conditions === undefined ? 'Unknown' : (readyStatus(node) ?? 'Unknown');
  const now = timestamp(state.clock.nowMs());
  const keep = (key: string, effect: string): Taint =>
    existing.find((taint) => taint.key === key && taint.effect === effect) ?? {
      key,
      effect,
      ...(effect === 'NoExecute' ? { timeAdded: now } : {}),
    };
  const taints: Taint[] = [];
  if (ready === 'False') {
    taints.push(
      keep('node.kubernetes.io/not-ready', 'NoSchedule'),
      keep('node.kubernetes.io/not-ready', 'NoExecute'),
    );
  } else if (ready !== 'True') {
    taints.push(
      keep('node.kubernetes.io/unreachable', 'NoSchedule'),
      keep('node.kubernetes.io/unreachable', 'NoExecute'),
    );
  }
  if (isUnschedulable(node)) taints.push(keep('node.kubernetes.io/unschedulable', 'NoSchedule'));
  return taints;
}

function readyStatus(node: KubeObject): string | undefined {
  const conditions = statusOf(node).conditions;
  if (!Array.isArray(conditions)) return undefined;
  return (conditions as Condition[]).find((condition) => condition.type === 'Ready')?.status;
}

/** The kubelet reports a cordon or an uncordon it observes as a node event (only while it runs). */
function recordSchedulability(state: ControllerState, node: KubeObject): void {
  const { schedulability } = state;
  const unschedulable = isUnschedulable(node);
  const before = schedulability.get(node.metadata.name);
  schedulability.set(node.metadata.name, unschedulable);
  if (before === undefined || before === unschedulable || !isNodeReady(node)) return;
  const reason = unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable';
  recordEvent(state.store, state.clock, {
    involved: { ...node, apiVersion: 'v1', kind: 'Node' },
    reason,
    message: `Node ${node.metadata.name} status is now: ${reason}`,
    component: 'kubelet',
    host: node.metadata.name,
  });
}

function syncNodeTaints(state: ControllerState, node: KubeObject): void {
  recordSchedulability(state, node);
  const existing = taintsOf(node);
  const others = existing.filter((taint) => !CONTROLLED_TAINT_KEYS.has(taint.key));
  const next = [...others, ...desiredControlledTaints(state, node, existing)];
  if (JSON.stringify(next) === JSON.stringify(existing)) return;
  safeMutate(state, 'nodes', undefined, node.metadata.name, (target) => {
    const spec = { ...specOf(target) };
    if (next.length === 0) delete spec.taints;
    else spec.taints = next;
    target.spec = spec;
  });
}

function setPodReady(state: ControllerState, pod: KubeObject, ready: boolean): void {
  const status = ready ? 'True' : 'False';
  safeMutate(state, 'pods', pod.metadata.namespace, pod.metadata.name, (target) => {
    const conditions = Array.isArray(statusOf(target).conditions)
      ? (statusOf(target).conditions as Condition[])
      : [];
    target.status = {
      ...statusOf(target),
      conditions: conditions.map((condition) =>
        condition.type === 'Ready' || condition.type === 'ContainersReady'
          ? { ...condition, status, lastTransitionTime: timestamp(state.clock.nowMs()) }
          : condition,
      ),
    };
  });
}

/** Re-evaluates only the nodes that changed since the last pass, and the pods bound to them. */
export function syncNodes(state: ControllerState): void {
  const { store, changedNodes, podsByNode } = state;
  const names = [...changedNodes];
  changedNodes.clear();
  const membership = state.nodeMembershipChanged;
  state.nodeMembershipChanged = false;
  for (const nodeName of names) {
    // The stored objects (peekOf, no copy): a pass over 20 000 new nodes must not copy each one.
    const node = peekOf(store, 'nodes', undefined, nodeName);
    if (node) syncNodeTaints(state, node);
    for (const key of podsByNode.get(nodeName) ?? []) {
      const [namespace = '', name = ''] = key.split('/');
      const pod = peekOf(store, 'pods', namespace, name);
      if (pod) syncPodWithNode(state, pod, node);
    }
  }
  if (state.unboundPods.size > 0) bindUnscheduledPods(state);
  if (membership) {
    for (const daemonSet of store.list('daemonsets')) {
      reconcileDaemonSet(state, daemonSet.metadata.namespace ?? '', daemonSet.metadata.name);
    }
  }
}

function syncPodWithNode(state: ControllerState, pod: KubeObject, node: KubeObject | undefined): void {
  const { store, clock } = state;
  if (!node) {
    // Pod GC: pods bound to a node that no longer exists are force-deleted.
    store.remove('pods', pod.metadata.namespace, pod.metadata.name);
    return;
  }
  const nodeReady = isNodeReady(node);
  if (isTerminating(pod)) {
    const due = Date.parse(pod.metadata.deletionTimestamp ?? '') <= clock.nowMs();
    if (nodeReady && due) store.remove('pods', pod.metadata.namespace, pod.metadata.name);
    return;
  }
  const phase = podPhase(pod);
  if (phase === 'Pending' && nodeReady) scheduleStart(state, pod);
  if (phase === 'Running' && isPodReady(pod) !== nodeReady) setPodReady(state, pod, nodeReady);
}
