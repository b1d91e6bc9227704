/**
 * The kubelet's part of the control loops: pull images a pod lacks, start pods, stop them gracefully
 * (a pod on a node that is down stays Terminating), and re-create a static pod's mirror.
 */
import { durationOf, type KubeObject } from '../../contracts.js';
import { recordEvent } from '../events.js';
import type { Condition } from '../objects.js';
import { isNodeReady, isTerminating, nodeNameOf, podPhase, specOf, statusOf, timestamp } from '../objects.js';
import { type ControllerState, enqueue, safeMutate } from './state.js';

const DEFAULT_GRACE_SECONDS = 30;

interface PodContainer {
  name?: string;
  image?: string;
  imagePullPolicy?: string;
}

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
function pullImages(state: ControllerState, pod: KubeObject, node: KubeObject, missing: string[]): void {
  const { store, clock, scheduler, latency, pulls } = state;
  const nodeName = node.metadata.name;
  const now = clock.nowMs();
  let readyAt = now;
  for (const image of missing) {
    const key = `${nodeName}|${image}`;
    let done = pulls.get(key);
    if (done === undefined) {
      const pullSeconds = durationOf(latency, 'imagePullSeconds');
      done = now + pullSeconds * 1000;
      pulls.set(key, done);
      recordEvent(store, clock, {
        involved: { ...pod, apiVersion: 'v1', kind: 'Pod' },
        reason: 'Pulling',
        message: `Pulling image "${image}"`,
        component: 'kubelet',
        host: nodeName,
      });
      scheduler.after(pullSeconds, `kube:pull:${key}`, () => {
        pulls.delete(key);
        safeMutate(state, 'nodes', undefined, nodeName, (target) => {
          const images = Array.isArray(statusOf(target).images) ? (statusOf(target).images as object[]) : [];
          target.status = {
            ...statusOf(target),
            images: [...images, { names: [image], sizeBytes: 52_428_800 }],
          };
        });
      });
    }
    readyAt = Math.max(readyAt, done);
  }
  safeMutate(state, 'pods', pod.metadata.namespace, pod.metadata.name, (target) => {
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
    startPod(state, namespace, name, uid),
  );
}

function startPod(state: ControllerState, namespace: string, name: string, uid: string | undefined): void {
  const { store, clock } = state;
  const pod = store.get('pods', namespace, name);
  if (!pod || pod.metadata.uid !== uid || isTerminating(pod) || podPhase(pod) !== 'Pending') return;
  const nodeName = nodeNameOf(pod);
  const node = nodeName === undefined ? undefined : store.get('nodes', undefined, nodeName);
  if (!node || !isNodeReady(node)) return; // retried when the node turns Ready
  const missing = missingImages(pod, node);
  if (missing.length > 0) {
    pullImages(state, pod, node, missing);
    return;
  }
  const now = timestamp(clock.nowMs());
  const hostIP = nodeAddress(node);
  state.ipCounter += 1;
  const ipCounter = state.ipCounter;
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

/** Starts a Pending pod after the simulated pod start latency (once per pod uid). */
export function scheduleStart(state: ControllerState, pod: KubeObject): void {
  enqueue(
    state,
    `start:${pod.metadata.namespace}/${pod.metadata.name}:${pod.metadata.uid}`,
    () => durationOf(state.latency, 'podStartSeconds'),
    () => startPod(state, pod.metadata.namespace ?? '', pod.metadata.name, pod.metadata.uid),
  );
}

function finishTermination(
  state: ControllerState,
  namespace: string,
  name: string,
  uid: string | undefined,
): void {
  const { store } = state;
  const pod = store.get('pods', namespace, name);
  if (!pod || pod.metadata.uid !== uid || !isTerminating(pod)) return;
  const nodeName = nodeNameOf(pod);
  const node = nodeName === undefined ? undefined : store.get('nodes', undefined, nodeName);
  // A kubelet that is down cannot confirm termination: the pod stays Terminating until its node is
  // back (or someone deletes it with grace 0), exactly what operators see with stopped VMs.
  if (node && !isNodeReady(node)) return;
  store.remove('pods', namespace, name);
}

/** Deletes a pod the way the API server does: at once when unbound or grace 0, else marks it terminating. */
export function deletePod(
  state: ControllerState,
  namespace: string,
  name: string,
  gracePeriodSeconds: number | undefined,
): KubeObject | undefined {
  const { store, clock } = state;
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
  enqueue(state, `terminate:${namespace}/${name}:${pod.metadata.uid}:${grace}`, grace, () =>
    finishTermination(state, namespace, name, pod.metadata.uid),
  );
  return updated;
}

/** The kubelet re-creates a static pod's mirror as long as the node runs. */
export function recreateMirrorPod(state: ControllerState, pod: KubeObject): void {
  const { store } = state;
  const nodeName = nodeNameOf(pod);
  enqueue(
    state,
    `mirror:${pod.metadata.namespace}/${pod.metadata.name}`,
    () => durationOf(state.latency, 'podStartSeconds'),
    () => {
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
    },
  );
}
