/**
 * Holding the donor node and giving it back: its prior state, the marker that proves this run holds it,
 * one `kubectl drain` round, and the restore that leaves an administrator's cordon and annotations alone.
 */
import { CAPTURE_RUN_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION } from '../domain/cluster-node.js';
import { planDrain } from '../domain/drain.js';
import { isNotFound, TerminalError } from '../domain/errors.js';
import type { ClusterGateway } from '../ports/cluster-gateway.js';

export interface NodePriorState {
  readonly unschedulable: boolean;
  /** Value of the scale-down-disabled annotation before we touched it; null when absent. */
  readonly scaleDownDisabled: string | null;
}

export interface DrainStepResult {
  /** True when no evictable pod is left on the node. */
  readonly done: boolean;
  readonly evictedNow: number;
  /** Pods still on the node: evicting (terminating) or refused by a PDB for now. */
  readonly pending: readonly {
    readonly pod: string;
    readonly state: 'terminating' | 'blocked';
    readonly message?: string;
  }[];
  /** Pods that make kubectl-style drain refuse before evicting anything. */
  readonly blockers: readonly { readonly pod: string; readonly reason: string }[];
  readonly warnings: readonly string[];
}

/** The node's state before we touch it; refused when another run holds the node. */
export async function readNodePriorState(kube: ClusterGateway, nodeName: string): Promise<NodePriorState> {
  const node = await kube.getNode(nodeName);
  const marker = node.annotations[CAPTURE_RUN_ANNOTATION];
  if (marker !== undefined) {
    // Another run holds this node (or crashed holding it): its prior state is not ours to record.
    throw new TerminalError(
      'NodeHeldByAnotherRun',
      `reading node ${nodeName}: it carries ${CAPTURE_RUN_ANNOTATION}=${marker} from another run`,
      {
        advice:
          'wait for that run to finish, or, if it is gone, uncordon the node and remove the annotation by hand',
      },
    );
  }
  return {
    unschedulable: node.unschedulable,
    scaleDownDisabled: node.annotations[SCALE_DOWN_DISABLED_ANNOTATION] ?? null,
  };
}

/** Marks the node as held by this run and keeps the autoscaler away from it, then cordons it. */
export async function protectNode(kube: ClusterGateway, nodeName: string, runTag: string): Promise<void> {
  // The autoscaler must not remove the node while it is drained and stopped: cordoning alone
  // does not protect it (research/kube.md §4). Annotate first, then cordon.
  await kube.patchNodeAnnotations(nodeName, {
    [CAPTURE_RUN_ANNOTATION]: runTag,
    [SCALE_DOWN_DISABLED_ANNOTATION]: 'true',
  });
  await kube.setNodeUnschedulable(nodeName, true);
}

/**
 * Gives the node back exactly as it was, but only if this run holds it (its marker annotation): a
 * node we never touched, or one another run holds, is left alone. Idempotent; a deleted node is fine.
 */
export async function restoreNode(
  kube: ClusterGateway,
  nodeName: string,
  runTag: string,
  prior: NodePriorState,
): Promise<void> {
  let node;
  try {
    node = await kube.getNode(nodeName);
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  if (node.annotations[CAPTURE_RUN_ANNOTATION] !== runTag) return;
  if (!prior.unschedulable && node.unschedulable) {
    await kube.setNodeUnschedulable(nodeName, false);
  }
  // The marker goes last: while it is there, a retry of this activity still knows the node is ours.
  await kube.patchNodeAnnotations(nodeName, {
    [SCALE_DOWN_DISABLED_ANNOTATION]: prior.scaleDownDisabled,
    [CAPTURE_RUN_ANNOTATION]: null,
  });
}

/** One round of `kubectl drain`: evict what may be evicted now, report what is left. */
export async function drainStep(
  kube: ClusterGateway,
  nodeName: string,
  options: { gracePeriodSeconds: number | undefined; deleteEmptyDirData: boolean; force: boolean },
): Promise<DrainStepResult> {
  const pods = await kube.listPodsOnNode(nodeName);
  const daemonSets = new Map<string, boolean>();
  for (const pod of pods) {
    const controller = pod.controller;
    if (controller?.kind === 'DaemonSet') {
      const key = `${pod.namespace}/${controller.name}`;
      if (!daemonSets.has(key))
        daemonSets.set(key, await kube.daemonSetExists(pod.namespace, controller.name));
    }
  }
  const plan = planDrain(pods, options, (namespace, name) => daemonSets.get(`${namespace}/${name}`) ?? true);
  if (plan.blockers.length > 0) {
    return {
      done: false,
      evictedNow: 0,
      pending: [],
      blockers: plan.blockers.map((b) => ({ pod: `${b.pod.namespace}/${b.pod.name}`, reason: b.reason })),
      warnings: plan.warnings,
    };
  }
  const pending: DrainStepResult['pending'][number][] = [];
  let evictedNow = 0;
  for (const pod of plan.evict) {
    const podName = `${pod.namespace}/${pod.name}`;
    if (pod.terminating) {
      pending.push({ pod: podName, state: 'terminating' });
      continue;
    }
    const outcome = await kube.evictPod(pod.namespace, pod.name, options.gracePeriodSeconds);
    switch (outcome.kind) {
      case 'evicted':
        evictedNow += 1;
        pending.push({ pod: podName, state: 'terminating' });
        break;
      case 'gone':
        break;
      case 'blocked':
        pending.push({ pod: podName, state: 'blocked', message: outcome.message });
        break;
    }
  }
  return { done: pending.length === 0, evictedNow, pending, blockers: [], warnings: plan.warnings };
}
