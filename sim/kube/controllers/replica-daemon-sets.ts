/**
 * The ReplicaSet and DaemonSet controllers: stamp pods from the template until the count is right. A
 * new pod is bound at once (the scheduler's decision made here, `chooseNode`; a DaemonSet's pod goes to
 * its node), so each creation records the controller's `SuccessfulCreate` and the scheduler's
 * `Scheduled` (events.ts), the two events a real cluster shows for it.
 */
import type { KubeObject } from '../../contracts.js';
import { recordScheduled, recordSuccessfulCreate } from '../events.js';
import {
  controllerOf,
  isPodReady,
  isTerminating,
  nodeNameOf,
  podPhase,
  specOf,
  statusOf,
} from '../objects.js';
import type { LabelSelectorObject } from '../selectors.js';
import { matchesSelector } from '../selectors.js';
import { viewOf } from '../store.js';
import { deletePod } from './kubelet.js';
import { chooseNode } from './scheduler.js';
import { type ControllerState, generateName, nodeLoad, safeMutate } from './state.js';

/** Tolerations the DaemonSet controller adds to every daemon pod. */
const DAEMON_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

function podFromTemplate(
  state: ControllerState,
  owner: KubeObject,
  kind: 'ReplicaSet' | 'DaemonSet',
  nodeName?: string,
): KubeObject {
  const template = (specOf(owner).template ?? {}) as {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: Record<string, unknown>;
  };
  const namespace = owner.metadata.namespace ?? 'default';
  const spec: Record<string, unknown> = structuredClone(template.spec ?? {});
  if (nodeName !== undefined) spec.nodeName = nodeName;
  if (kind === 'DaemonSet') {
    const existing = Array.isArray(spec.tolerations) ? (spec.tolerations as object[]) : [];
    spec.tolerations = [...existing, ...DAEMON_TOLERATIONS];
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: generateName(state, `${owner.metadata.name}-`, namespace),
      namespace,
      ...(template.metadata?.labels ? { labels: { ...template.metadata.labels } } : {}),
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec,
    status: { phase: 'Pending' },
  };
}

/** Creates a controller's pod with the events a real cluster records for it. */
function createPod(
  state: ControllerState,
  owner: KubeObject,
  kind: 'ReplicaSet' | 'DaemonSet',
  pod: KubeObject,
): KubeObject {
  const { store, clock } = state;
  const created = store.create('pods', pod);
  recordSuccessfulCreate(store, clock, owner, kind, created);
  const nodeName = nodeNameOf(created);
  if (nodeName !== undefined) recordScheduled(store, clock, created, nodeName);
  return created;
}

function ownedPods(owner: KubeObject, pods: readonly KubeObject[]): KubeObject[] {
  return pods.filter((pod) => controllerOf(pod)?.uid === owner.metadata.uid);
}

function isActive(pod: KubeObject): boolean {
  const phase = podPhase(pod);
  return !isTerminating(pod) && phase !== 'Succeeded' && phase !== 'Failed';
}

export function reconcileReplicaSet(state: ControllerState, namespace: string, name: string): void {
  const { store } = state;
  const replicaSet = store.get('replicasets', namespace, name);
  if (!replicaSet || isTerminating(replicaSet)) return;
  // The stored objects, not copies (viewOf): this loop only looks, and runs on every pod change.
  const pods = viewOf(store, 'pods', namespace);
  const mine = ownedPods(replicaSet, pods);
  const active = mine.filter(isActive);
  const replicas = Number(specOf(replicaSet).replicas ?? 1);
  if (active.length < replicas) {
    const nodes = viewOf(store, 'nodes');
    const load = nodeLoad(state);
    for (let index = active.length; index < replicas; index += 1) {
      const pod = podFromTemplate(state, replicaSet, 'ReplicaSet');
      const nodeName = chooseNode(pod, nodes, load);
      if (nodeName !== undefined) {
        pod.spec = { ...specOf(pod), nodeName };
        load.set(nodeName, (load.get(nodeName) ?? 0) + 1);
      }
      active.push(createPod(state, replicaSet, 'ReplicaSet', pod));
    }
  } else if (active.length > replicas) {
    // Scale down the youngest pods first, like the ReplicaSet controller's ranking (simplified).
    const victims = [...active]
      .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))
      .slice(0, active.length - replicas);
    for (const victim of victims) deletePod(state, namespace, victim.metadata.name, undefined);
  }
  const now = viewOf(store, 'pods', namespace);
  const current = ownedPods(replicaSet, now).filter(isActive);
  const status = {
    replicas: current.length,
    fullyLabeledReplicas: current.length,
    readyReplicas: current.filter(isPodReady).length,
    availableReplicas: current.filter(isPodReady).length,
    observedGeneration: replicaSet.metadata.generation ?? 1,
  };
  if (JSON.stringify(statusOf(replicaSet)) !== JSON.stringify(status)) {
    safeMutate(state, 'replicasets', namespace, name, (target) => {
      target.status = status;
    });
  }
}

function daemonSetNodes(daemonSet: KubeObject, nodes: readonly KubeObject[]): KubeObject[] {
  const template = (specOf(daemonSet).template ?? {}) as {
    spec?: { nodeSelector?: Record<string, string> };
  };
  const selector: LabelSelectorObject = { matchLabels: template.spec?.nodeSelector ?? {} };
  return nodes.filter((node) => !isTerminating(node) && matchesSelector(node.metadata.labels, selector));
}

export function reconcileDaemonSet(state: ControllerState, namespace: string, name: string): void {
  const { store } = state;
  const daemonSet = store.get('daemonsets', namespace, name);
  if (!daemonSet || isTerminating(daemonSet)) return;
  // Stored objects, not copies (viewOf), and a set of covered nodes: O(nodes + pods), whatever the size.
  const nodes = daemonSetNodes(daemonSet, viewOf(store, 'nodes'));
  const mine = ownedPods(daemonSet, viewOf(store, 'pods', namespace)).filter(isActive);
  const covered = new Set(mine.map(nodeNameOf));
  for (const node of nodes) {
    if (covered.has(node.metadata.name)) continue;
    mine.push(
      createPod(
        state,
        daemonSet,
        'DaemonSet',
        podFromTemplate(state, daemonSet, 'DaemonSet', node.metadata.name),
      ),
    );
  }
  const status = {
    desiredNumberScheduled: nodes.length,
    currentNumberScheduled: mine.length,
    numberMisscheduled: 0,
    numberReady: mine.filter(isPodReady).length,
    numberAvailable: mine.filter(isPodReady).length,
    updatedNumberScheduled: mine.length,
    observedGeneration: daemonSet.metadata.generation ?? 1,
  };
  if (JSON.stringify(statusOf(daemonSet)) !== JSON.stringify(status)) {
    safeMutate(state, 'daemonsets', namespace, name, (target) => {
      target.status = status;
    });
  }
}
