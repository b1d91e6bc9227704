/**
 * The pure half of `kubectl drain` (its filters:
 * https://github.com/kubernetes/kubectl/blob/master/pkg/drain/filters.go): which pods on a node are evicted, which are
 * left alone, and which block the drain before anything is evicted.
 */

/** The facts about a pod that drain decides on. */
export interface PodOnNode {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  /** The owner reference with `controller: true`, if any. */
  readonly controller?: { readonly kind: string; readonly name: string; readonly apiVersion: string };
  /** Annotation `kubernetes.io/config.mirror` present: a static pod the kubelet owns. */
  readonly mirror: boolean;
  readonly usesEmptyDir: boolean;
  /** `metadata.deletionTimestamp` is set: the pod is already terminating. */
  readonly terminating: boolean;
  /** The Ready condition is True (absent: not reported). */
  readonly ready?: boolean;
  /** Annotated `karpenter.sh/do-not-disrupt: "true"`: retirement leaves its node alone (retirement.ts). */
  readonly doNotDisrupt?: boolean;
}

export interface DrainOptions {
  /** Evict pods that use emptyDir volumes (their data is lost), like `--delete-emptydir-data`. */
  readonly deleteEmptyDirData: boolean;
  /** Evict pods no controller will recreate, like `--force`. */
  readonly force: boolean;
}

export type PodDrainDecision =
  | { readonly action: 'evict'; readonly pod: PodOnNode; readonly warning?: string }
  | { readonly action: 'skip'; readonly pod: PodOnNode; readonly reason: string }
  | { readonly action: 'block'; readonly pod: PodOnNode; readonly reason: string };

export interface DrainPlan {
  readonly evict: readonly PodOnNode[];
  readonly skipped: readonly { readonly pod: PodOnNode; readonly reason: string }[];
  /** Non-empty means: abort before evicting anything, exactly as kubectl does. */
  readonly blockers: readonly { readonly pod: PodOnNode; readonly reason: string }[];
  readonly warnings: readonly string[];
}

function isFinished(pod: PodOnNode): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

/**
 * Applies kubectl's filter chain in its order (DaemonSet, mirror, local storage, unreplicated); the
 * first filter that says "don't delete" decides. DaemonSet pods are always ignored (we drain to stop
 * the VM, and the DaemonSet controller would put them straight back). `daemonSetExists` tells whether
 * the owning DaemonSet still exists: orphans of a deleted DaemonSet need `force`.
 */
function decidePodDrain(
  pod: PodOnNode,
  options: DrainOptions,
  daemonSetExists: (namespace: string, name: string) => boolean,
): PodDrainDecision {
  const finished = isFinished(pod);
  const controller = pod.controller;
  if (controller?.kind === 'DaemonSet' && !finished) {
    if (daemonSetExists(pod.namespace, controller.name)) {
      return { action: 'skip', pod, reason: `managed by DaemonSet ${controller.name}` };
    }
    if (!options.force) {
      return {
        action: 'block',
        pod,
        reason:
          `its DaemonSet ${controller.name} no longer exists, so nothing would recreate it: delete the ` +
          `pod, or recreate its DaemonSet; the node is given back`,
      };
    }
    return { action: 'evict', pod, warning: `evicting orphaned DaemonSet pod ${pod.namespace}/${pod.name}` };
  }
  if (pod.mirror) {
    return { action: 'skip', pod, reason: 'mirror pod of a static pod (the kubelet owns it)' };
  }
  if (pod.usesEmptyDir && !finished) {
    if (!options.deleteEmptyDirData) {
      return {
        action: 'block',
        pod,
        reason:
          'uses emptyDir local storage, which an eviction would lose: delete the pod, or move its data off emptyDir; the node is given back',
      };
    }
  }
  if (!finished && controller === undefined) {
    if (!options.force) {
      return {
        action: 'block',
        pod,
        reason:
          'declares no controller, nothing would recreate it: run it under a Deployment or StatefulSet, ' +
          'or delete it (to keep a node out of retirement, annotate it vmss-prototype.io/do-not-retire); ' +
          'the node is given back',
      };
    }
    return { action: 'evict', pod, warning: `evicting unreplicated pod ${pod.namespace}/${pod.name}` };
  }
  if (pod.usesEmptyDir && !finished) {
    return {
      action: 'evict',
      pod,
      warning: `evicting ${pod.namespace}/${pod.name} deletes its emptyDir data`,
    };
  }
  return { action: 'evict', pod };
}

/** Decides every pod; the result keeps the input order within each list. */
export function planDrain(
  pods: readonly PodOnNode[],
  options: DrainOptions,
  daemonSetExists: (namespace: string, name: string) => boolean,
): DrainPlan {
  const evict: PodOnNode[] = [];
  const skipped: { pod: PodOnNode; reason: string }[] = [];
  const blockers: { pod: PodOnNode; reason: string }[] = [];
  const warnings: string[] = [];
  for (const pod of pods) {
    const decision = decidePodDrain(pod, options, daemonSetExists);
    switch (decision.action) {
      case 'evict':
        evict.push(pod);
        if (decision.warning !== undefined) warnings.push(decision.warning);
        break;
      case 'skip':
        skipped.push({ pod, reason: decision.reason });
        break;
      case 'block':
        blockers.push({ pod, reason: decision.reason });
        break;
    }
  }
  return { evict, skipped, blockers, warnings };
}
