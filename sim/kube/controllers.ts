/**
 * Stand-ins for the control loops a real cluster runs next to the API server: kubelet pod start and
 * graceful termination, the scheduler, ReplicaSet and DaemonSet controllers, pod GC, the node lifecycle
 * controller's taints and pod readiness, and kubelet re-creating mirror pods. All timing is simulated.
 *
 * Each loop lives in controllers/: kubelet.ts, scheduler.ts, replica-daemon-sets.ts and
 * node-lifecycle.ts, over the shared state of state.ts; this file wires them to the store's events.
 */
import type {
  KubeObject,
  KubeStore,
  KubeWatchEvent,
  LatencyProfile,
  Scheduler,
  SimClock,
} from '../contracts.js';
import { deletePod, recreateMirrorPod, scheduleStart } from './controllers/kubelet.js';
import { syncNodes } from './controllers/node-lifecycle.js';
import { reconcileDaemonSet, reconcileReplicaSet } from './controllers/replica-daemon-sets.js';
import { bindUnscheduledPods } from './controllers/scheduler.js';
import { type ControllerState, enqueue, indexPod, newControllerState } from './controllers/state.js';
import { controllerOf, isMirrorPod, isTerminating, nodeNameOf, podPhase } from './objects.js';

export interface KubeControllerOptions {
  store: KubeStore;
  clock: SimClock;
  scheduler: Scheduler;
  latency: LatencyProfile;
  /** Delay before a ReplicaSet or DaemonSet replaces a missing pod (simulated seconds). */
  controllerDelaySeconds?: number;
}

export interface KubeControllers {
  /** Deletes a pod the way the API server does: at once when unbound or grace 0, else marks it terminating. */
  deletePod(namespace: string, name: string, gracePeriodSeconds: number | undefined): KubeObject | undefined;
  stop(): void;
}

export function startKubeControllers(options: KubeControllerOptions): KubeControllers {
  const state = newControllerState(options);
  for (const pod of options.store.list('pods')) indexPod(state, pod, false);
  const unsubscribe = options.store.subscribe((event) => onStoreEvent(state, event));
  return {
    deletePod: (namespace, name, gracePeriodSeconds) => deletePod(state, namespace, name, gracePeriodSeconds),
    stop() {
      unsubscribe();
      for (const cancel of state.pending.values()) cancel();
      state.pending.clear();
    },
  };
}

/** What a change in the store sets off: node syncs, binding, pod starts, controller reconciles. */
/** Control loops' resources: an event of any other (a node's lease renewal) is not copied for them. */
const CONTROLLED: ReadonlySet<string> = new Set(['nodes', 'pods', 'replicasets', 'daemonsets']);

function onStoreEvent(state: ControllerState, event: KubeWatchEvent): void {
  const resource = event.resource;
  if (!CONTROLLED.has(resource)) return;
  const { object } = event;
  const namespace = object.metadata.namespace ?? '';
  const delay = state.controllerDelay;
  if (resource === 'nodes') {
    state.changedNodes.add(object.metadata.name);
    if (event.type !== 'MODIFIED') state.nodeMembershipChanged = true;
    enqueue(state, 'nodes', 0, () => syncNodes(state));
  } else if (resource === 'pods') {
    indexPod(state, object, event.type === 'DELETED');
    const owner = controllerOf(object);
    if (event.type !== 'DELETED' && !isTerminating(object)) {
      if (nodeNameOf(object) === undefined) enqueue(state, 'bind', 0, () => bindUnscheduledPods(state));
      else if (podPhase(object) === 'Pending') scheduleStart(state, object);
    }
    if (owner?.kind === 'ReplicaSet') {
      enqueue(state, `rs:${namespace}/${owner.name}`, delay, () =>
        reconcileReplicaSet(state, namespace, owner.name),
      );
    } else if (owner?.kind === 'DaemonSet') {
      enqueue(state, `ds:${namespace}/${owner.name}`, delay, () =>
        reconcileDaemonSet(state, namespace, owner.name),
      );
    }
    if (event.type === 'DELETED' && isMirrorPod(object)) recreateMirrorPod(state, object);
  } else if (resource === 'replicasets' && event.type !== 'DELETED') {
    enqueue(state, `rs:${namespace}/${object.metadata.name}`, 0, () =>
      reconcileReplicaSet(state, namespace, object.metadata.name),
    );
  } else if (resource === 'daemonsets' && event.type !== 'DELETED') {
    enqueue(state, `ds:${namespace}/${object.metadata.name}`, 0, () =>
      reconcileDaemonSet(state, namespace, object.metadata.name),
    );
  }
}
