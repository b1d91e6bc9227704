/**
 * Cordon and drain of a MachinePool machine's node before its instance is deleted, as Cluster API's
 * machine deletion does (core/reconcilers/machine/drain/drain.go in https://github.com/kubernetes-sigs/cluster-api):
 * the node is cordoned, its pods evicted through the eviction rules (PodDisruptionBudgets honoured; a
 * refused eviction is retried on the next pass, with no timeout by default: `nodeDrainTimeout` unset),
 * DaemonSet and mirror pods left alone; the machine goes once no other pod is left on the node.
 */
import type { KubeObject, KubeStore } from '../../contracts.js';
import type { KubeControllers } from '../../kube/controllers.js';
import { checkEvictionAllowed } from '../../kube/disruption.js';
import { controllerOf, nodeNameOf, podPhase, specOf } from '../../kube/objects.js';

export type DrainResult = { kind: 'drained' } | { kind: 'draining' } | { kind: 'blocked'; detail: string };

function drainable(pod: KubeObject, nodeName: string): boolean {
  if (nodeNameOf(pod) !== nodeName) return false;
  const phase = podPhase(pod);
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (controllerOf(pod)?.kind === 'DaemonSet') return false;
  return !(pod.metadata.annotations ?? {})['kubernetes.io/config.mirror'];
}

/** One drain pass over a node: cordon, evict what may go now, say whether pods remain. */
export function drainPass(store: KubeStore, controllers: KubeControllers, nodeName: string): DrainResult {
  const node = store.get('nodes', undefined, nodeName);
  if (!node) return { kind: 'drained' };
  if (specOf(node).unschedulable !== true) {
    store.mutate('nodes', undefined, nodeName, (object) => {
      object.spec = { ...specOf(object), unschedulable: true };
    });
  }
  const pods = store.list('pods').filter((pod) => drainable(pod, nodeName));
  if (pods.length === 0) return { kind: 'drained' };
  let blocked: string | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    try {
      checkEvictionAllowed(store, pod);
    } catch (error) {
      blocked ??= `evicting ${pod.metadata.namespace ?? ''}/${pod.metadata.name}: ${error instanceof Error ? error.message : String(error)}`;
      continue;
    }
    controllers.deletePod(pod.metadata.namespace ?? '', pod.metadata.name, undefined);
  }
  return blocked === undefined ? { kind: 'draining' } : { kind: 'blocked', detail: blocked };
}
