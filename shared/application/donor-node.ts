/**
 * Holding the donor node and giving it back: its prior state, the marker that proves which run holds it
 * (its run id), one `kubectl drain` round, and the restore that leaves an administrator's cordon and
 * annotations alone. The prior state is also written on the node itself, in the same patch as the marker,
 * so that the reaper can give the node back without the run's history.
 */
import { CAPTURE_RUN_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION } from '../domain/cluster-node.js';
import { planDrain } from '../domain/drain.js';
import { isNotFound, TerminalError } from '../domain/errors.js';
import type { NodePriorState } from '../domain/ownership.js';
import { decodePriorState, encodePriorState, PRIOR_STATE_ANNOTATION } from '../domain/ownership.js';
import type { KubernetesPorts } from '../ports/kubernetes/index.js';

export type { NodePriorState } from '../domain/ownership.js';

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
export async function readNodePriorState(kube: KubernetesPorts, nodeName: string): Promise<NodePriorState> {
  const node = await kube.nodes.get(nodeName);
  const marker = node.annotations[CAPTURE_RUN_ANNOTATION];
  if (marker !== undefined) {
    // Another run holds this node (or crashed holding it): its prior state is not ours to record.
    throw heldByAnotherRun(`reading node ${nodeName}`, marker);
  }
  return {
    unschedulable: node.unschedulable,
    scaleDownDisabled: node.annotations[SCALE_DOWN_DISABLED_ANNOTATION] ?? null,
  };
}

function heldByAnotherRun(doing: string, marker: string): TerminalError {
  return new TerminalError(
    'NodeHeldByAnotherRun',
    `${doing}: it carries ${CAPTURE_RUN_ANNOTATION}=${marker} from another run`,
    {
      advice:
        'wait for that run to finish; if it is gone, `vmss-prototype release --pool <pool>` gives the node back',
    },
  );
}

/**
 * Marks the node as held by this run (marker and prior state in one patch) and keeps the autoscaler away
 * from it, then cordons it. A node another run holds is refused; one this run holds already (a retried
 * activity) is cordoned again.
 */
export async function protectNode(
  kube: KubernetesPorts,
  nodeName: string,
  runId: string,
  prior: NodePriorState,
): Promise<void> {
  const marker = (await kube.nodes.get(nodeName)).annotations[CAPTURE_RUN_ANNOTATION];
  if (marker !== undefined && marker !== runId) throw heldByAnotherRun(`holding node ${nodeName}`, marker);
  // The autoscaler must not remove the node while it is drained and stopped: cordoning alone
  // does not protect it (docs/design.md#capture). Annotate first, then cordon.
  await kube.nodes.patchAnnotations(nodeName, {
    [CAPTURE_RUN_ANNOTATION]: runId,
    [PRIOR_STATE_ANNOTATION]: encodePriorState(prior),
    [SCALE_DOWN_DISABLED_ANNOTATION]: 'true',
  });
  await kube.nodes.setUnschedulable(nodeName, true);
}

/**
 * Gives the node back exactly as it was, but only if run `runId` holds it (its marker annotation): a
 * node we never touched, or one another run holds, is left alone. The prior state comes from the run's
 * history, or (the reaper, `release`) from the node's own annotation. Idempotent; a deleted node is fine.
 */
export async function restoreNode(
  kube: KubernetesPorts,
  nodeName: string,
  runId: string,
  prior: NodePriorState | 'recorded-on-node',
): Promise<'restored' | 'not-held'> {
  let node;
  try {
    node = await kube.nodes.get(nodeName);
  } catch (error) {
    if (isNotFound(error)) return 'not-held';
    throw error;
  }
  if (node.annotations[CAPTURE_RUN_ANNOTATION] !== runId) return 'not-held';
  const state =
    prior === 'recorded-on-node' ? decodePriorState(node.annotations[PRIOR_STATE_ANNOTATION]) : prior;
  if (state === undefined) {
    throw new TerminalError(
      'NoPriorState',
      `giving node ${nodeName} back: run ${runId} recorded no prior state on it`,
      {
        advice:
          'uncordon it only if it was schedulable before, and remove the vmss-prototype.io annotations by hand',
      },
    );
  }
  if (!state.unschedulable && node.unschedulable) {
    await kube.nodes.setUnschedulable(nodeName, false);
  }
  // The marker goes last (in the same patch as the rest): while it is there, a retry of this activity
  // still knows the node is ours.
  await kube.nodes.patchAnnotations(nodeName, {
    [SCALE_DOWN_DISABLED_ANNOTATION]: state.scaleDownDisabled,
    [PRIOR_STATE_ANNOTATION]: null,
    [CAPTURE_RUN_ANNOTATION]: null,
  });
  return 'restored';
}

/** One round of `kubectl drain`: evict what may be evicted now, report what is left. */
export async function drainStep(
  kube: KubernetesPorts,
  nodeName: string,
  options: { gracePeriodSeconds: number | undefined; deleteEmptyDirData: boolean; force: boolean },
): Promise<DrainStepResult> {
  const pods = await kube.pods.listOnNode(nodeName);
  const daemonSets = new Map<string, boolean>();
  for (const pod of pods) {
    const controller = pod.controller;
    if (controller?.kind === 'DaemonSet') {
      const key = `${pod.namespace}/${controller.name}`;
      if (!daemonSets.has(key))
        daemonSets.set(key, await kube.daemonSets.exists(pod.namespace, controller.name));
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
    const outcome = await kube.pods.evict(pod.namespace, pod.name, options.gracePeriodSeconds);
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
