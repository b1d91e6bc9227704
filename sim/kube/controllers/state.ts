/**
 * What the simulated control loops share: the store and clock they serve, the work queued on the
 * scheduler, and the index of pods by node that keeps node changes cheap. One state per started set of
 * controllers (sim/kube/controllers.ts).
 */
import type { KubeObject, KubeStore, LatencyProfile, Scheduler, SimClock } from '../../contracts.js';
import { KubeStoreError } from '../../contracts.js';
import { isTerminating, nodeNameOf } from '../objects.js';

export interface ControllerState {
  readonly store: KubeStore;
  readonly clock: SimClock;
  readonly scheduler: Scheduler;
  readonly latency: LatencyProfile;
  /** Delay before a ReplicaSet or DaemonSet replaces a missing pod (simulated seconds). */
  readonly controllerDelay: number;
  /** Queued work by key, each with its cancel: a key queued twice runs once. */
  readonly pending: Map<string, () => void>;
  /** Image pulls in progress, `<node>|<image>` → simulated ms they complete. */
  readonly pulls: Map<string, number>;
  /** Last observed spec.unschedulable per node, for the kubelet's cordon events. */
  readonly schedulability: Map<string, boolean>;
  nameSeed: number;
  ipCounter: number;
  // Pod keys by node, and unbound pods, kept from store events so node changes cost O(pods on the node).
  readonly podsByNode: Map<string, Set<string>>;
  readonly podNode: Map<string, string>;
  readonly unboundPods: Set<string>;
  readonly changedNodes: Set<string>;
  nodeMembershipChanged: boolean;
}

export interface ControllerStateOptions {
  store: KubeStore;
  clock: SimClock;
  scheduler: Scheduler;
  latency: LatencyProfile;
  controllerDelaySeconds?: number;
}

export function newControllerState(options: ControllerStateOptions): ControllerState {
  const { store, clock, scheduler, latency } = options;
  return {
    store,
    clock,
    scheduler,
    latency,
    controllerDelay: options.controllerDelaySeconds ?? 1,
    pending: new Map(),
    pulls: new Map(),
    schedulability: new Map(),
    nameSeed: 7,
    ipCounter: 10,
    podsByNode: new Map(),
    podNode: new Map(),
    unboundPods: new Set(),
    changedNodes: new Set(),
    nodeMembershipChanged: false,
  };
}

/** Runs `action` after `delaySeconds` of simulated time, unless work of the same key is queued. */
export function enqueue(
  state: ControllerState,
  key: string,
  delaySeconds: number | (() => number),
  action: () => void,
): void {
  if (state.pending.has(key)) return;
  // A function is called only when the action is queued: a duration drawn once per occurrence.
  const seconds = typeof delaySeconds === 'number' ? delaySeconds : delaySeconds();
  const cancel = state.scheduler.after(seconds, `kube:${key}`, () => {
    state.pending.delete(key);
    action();
  });
  state.pending.set(key, cancel);
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A pod name `<base><5 characters>` not taken in the namespace, from a seeded generator. */
export function generateName(state: ControllerState, base: string, namespace: string): string {
  for (;;) {
    let suffix = '';
    for (let index = 0; index < 5; index += 1) {
      state.nameSeed = (state.nameSeed * 1103515245 + 12345) % 2147483648;
      suffix += NAME_ALPHABET[state.nameSeed % NAME_ALPHABET.length] ?? 'x';
    }
    const name = `${base}${suffix}`;
    if (!state.store.get('pods', namespace, name)) return name;
  }
}

/** Mutates an object that may have gone meanwhile: a missing object is no error. */
export function safeMutate(
  state: ControllerState,
  resource: 'pods' | 'nodes' | 'replicasets' | 'daemonsets',
  namespace: string | undefined,
  name: string,
  change: (object: KubeObject) => void,
): void {
  try {
    state.store.mutate(resource, namespace, name, change);
  } catch (error) {
    if (!(error instanceof KubeStoreError)) throw error;
  }
}

/** Keeps the pod index up to date with one pod (deleted or not). */
export function indexPod(state: ControllerState, pod: KubeObject, deleted: boolean): void {
  const { podNode, podsByNode, unboundPods } = state;
  const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
  const previous = podNode.get(key);
  if (previous !== undefined) {
    podsByNode.get(previous)?.delete(key);
    podNode.delete(key);
  }
  unboundPods.delete(key);
  if (deleted) return;
  const nodeName = nodeNameOf(pod);
  if (nodeName === undefined) {
    if (!isTerminating(pod)) unboundPods.add(key);
    return;
  }
  podNode.set(key, nodeName);
  let keys = podsByNode.get(nodeName);
  if (!keys) {
    keys = new Set();
    podsByNode.set(nodeName, keys);
  }
  keys.add(key);
}

/** How many pods each node has bound, for the scheduler's spreading. */
export function nodeLoad(state: ControllerState): Map<string, number> {
  return new Map([...state.podsByNode].map(([nodeName, keys]) => [nodeName, keys.size]));
}
