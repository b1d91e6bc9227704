/**
 * The scheduler's part of the control loops: bind unbound pods to the least loaded node they fit, and
 * record the `Scheduled` event a real scheduler records for each binding (events.ts).
 */
import type { KubeObject } from '../../contracts.js';
import { recordScheduled } from '../events.js';
import type { Condition } from '../objects.js';
import { isTerminating, nodeNameOf, podFitsNode, specOf, statusOf, timestamp } from '../objects.js';
import { viewOf } from '../store.js';
import { type ControllerState, nodeLoad, safeMutate } from './state.js';

/** The fitting node with the fewest pods (by name on a tie), or undefined when none fits: one pass. */
export function chooseNode(
  pod: KubeObject,
  nodes: readonly KubeObject[],
  load: Map<string, number>,
): string | undefined {
  let best: string | undefined;
  let bestLoad = 0;
  for (const node of nodes) {
    if (!podFitsNode(pod, node)) continue;
    const name = node.metadata.name;
    const candidateLoad = load.get(name) ?? 0;
    if (
      best === undefined ||
      candidateLoad < bestLoad ||
      (candidateLoad === bestLoad && name.localeCompare(best) < 0)
    ) {
      best = name;
      bestLoad = candidateLoad;
    }
  }
  return best;
}

export function bindUnscheduledPods(state: ControllerState): void {
  const { store, clock, unboundPods } = state;
  if (unboundPods.size === 0) return;
  // The stored nodes, not copies: binding looks at every node for every unbound pod.
  const nodes = viewOf(store, 'nodes');
  const load = nodeLoad(state);
  for (const key of [...unboundPods]) {
    const [namespace = '', name = ''] = key.split('/');
    const pod = store.get('pods', namespace, name);
    if (!pod || nodeNameOf(pod) !== undefined || isTerminating(pod)) continue;
    const nodeName = chooseNode(pod, nodes, load);
    if (nodeName === undefined) continue;
    load.set(nodeName, (load.get(nodeName) ?? 0) + 1);
    safeMutate(state, 'pods', pod.metadata.namespace, pod.metadata.name, (target) => {
      target.spec = { ...specOf(target), nodeName };
      const conditions: Condition[] = [
        {
          type: 'PodScheduled',
          status: 'True',
          lastProbeTime: null,
          lastTransitionTime: timestamp(clock.nowMs()),
        },
      ];
      target.status = { ...statusOf(target), phase: 'Pending', conditions };
    });
    recordScheduled(store, clock, pod, nodeName);
  }
}
