/**
 * Prep runs of a simulated cluster: recognises the one-shot power-off pod on a node (and the same
 * script sent through Run Command), records what the script does, completes the pod and powers the VM
 * off from the guest, on the latency profile's timing.
 */
import type { ComputeState, InstanceInfo } from '../arm/compute-state.js';
import type { KubeObject, KubeStore, LatencyProfile } from '../contracts.js';
import {
  isTerminating,
  nodeNameOf as podNodeName,
  podPhase,
  specOf,
  statusOf,
  timestamp,
} from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import { nodeNameOf } from './nodes.js';
import { isHostPowerOffPod, podScript, type PrepEffect, prepEffects } from './prep-pod.js';

export interface PrepRecord {
  at: string;
  cluster: string;
  via: 'pod' | 'run-command';
  namespace?: string;
  pod?: string;
  nodeName: string;
  instanceId: string;
  vmId: string;
  script: string;
  effects: PrepEffect[];
}

export interface PrepRunsOptions {
  /** The cluster's name, for the records. */
  cluster: string;
  store: KubeStore;
  clock: WorldClock;
  compute: ComputeState;
  latency: LatencyProfile;
  /** The instance behind a node. */
  instanceOfNode: (nodeName: string) => InstanceInfo | undefined;
}

export class PrepRuns {
  readonly records: PrepRecord[] = [];
  private readonly prepPods = new Map<string, () => void>();
  private readonly name: string;
  private readonly store: KubeStore;
  private readonly clock: WorldClock;
  private readonly compute: ComputeState;
  private readonly latency: LatencyProfile;

  constructor(private readonly options: PrepRunsOptions) {
    this.name = options.cluster;
    this.store = options.store;
    this.clock = options.clock;
    this.compute = options.compute;
    this.latency = options.latency;
  }

  /** A pod was created or changed: a bound power-off pod gets its run scheduled. */
  onPod(pod: KubeObject): void {
    this.watchPrepPod(pod);
  }

  /** A pod was deleted: its pending run, if any, is dropped. */
  onPodDeleted(object: KubeObject): void {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name}/${object.metadata.uid ?? ''}`;
    this.prepPods.get(key)?.();
    this.prepPods.delete(key);
  }

  private instanceOfNode(nodeName: string): InstanceInfo | undefined {
    return this.options.instanceOfNode(nodeName);
  }

  private watchPrepPod(pod: KubeObject): void {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}/${pod.metadata.uid ?? ''}`;
    if (this.prepPods.has(key) || isTerminating(pod)) return;
    const phase = podPhase(pod);
    if (phase === 'Succeeded' || phase === 'Failed') return;
    if (podNodeName(pod) === undefined || !isHostPowerOffPod(pod)) return;
    const createdMs = Date.parse(pod.metadata.creationTimestamp ?? '') || this.clock.nowMs();
    const dueMs = createdMs + this.latency.prepPodSeconds * 1000;
    this.prepPods.set(
      key,
      this.clock.at(dueMs, `prep pod ${pod.metadata.name}`, () =>
        this.runPrepPod(pod.metadata.namespace ?? '', pod.metadata.name, pod.metadata.uid),
      ),
    );
  }

  private runPrepPod(namespace: string, name: string, uid: string | undefined): void {
    const pod = this.store.get('pods', namespace, name);
    if (!pod || pod.metadata.uid !== uid || isTerminating(pod)) return;
    const nodeName = podNodeName(pod);
    if (nodeName === undefined) return;
    if (podPhase(pod) !== 'Running') {
      // Not started yet (node not Ready): the script runs once the kubelet starts it.
      const key = `${namespace}/${name}/${uid ?? ''}`;
      this.prepPods.set(
        key,
        this.clock.after(this.latency.podStartSeconds || 1, `prep pod ${name}`, () =>
          this.runPrepPod(namespace, name, uid),
        ),
      );
      return;
    }
    const instance = this.instanceOfNode(nodeName);
    if (!instance) return;
    const script = podScript(pod);
    const nowMs = this.clock.nowMs();
    this.records.push({
      at: timestamp(nowMs),
      cluster: this.name,
      via: 'pod',
      namespace,
      pod: name,
      nodeName,
      instanceId: instance.id,
      vmId: instance.vmId,
      script,
      effects: prepEffects(script),
    });
    const finishedAt = timestamp(nowMs);
    this.store.mutate('pods', namespace, name, (target) => {
      const status = statusOf(target);
      const containers = Array.isArray(specOf(target).containers)
        ? (specOf(target).containers as { name?: string; image?: string }[])
        : [];
      status.phase = 'Succeeded';
      status.conditions = (
        Array.isArray(status.conditions) ? (status.conditions as { type: string }[]) : []
      ).map((condition) =>
        condition.type === 'Ready' || condition.type === 'ContainersReady'
          ? { ...condition, status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt }
          : condition,
      );
      status.containerStatuses = containers.map((container) => ({
        name: container.name ?? 'main',
        image: container.image ?? '',
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode: 0,
            reason: 'Completed',
            startedAt: status.startTime ?? finishedAt,
            finishedAt,
          },
        },
      }));
      target.status = status;
    });
    this.compute.powerOffInstance(instance.id, { cause: 'guest' });
  }

  /** Run Command on an instance of this cluster: record it like a prep pod; a power-off in it stops the VM. */
  handleRunCommand(instance: InstanceInfo, script: string): void {
    const nowMs = this.clock.nowMs();
    this.records.push({
      at: timestamp(nowMs),
      cluster: this.name,
      via: 'run-command',
      nodeName: nodeNameOf(instance),
      instanceId: instance.id,
      vmId: instance.vmId,
      script,
      effects: prepEffects(script),
    });
    if (prepEffects(script).includes('powers-off')) {
      // The guest powers itself off once the agent has run the script.
      this.clock.after(1, `run command power-off ${instance.name}`, () => {
        if (this.compute.getInstance(instance.id)?.powerState === 'running') {
          this.compute.powerOffInstance(instance.id, { cause: 'guest' });
        }
      });
    }
  }

  stop(): void {
    for (const cancel of this.prepPods.values()) cancel();
  }
}
