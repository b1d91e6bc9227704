/**
 * The scheduler's part of the control loops: bind unbound pods to the least loaded node they fit, and
 * record the `Scheduled` event a real scheduler records for each binding (events.ts).
 */
import type { KubeObject } from '../../contracts.js';
import { recordScheduled } from '../events.js';
import type { Condition } from '../objects.js';
import { isTerminating, nodeNameOf, podFitsNode, specOf, statusOf, timestamp } from '../objects.js';
import { type ControllerState, nodeLoad, safeMutate } from './state.js';

/** The fitting node with the fewest pods (by name on a tie), or undefined when none fits. */
export function chooseNode(
  pod: KubeObject,
  nodes: KubeObject[],
  load: Map<string, number>,
): string | undefined {
  const fitting = nodes.filter((node) => podFitsNode(pod, node));
  fitting.sort(
    (a, b) =>
      (load.get(a.metadata.name) ?? 0) - (load.get(b.metadata.name) ?? 0) ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  return fitting[0]?.metadata.name;
}

export function bindUnscheduledPods(state: ControllerState): void {
  const { store, clock, unboundPods } = state;
  if (unboundPods.size === 0) return;
  const nodes = store.list('nodes');
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
