/**
 * Events as the cluster's components record them, for the changes operators look for after a drain:
 * the kubelet's `NodeNotSchedulable` / `NodeSchedulable` when a node is cordoned or uncordoned and
 * `Killing` when a pod's containers are stopped; the ReplicaSet and DaemonSet controllers'
 * `SuccessfulCreate` for each pod they create; the scheduler's `Scheduled` for each pod it binds.
 * `kubectl get events` and `kubectl describe` read them like a real cluster's.
 */
import { createHash } from 'node:crypto';

import type { KubeObject, KubeStore, SimClock } from '../contracts.js';
import { timestamp } from './objects.js';

export interface EventSpec {
  /** The object the event is about. */
  involved: KubeObject;
  /** `spec.containers{name}` for container events. */
  fieldPath?: string;
  reason: string;
  message: string;
  /** Reporting component, e.g. `kubelet`. */
  component: string;
  /** The node the component runs on. */
  host?: string;
  type?: 'Normal' | 'Warning';
}

let sequence = 0;

/**
 * How long an Event lives: the API server stores each one with a lease of `--event-ttl`, one hour by
 * default (kubernetes/kubernetes `cmd/kube-apiserver/app/options/options.go`, `EventTTL: 1 * time.Hour`),
 * and etcd deletes it when the lease ends.
 */
export const EVENT_TTL_MS = 60 * 60 * 1000;

/** The events the components recorded in a store, oldest first, for their expiry. */
const recorded = new WeakMap<KubeStore, { expiresMs: number; namespace: string; name: string }[]>();

/**
 * Deletes the recorded events whose hour has passed (watchers see them DELETED, as after etcd's lease
 * expiry). Done when the next event is recorded: a cluster that records nothing keeps its old events.
 */
function expireEvents(store: KubeStore, nowMs: number): void {
  const queue = recorded.get(store);
  if (queue === undefined) return;
  let expired = 0;
  while (expired < queue.length && (queue[expired]?.expiresMs ?? Infinity) <= nowMs) {
    const event = queue[expired];
    if (event !== undefined) store.remove('events', event.namespace, event.name);
    expired += 1;
  }
  if (expired > 0) queue.splice(0, expired);
}

/** Stores an event and remembers when it expires. */
function createEvent(store: KubeStore, clock: SimClock, event: KubeObject): KubeObject {
  const nowMs = clock.nowMs();
  expireEvents(store, nowMs);
  const created = store.create('events', event);
  let queue = recorded.get(store);
  if (queue === undefined) {
    queue = [];
    recorded.set(store, queue);
  }
  queue.push({
    expiresMs: nowMs + EVENT_TTL_MS,
    namespace: created.metadata.namespace ?? 'default',
    name: created.metadata.name,
  });
  return created;
}

/** Stores one Event (in the object's namespace; cluster-scoped objects' events go to `default`). */
export function recordEvent(store: KubeStore, clock: SimClock, spec: EventSpec): KubeObject {
  const { involved } = spec;
  const namespace = involved.metadata.namespace ?? 'default';
  sequence += 1;
  const suffix = createHash('sha256')
    .update(`${involved.metadata.uid ?? involved.metadata.name}:${spec.reason}:${clock.nowMs()}:${sequence}`)
    .digest('hex')
    .slice(0, 16);
  const at = timestamp(clock.nowMs());
  return createEvent(store, clock, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${involved.metadata.name}.${suffix}`, namespace },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      name: involved.metadata.name,
      ...(involved.metadata.namespace === undefined ? {} : { namespace: involved.metadata.namespace }),
      ...(involved.metadata.uid === undefined ? {} : { uid: involved.metadata.uid }),
      ...(spec.fieldPath === undefined ? {} : { fieldPath: spec.fieldPath }),
    },
    reason: spec.reason,
    message: spec.message,
    source: { component: spec.component, ...(spec.host === undefined ? {} : { host: spec.host }) },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    type: spec.type ?? 'Normal',
    eventTime: null,
    reportingComponent: spec.component,
    reportingInstance: spec.host ?? '',
  });
}

/**
 * The scheduler's `Scheduled` event for a pod it bound. The scheduler records through the
 * events.k8s.io/v1 recorder (kubernetes/kubernetes `pkg/scheduler/schedule_one.go`, `finishBinding`:
 * `Eventf(assumed, nil, Normal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v")`), so the
 * core/v1 view has `eventTime`, `action`, `reportingComponent` and `reportingInstance`, no
 * first/last timestamps, no count and an empty `source` (client-go `tools/events/event_recorder.go`,
 * `makeEvent`); kubectl shows `default-scheduler` from `reportingComponent` when `source` is empty.
 */
export function recordScheduled(
  store: KubeStore,
  clock: SimClock,
  pod: KubeObject,
  nodeName: string,
): KubeObject {
  const namespace = pod.metadata.namespace ?? 'default';
  sequence += 1;
  const nowMs = clock.nowMs();
  return createEvent(store, clock, {
    apiVersion: 'v1',
    kind: 'Event',
    // `<regarding name>.<hex of the time in ns>`, like the recorder; the sequence keeps names apart
    // when one simulated instant binds many pods.
    metadata: {
      name: `${pod.metadata.name}.${(BigInt(nowMs) * 1_000_000n + BigInt(sequence)).toString(16)}`,
      namespace,
    },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      name: pod.metadata.name,
      namespace,
      ...(pod.metadata.uid === undefined ? {} : { uid: pod.metadata.uid }),
      ...(pod.metadata.resourceVersion === undefined
        ? {}
        : { resourceVersion: pod.metadata.resourceVersion }),
    },
    reason: 'Scheduled',
    message: `Successfully assigned ${namespace}/${pod.metadata.name} to ${nodeName}`,
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    type: 'Normal',
    eventTime: new Date(nowMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    action: 'Binding',
    reportingComponent: 'default-scheduler',
    reportingInstance: SCHEDULER_INSTANCE,
  });
}

/** The scheduler's instance name: `<scheduler name>-<host name>`; the simulated host is `control-plane`. */
const SCHEDULER_INSTANCE = 'default-scheduler-control-plane';

/**
 * A controller's `SuccessfulCreate` for a pod it created: `Created pod: <name>` about the owner, as
 * `RealPodControl` records it (kubernetes/kubernetes `pkg/controller/controller_utils.go`,
 * `createPods`), from `replicaset-controller` or `daemonset-controller` (the `EventSource` each
 * controller's recorder is made with).
 */
export function recordSuccessfulCreate(
  store: KubeStore,
  clock: SimClock,
  owner: KubeObject,
  kind: 'ReplicaSet' | 'DaemonSet',
  pod: KubeObject,
): KubeObject {
  return recordEvent(store, clock, {
    involved: { ...owner, apiVersion: 'apps/v1', kind },
    reason: 'SuccessfulCreate',
    message: `Created pod: ${pod.metadata.name}`,
    component: kind === 'ReplicaSet' ? 'replicaset-controller' : 'daemonset-controller',
  });
}
