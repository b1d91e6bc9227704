/**
 * Stand-ins for the control loops a real cluster runs next to the API server: kubelet pod start and
 * graceful termination, the scheduler, ReplicaSet and DaemonSet controllers, pod GC, the node lifecycle
 * controller's taints and pod readiness, and kubelet re-creating mirror pods. All timing is simulated.
 */
import type { KubeObject, KubeStore, LatencyProfile, Scheduler, SimClock } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { recordEvent } from './events.js';
import type { Condition, Taint } from './objects.js';
import {
  controllerOf,
  isMirrorPod,
  isNodeReady,
  isPodReady,
  isTerminating,
  isUnschedulable,
  nodeNameOf,
  podFitsNode,
  podPhase,
  specOf,
  statusOf,
  taintsOf,
  timestamp,
} from './objects.js';
import type { LabelSelectorObject } from './selectors.js';
import { matchesSelector } from './selectors.js';

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

const DEFAULT_GRACE_SECONDS = 30;

interface PodContainer {
  name?: string;
  image?: string;
  imagePullPolicy?: string;
}
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Tolerations the DaemonSet controller adds to every daemon pod. */
const DAEMON_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

const CONTROLLED_TAINT_KEYS = new Set([
  'node.kubernetes.io/unschedulable',
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
]);

export function startKubeControllers(options: KubeControllerOptions): KubeControllers {
  const { store, clock, scheduler, latency } = options;
  const controllerDelay = options.controllerDelaySeconds ?? 1;
  const pending = new Map<string, () => void>();
  /** Image pulls in progress, `<node>|<image>` → simulated ms they complete. */
  const pulls = new Map<string, number>();
  /** Last observed spec.unschedulable per node, for the kubelet's cordon events. */
  const schedulability = new Map<string, boolean>();
  let nameSeed = 7;
  let ipCounter = 10;

  function enqueue(key: string, delaySeconds: number, action: () => void): void {
    if (pending.has(key)) return;
    const cancel = scheduler.after(delaySeconds, `kube:${key}`, () => {
      pending.delete(key);
      action();
    });
    pending.set(key, cancel);
  }

  function generateName(base: string, namespace: string): string {
    for (;;) {
      let suffix = '';
      for (let index = 0; index < 5; index += 1) {
        nameSeed = (nameSeed * 1103515245 + 12345) % 2147483648;
        suffix += NAME_ALPHABET[nameSeed % NAME_ALPHABET.length] ?? 'x';
      }
      const name = `${base}${suffix}`;
      if (!store.get('pods', namespace, name)) return name;
    }
  }

  function safeMutate(
    resource: 'pods' | 'nodes' | 'replicasets' | 'daemonsets',
    namespace: string | undefined,
    name: string,
    change: (object: KubeObject) => void,
  ): void {
    try {
      store.mutate(resource, namespace, name, change);
    } catch (error) {
      if (!(error instanceof KubeStoreError)) throw error;
    }
  }

  // --- kubelet: start and stop pods -------------------------------------------------------------

  /**
   * The images a pod needs that its node does not have. A node reports what it holds in
   * `status.images`; a node that reports nothing (a bare test node) is taken to hold everything.
   */
  function missingImages(pod: KubeObject, node: KubeObject): string[] {
    const held = statusOf(node).images;
    if (!Array.isArray(held)) return [];
    const names = new Set((held as { names?: string[] }[]).flatMap((image) => image.names ?? []));
    const containers = [
      ...(Array.isArray(specOf(pod).initContainers) ? (specOf(pod).initContainers as PodContainer[]) : []),
      ...(Array.isArray(specOf(pod).containers) ? (specOf(pod).containers as PodContainer[]) : []),
    ];
    const wanted = containers
      .filter((container) => container.imagePullPolicy !== 'Never')
      .map((container) => container.image ?? '')
      .filter((image) => image !== '');
    return [...new Set(wanted)].filter((image) => !names.has(image));
  }

  /**
   * The kubelet pulls what the node lacks before the containers start: the pod stays Pending
   * (ContainerCreating) for `imagePullSeconds`, the node then keeps the image, so a second pod with it
   * starts at once. A pull in progress on the node is shared.
   */
  function pullImages(pod: KubeObject, node: KubeObject, missing: string[]): void {
    const nodeName = node.metadata.name;
    const now = clock.nowMs();
    let readyAt = now;
    for (const image of missing) {
      const key = `${nodeName}|${image}`;
      let done = pulls.get(key);
      if (done === undefined) {
        done = now + latency.imagePullSeconds * 1000;
        pulls.set(key, done);
        recordEvent(store, clock, {
          involved: { ...pod, apiVersion: 'v1', kind: 'Pod' },
          reason: 'Pulling',
          message: `Pulling image "${image}"`,
          component: 'kubelet',
          host: nodeName,
        });
        scheduler.after(latency.imagePullSeconds, `kube:pull:${key}`, () => {
          pulls.delete(key);
          safeMutate('nodes', undefined, nodeName, (target) => {
            const images = Array.isArray(statusOf(target).images)
              ? (statusOf(target).images as object[])
              : [];
            target.status = {
              ...statusOf(target),
              images: [...images, { names: [image], sizeBytes: 52_428_800 }],
            };
          });
        });
      }
      readyAt = Math.max(readyAt, done);
    }
    safeMutate('pods', pod.metadata.namespace, pod.metadata.name, (target) => {
      const containers = Array.isArray(specOf(target).containers)
        ? (specOf(target).containers as PodContainer[])
        : [];
      target.status = {
        ...statusOf(target),
        phase: 'Pending',
        startTime: statusOf(target).startTime ?? timestamp(now),
        containerStatuses: containers.map((container) => ({
          name: container.name ?? 'main',
          image: container.image ?? '',
          imageID: '',
          ready: false,
          started: false,
          restartCount: 0,
          state: { waiting: { reason: 'ContainerCreating' } },
        })),
      };
    });
    const {
      namespace = '',
      name,
      uid,
    } = { namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
    scheduler.after((readyAt - now) / 1000, `kube:start-after-pull:${namespace}/${name}`, () =>
      startPod(namespace, name, uid),
    );
  }

  function startPod(namespace: string, name: string, uid: string | undefined): void {
    const pod = store.get('pods', namespace, name);
    if (!pod || pod.metadata.uid !== uid || isTerminating(pod) || podPhase(pod) !== 'Pending') return;
    const nodeName = nodeNameOf(pod);
    const node = nodeName === undefined ? undefined : store.get('nodes', undefined, nodeName);
    if (!node || !isNodeReady(node)) return; // retried when the node turns Ready
    const missing = missingImages(pod, node);
    if (missing.length > 0) {
      pullImages(pod, node, missing);
      return;
    }
    const now = timestamp(clock.nowMs());
    const hostIP = nodeAddress(node);
    ipCounter += 1;
    const podIP =
      specOf(pod).hostNetwork === true
        ? hostIP
        : `10.244.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 2}`;
    store.mutate('pods', namespace, name, (target) => {
      const containers = Array.isArray(specOf(target).containers)
        ? (specOf(target).containers as { name?: string; image?: string }[])
        : [];
      target.status = {
        ...statusOf(target),
        phase: 'Running',
        hostIP,
        podIP,
        podIPs: [{ ip: podIP }],
        startTime: statusOf(target).startTime ?? now,
        conditions: [
          'PodReadyToStartContainers',
          'Initialized',
          'Ready',
          'ContainersReady',
          'PodScheduled',
        ].map((type): Condition => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now })),
        containerStatuses: containers.map((container) => ({
          name: container.name ?? 'main',
          image: container.image ?? '',
          imageID: '',
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: now } },
        })),
      };
    });
  }

  function nodeAddress(node: KubeObject): string {
    const addresses = statusOf(node).addresses;
    if (Array.isArray(addresses)) {
      const internal = (addresses as { type?: string; address?: string }[]).find(
        (entry) => entry.type === 'InternalIP',
      );
      if (internal?.address) return internal.address;
    }
    return '10.240.0.4';
  }

  function scheduleStart(pod: KubeObject): void {
    enqueue(
      `start:${pod.metadata.namespace}/${pod.metadata.name}:${pod.metadata.uid}`,
      latency.podStartSeconds,
      () => startPod(pod.metadata.namespace ?? '', pod.metadata.name, pod.metadata.uid),
    );
  }

  function finishTermination(namespace: string, name: string, uid: string | undefined): void {
    const pod = store.get('pods', namespace, name);
    if (!pod || pod.metadata.uid !== uid || !isTerminating(pod)) return;
    const nodeName = nodeNameOf(pod);
    const node = nodeName === undefined ? undefined : store.get('nodes', undefined, nodeName);
    // A kubelet that is down cannot confirm termination: the pod stays Terminating until its node is
    // back (or someone deletes it with grace 0), exactly what operators see with stopped VMs.
    if (node && !isNodeReady(node)) return;
    store.remove('pods', namespace, name);
  }

  function deletePod(
    namespace: string,
    name: string,
    gracePeriodSeconds: number | undefined,
  ): KubeObject | undefined {
    const pod = store.get('pods', namespace, name);
    if (!pod) return undefined;
    const grace =
      gracePeriodSeconds ?? Number(specOf(pod).terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS);
    const phase = podPhase(pod);
    if (grace <= 0 || nodeNameOf(pod) === undefined || phase === 'Succeeded' || phase === 'Failed') {
      store.remove('pods', namespace, name);
      return pod;
    }
    if (isTerminating(pod) && (pod.metadata.deletionGracePeriodSeconds ?? 0) <= grace) return pod;
    const updated = store.mutate('pods', namespace, name, (target) => {
      target.metadata.deletionTimestamp = timestamp(clock.nowMs() + grace * 1000);
      target.metadata.deletionGracePeriodSeconds = grace;
    });
    const host = nodeNameOf(pod);
    const node = host === undefined ? undefined : store.get('nodes', undefined, host);
    if (node && isNodeReady(node) && !isTerminating(pod)) {
      const containers = Array.isArray(specOf(pod).containers)
        ? (specOf(pod).containers as { name?: string }[])
        : [];
      for (const container of containers) {
        recordEvent(store, clock, {
          involved: { ...updated, apiVersion: 'v1', kind: 'Pod' },
          fieldPath: `spec.containers{${container.name ?? ''}}`,
          reason: 'Killing',
          message: `Stopping container ${container.name ?? ''}`,
          component: 'kubelet',
          host: host ?? '',
        });
      }
    }
    enqueue(`terminate:${namespace}/${name}:${pod.metadata.uid}:${grace}`, grace, () =>
      finishTermination(namespace, name, pod.metadata.uid),
    );
    return updated;
  }

  // --- scheduler --------------------------------------------------------------------------------

  function chooseNode(pod: KubeObject, nodes: KubeObject[], load: Map<string, number>): string | undefined {
    const fitting = nodes.filter((node) => podFitsNode(pod, node));
    fitting.sort(
      (a, b) =>
        (load.get(a.metadata.name) ?? 0) - (load.get(b.metadata.name) ?? 0) ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
    return fitting[0]?.metadata.name;
  }

  function nodeLoad(): Map<string, number> {
    return new Map([...podsByNode].map(([nodeName, keys]) => [nodeName, keys.size]));
  }

  function bindUnscheduledPods(): void {
    if (unboundPods.size === 0) return;
    const nodes = store.list('nodes');
    const load = nodeLoad();
    for (const key of [...unboundPods]) {
      const [namespace = '', name = ''] = key.split('/');
      const pod = store.get('pods', namespace, name);
      if (!pod || nodeNameOf(pod) !== undefined || isTerminating(pod)) continue;
      const nodeName = chooseNode(pod, nodes, load);
      if (nodeName === undefined) continue;
      load.set(nodeName, (load.get(nodeName) ?? 0) + 1);
      safeMutate('pods', pod.metadata.namespace, pod.metadata.name, (target) => {
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
    }
  }

  // --- ReplicaSet and DaemonSet controllers -----------------------------------------------------

  function podFromTemplate(
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
        name: generateName(`${owner.metadata.name}-`, namespace),
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

  function ownedPods(owner: KubeObject, pods: KubeObject[]): KubeObject[] {
    return pods.filter((pod) => controllerOf(pod)?.uid === owner.metadata.uid);
  }

  function isActive(pod: KubeObject): boolean {
    const phase = podPhase(pod);
    return !isTerminating(pod) && phase !== 'Succeeded' && phase !== 'Failed';
  }

  function reconcileReplicaSet(namespace: string, name: string): void {
    const replicaSet = store.get('replicasets', namespace, name);
    if (!replicaSet || isTerminating(replicaSet)) return;
    const pods = store.list('pods', namespace);
    const mine = ownedPods(replicaSet, pods);
    const active = mine.filter(isActive);
    const replicas = Number(specOf(replicaSet).replicas ?? 1);
    if (active.length < replicas) {
      const nodes = store.list('nodes');
      const load = nodeLoad();
      for (let index = active.length; index < replicas; index += 1) {
        const pod = podFromTemplate(replicaSet, 'ReplicaSet');
        const nodeName = chooseNode(pod, nodes, load);
        if (nodeName !== undefined) {
          pod.spec = { ...specOf(pod), nodeName };
          load.set(nodeName, (load.get(nodeName) ?? 0) + 1);
        }
        active.push(store.create('pods', pod));
      }
    } else if (active.length > replicas) {
      // Scale down the youngest pods first, like the ReplicaSet controller's ranking (simplified).
      const victims = [...active]
        .sort((a, b) =>
          (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
        )
        .slice(0, active.length - replicas);
      for (const victim of victims) deletePod(namespace, victim.metadata.name, undefined);
    }
    const now = store.list('pods', namespace);
    const current = ownedPods(replicaSet, now).filter(isActive);
    const status = {
      replicas: current.length,
      fullyLabeledReplicas: current.length,
      readyReplicas: current.filter(isPodReady).length,
      availableReplicas: current.filter(isPodReady).length,
      observedGeneration: replicaSet.metadata.generation ?? 1,
    };
    if (JSON.stringify(statusOf(replicaSet)) !== JSON.stringify(status)) {
      safeMutate('replicasets', namespace, name, (target) => {
        target.status = status;
      });
    }
  }

  function daemonSetNodes(daemonSet: KubeObject, nodes: KubeObject[]): KubeObject[] {
    const template = (specOf(daemonSet).template ?? {}) as {
      spec?: { nodeSelector?: Record<string, string> };
    };
    const selector: LabelSelectorObject = { matchLabels: template.spec?.nodeSelector ?? {} };
    return nodes.filter((node) => !isTerminating(node) && matchesSelector(node.metadata.labels, selector));
  }

  function reconcileDaemonSet(namespace: string, name: string): void {
    const daemonSet = store.get('daemonsets', namespace, name);
    if (!daemonSet || isTerminating(daemonSet)) return;
    const nodes = daemonSetNodes(daemonSet, store.list('nodes'));
    const mine = ownedPods(daemonSet, store.list('pods', namespace)).filter(isActive);
    for (const node of nodes) {
      if (mine.some((pod) => nodeNameOf(pod) === node.metadata.name)) continue;
      mine.push(store.create('pods', podFromTemplate(daemonSet, 'DaemonSet', node.metadata.name)));
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
      safeMutate('daemonsets', namespace, name, (target) => {
        target.status = status;
      });
    }
  }

  // --- node lifecycle: taints, pod readiness, pod GC ---------------------------------------------

  function desiredControlledTaints(node: KubeObject, existing: Taint[]): Taint[] {
    const ready = statusOf(node).conditions === undefined ? 'Unknown' : (readyStatus(node) ?? 'Unknown');
    const now = timestamp(clock.nowMs());
    const keep = (key: string, effect: string): Taint =>
      existing.find((taint) => taint.key === key && taint.effect === effect) ?? {
        key,
        effect,
        ...(effect === 'NoExecute' ? { timeAdded: now } : {}),
      };
    const taints: Taint[] = [];
    if (ready === 'False') {
      taints.push(
        keep('node.kubernetes.io/not-ready', 'NoSchedule'),
        keep('node.kubernetes.io/not-ready', 'NoExecute'),
      );
    } else if (ready !== 'True') {
      taints.push(
        keep('node.kubernetes.io/unreachable', 'NoSchedule'),
        keep('node.kubernetes.io/unreachable', 'NoExecute'),
      );
    }
    if (isUnschedulable(node)) taints.push(keep('node.kubernetes.io/unschedulable', 'NoSchedule'));
    return taints;
  }

  function readyStatus(node: KubeObject): string | undefined {
    const conditions = statusOf(node).conditions;
    if (!Array.isArray(conditions)) return undefined;
    return (conditions as Condition[]).find((condition) => condition.type === 'Ready')?.status;
  }

  /** The kubelet reports a cordon or an uncordon it observes as a node event (only while it runs). */
  function recordSchedulability(node: KubeObject): void {
    const unschedulable = isUnschedulable(node);
    const before = schedulability.get(node.metadata.name);
    schedulability.set(node.metadata.name, unschedulable);
    if (before === undefined || before === unschedulable || !isNodeReady(node)) return;
    const reason = unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable';
    recordEvent(store, clock, {
      involved: { ...node, apiVersion: 'v1', kind: 'Node' },
      reason,
      message: `Node ${node.metadata.name} status is now: ${reason}`,
      component: 'kubelet',
      host: node.metadata.name,
    });
  }

  function syncNodeTaints(node: KubeObject): void {
    recordSchedulability(node);
    const existing = taintsOf(node);
    const others = existing.filter((taint) => !CONTROLLED_TAINT_KEYS.has(taint.key));
    const next = [...others, ...desiredControlledTaints(node, existing)];
    if (JSON.stringify(next) === JSON.stringify(existing)) return;
    safeMutate('nodes', undefined, node.metadata.name, (target) => {
      const spec = { ...specOf(target) };
      if (next.length === 0) delete spec.taints;
      else spec.taints = next;
      target.spec = spec;
    });
  }

  function setPodReady(pod: KubeObject, ready: boolean): void {
    const status = ready ? 'True' : 'False';
    safeMutate('pods', pod.metadata.namespace, pod.metadata.name, (target) => {
      const conditions = Array.isArray(statusOf(target).conditions)
        ? (statusOf(target).conditions as Condition[])
        : [];
      target.status = {
        ...statusOf(target),
        conditions: conditions.map((condition) =>
          condition.type === 'Ready' || condition.type === 'ContainersReady'
            ? { ...condition, status, lastTransitionTime: timestamp(clock.nowMs()) }
            : condition,
        ),
      };
    });
  }

  /** Re-evaluates only the nodes that changed since the last pass, and the pods bound to them. */
  function syncNodes(): void {
    const names = [...changedNodes];
    changedNodes.clear();
    const membership = nodeMembershipChanged;
    nodeMembershipChanged = false;
    for (const nodeName of names) {
      const node = store.get('nodes', undefined, nodeName);
      if (node) syncNodeTaints(node);
      for (const key of podsByNode.get(nodeName) ?? []) {
        const [namespace = '', name = ''] = key.split('/');
        const pod = store.get('pods', namespace, name);
        if (pod) syncPodWithNode(pod, node);
      }
    }
    if (unboundPods.size > 0) bindUnscheduledPods();
    if (membership) {
      for (const daemonSet of store.list('daemonsets')) {
        reconcileDaemonSet(daemonSet.metadata.namespace ?? '', daemonSet.metadata.name);
      }
    }
  }

  function syncPodWithNode(pod: KubeObject, node: KubeObject | undefined): void {
    if (!node) {
      // Pod GC: pods bound to a node that no longer exists are force-deleted.
      store.remove('pods', pod.metadata.namespace, pod.metadata.name);
      return;
    }
    const nodeReady = isNodeReady(node);
    if (isTerminating(pod)) {
      const due = Date.parse(pod.metadata.deletionTimestamp ?? '') <= clock.nowMs();
      if (nodeReady && due) store.remove('pods', pod.metadata.namespace, pod.metadata.name);
      return;
    }
    const phase = podPhase(pod);
    if (phase === 'Pending' && nodeReady) scheduleStart(pod);
    if (phase === 'Running' && isPodReady(pod) !== nodeReady) setPodReady(pod, nodeReady);
  }

  // Pod keys by node, and unbound pods, kept from store events so node changes cost O(pods on the node).
  const podsByNode = new Map<string, Set<string>>();
  const podNode = new Map<string, string>();
  const unboundPods = new Set<string>();
  const changedNodes = new Set<string>();
  let nodeMembershipChanged = false;

  function indexPod(pod: KubeObject, deleted: boolean): void {
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

  for (const pod of store.list('pods')) indexPod(pod, false);

  // --- event wiring ------------------------------------------------------------------------------

  const unsubscribe = store.subscribe((event) => {
    const { object } = event;
    const namespace = object.metadata.namespace ?? '';
    const resource = event.resource;
    if (resource === 'nodes') {
      changedNodes.add(object.metadata.name);
      if (event.type !== 'MODIFIED') nodeMembershipChanged = true;
      enqueue('nodes', 0, syncNodes);
    } else if (resource === 'pods') {
      indexPod(object, event.type === 'DELETED');
      const owner = controllerOf(object);
      if (event.type !== 'DELETED' && !isTerminating(object)) {
        if (nodeNameOf(object) === undefined) enqueue('bind', 0, bindUnscheduledPods);
        else if (podPhase(object) === 'Pending') scheduleStart(object);
      }
      if (owner?.kind === 'ReplicaSet') {
        enqueue(`rs:${namespace}/${owner.name}`, controllerDelay, () =>
          reconcileReplicaSet(namespace, owner.name),
        );
      } else if (owner?.kind === 'DaemonSet') {
        enqueue(`ds:${namespace}/${owner.name}`, controllerDelay, () =>
          reconcileDaemonSet(namespace, owner.name),
        );
      }
      if (event.type === 'DELETED' && isMirrorPod(object)) recreateMirrorPod(object);
    } else if (resource === 'replicasets' && event.type !== 'DELETED') {
      enqueue(`rs:${namespace}/${object.metadata.name}`, 0, () =>
        reconcileReplicaSet(namespace, object.metadata.name),
      );
    } else if (resource === 'daemonsets' && event.type !== 'DELETED') {
      enqueue(`ds:${namespace}/${object.metadata.name}`, 0, () =>
        reconcileDaemonSet(namespace, object.metadata.name),
      );
    }
  });

  /** The kubelet re-creates a static pod's mirror as long as the node runs. */
  function recreateMirrorPod(pod: KubeObject): void {
    const nodeName = nodeNameOf(pod);
    enqueue(`mirror:${pod.metadata.namespace}/${pod.metadata.name}`, latency.podStartSeconds, () => {
      const node = nodeName === undefined ? undefined : store.get('nodes', undefined, nodeName);
      if (!node || !isNodeReady(node) || store.get('pods', pod.metadata.namespace, pod.metadata.name)) return;
      const {
        uid: _uid,
        resourceVersion: _rv,
        deletionTimestamp: _dt,
        deletionGracePeriodSeconds: _dg,
        ...metadata
      } = pod.metadata;
      store.create('pods', { ...pod, metadata });
    });
  }

  return {
    deletePod,
    stop() {
      unsubscribe();
      for (const cancel of pending.values()) cancel();
      pending.clear();
    },
  };
}
