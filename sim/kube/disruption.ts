/**
 * PodDisruptionBudget arithmetic as the disruption controller and the eviction subresource do it:
 * expected pods from controller scale, desired healthy from minAvailable/maxUnavailable (int or
 * percent, rounded up), current healthy = Ready pods not being deleted.
 */
import type { KubeObject, KubeStore } from '../contracts.js';
import { controllerOf, isPodReady, isTerminating, podPhase, specOf, statusOf } from './objects.js';
import type { LabelSelectorObject } from './selectors.js';
import { matchesSelector } from './selectors.js';
import { KubeApiError } from './status.js';

export interface BudgetStatus {
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  disruptionsAllowed: number;
  /** Why the budget cannot be computed (no controller for a percentage/maxUnavailable budget), if so. */
  error?: string;
}

function selectorOf(pdb: KubeObject): LabelSelectorObject | undefined {
  const selector = specOf(pdb).selector;
  return typeof selector === 'object' && selector !== null ? selector : undefined;
}

/** Pods of the budget's namespace its selector matches (policy/v1: an empty selector matches all). */
export function podsForBudget(store: KubeStore, pdb: KubeObject): KubeObject[] {
  const selector = selectorOf(pdb);
  return store
    .list('pods', pdb.metadata.namespace)
    .filter((pod) => matchesSelector(pod.metadata.labels, selector));
}

export function budgetsForPod(store: KubeStore, pod: KubeObject): KubeObject[] {
  if (!pod.metadata.labels || Object.keys(pod.metadata.labels).length === 0) {
    // The API server ignores budgets for pods without labels.
    return [];
  }
  return store
    .list('poddisruptionbudgets', pod.metadata.namespace)
    .filter((pdb) => matchesSelector(pod.metadata.labels, selectorOf(pdb)));
}

/** Parses an IntOrString against a total; percentages round up like the disruption controller. */
export function scaledValue(value: unknown, total: number): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const percent = /^(\d+)%$/.exec(value);
    if (percent) return Math.ceil((Number(percent[1]) * total) / 100);
    if (/^\d+$/.test(value)) return Number(value);
  }
  return undefined;
}

function controllerScale(store: KubeStore, pod: KubeObject): { uid: string; scale: number } | undefined {
  const owner = controllerOf(pod);
  const namespace = pod.metadata.namespace;
  if (!owner) return undefined;
  if (owner.kind === 'ReplicaSet') {
    const replicaSet = store.get('replicasets', namespace, owner.name);
    if (!replicaSet || replicaSet.metadata.uid !== owner.uid) return undefined;
    const parent = controllerOf(replicaSet);
    if (parent?.kind === 'Deployment') {
      const deployment = store.get('deployments', namespace, parent.name);
      if (deployment?.metadata.uid === parent.uid) {
        return { uid: parent.uid, scale: Number(specOf(deployment).replicas ?? 1) };
      }
    }
    return { uid: owner.uid, scale: Number(specOf(replicaSet).replicas ?? 1) };
  }
  if (owner.kind === 'DaemonSet') {
    const daemonSet = store.get('daemonsets', namespace, owner.name);
    if (!daemonSet || daemonSet.metadata.uid !== owner.uid) return undefined;
    return { uid: owner.uid, scale: Number(statusOf(daemonSet).desiredNumberScheduled ?? 0) };
  }
  return undefined;
}

export function computeBudget(store: KubeStore, pdb: KubeObject): BudgetStatus {
  const pods = podsForBudget(store, pdb);
  const spec = specOf(pdb);
  const currentHealthy = pods.filter((pod) => !isTerminating(pod) && isPodReady(pod)).length;
  let expectedPods = pods.length;
  let desiredHealthy = 0;
  const needsScale =
    spec.maxUnavailable !== undefined ||
    (typeof spec.minAvailable === 'string' && spec.minAvailable.endsWith('%'));
  if (needsScale) {
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const scale = controllerScale(store, pod);
      if (!scale) {
        return {
          currentHealthy,
          desiredHealthy: 0,
          expectedPods: 0,
          disruptionsAllowed: 0,
          error: `found no controllers for pod "${pod.metadata.name}"`,
        };
      }
      scales.set(scale.uid, scale.scale);
    }
    expectedPods = [...scales.values()].reduce((sum, scale) => sum + scale, 0);
    if (spec.maxUnavailable !== undefined) {
      desiredHealthy = Math.max(0, expectedPods - (scaledValue(spec.maxUnavailable, expectedPods) ?? 0));
    } else {
      desiredHealthy = scaledValue(spec.minAvailable, expectedPods) ?? 0;
    }
  } else if (spec.minAvailable !== undefined) {
    desiredHealthy = scaledValue(spec.minAvailable, expectedPods) ?? 0;
  }
  const disruptionsAllowed = expectedPods <= 0 ? 0 : Math.max(0, currentHealthy - desiredHealthy);
  return { currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed };
}

/** The budget as `kubectl get pdb` would see it: status filled from live pod state. */
export function withBudgetStatus(store: KubeStore, pdb: KubeObject): KubeObject {
  const status = computeBudget(store, pdb);
  return {
    ...pdb,
    status: {
      observedGeneration: pdb.metadata.generation ?? 1,
      disruptionsAllowed: status.disruptionsAllowed,
      currentHealthy: status.currentHealthy,
      desiredHealthy: status.desiredHealthy,
      expectedPods: status.expectedPods,
      // The disruption controller's condition (kubernetes pkg/controller/disruption/disruption.go
      // `updatePdbStatus`, pkg/apis/policy/helper.go): DisruptionAllowed, reason SufficientPods or
      // InsufficientPods. Its transition time is the budget's creation: the simulator does not keep when
      // it last flipped.
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: status.disruptionsAllowed > 0 ? 'True' : 'False',
          reason: status.disruptionsAllowed > 0 ? 'SufficientPods' : 'InsufficientPods',
          message: '',
          observedGeneration: pdb.metadata.generation ?? 1,
          lastTransitionTime: pdb.metadata.creationTimestamp ?? '1970-01-01T00:00:00Z',
        },
      ],
    },
  };
}

/**
 * The eviction subresource's budget check: returns when the pod may go now, throws the API server's
 * 429 (budget exhausted) or 500 (several budgets select the pod) otherwise.
 */
export function checkEvictionAllowed(store: KubeStore, pod: KubeObject): void {
  const phase = podPhase(pod);
  // The API server skips budgets for pods that are not running or already going away.
  if (isTerminating(pod) || phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending') return;
  const budgets = budgetsForPod(store, pod);
  const [budget] = budgets;
  if (!budget) return;
  if (budgets.length > 1) {
    throw new KubeApiError(
      'InternalError',
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  }
  const status = computeBudget(store, budget);
  if (!isPodReady(pod)) {
    // unhealthyPodEvictionPolicy: IfHealthyBudget (default) lets unready pods go while the budget holds.
    if (specOf(budget).unhealthyPodEvictionPolicy === 'AlwaysAllow') return;
    if (status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0) return;
  }
  if (status.disruptionsAllowed > 0) return;
  throw new KubeApiError(
    'TooManyRequests',
    "Cannot evict pod as it would violate the pod's disruption budget.",
    {
      causes: [
        {
          reason: 'DisruptionBudget',
          message: `The disruption budget ${budget.metadata.name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
        },
      ],
    },
  );
}
