/**
 * core/v1 Events as the kubelet records them, for the changes operators look for after a drain:
 * `NodeNotSchedulable` / `NodeSchedulable` when a node is cordoned or uncordoned, and `Killing` when a
 * pod's containers are stopped (an eviction or a graceful delete). `kubectl get events` and
 * `kubectl describe` read them like a real cluster's.
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
  return store.create('events', {
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
