/**
 * Prep runs of a simulated cluster: the one-shot privileged pod on a node (and the same script sent
 * through Run Command) executed over the node's OS disk model (host-script.ts). Timing follows what a
 * real pod does: the kubelet pulls the image when the node lacks it (the pod is Pending meanwhile —
 * where kamino's 49 s went), the script runs right after the container starts and takes
 * `prepScriptSeconds`, then the guest powers off. A pod deleted before its script ran changes nothing;
 * deleted after, the host has already been told to power off and does.
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
import { type HostScriptRun, podHostScript, runHostScript } from './host-script.js';
import type { NodeIdentities } from './node-identity.js';
import { nodeNameOf } from './nodes.js';
import { podScript, powersHostOff, type PrepEffect } from './prep-pod.js';

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
  /** Whether the script ran to its end (else `error` says where it stopped). */
  outcome: 'succeeded' | 'failed';
  error?: string;
  /** Files the script removed or emptied on the disk. */
  changed: string[];
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
  identities: NodeIdentities;
}

interface Container {
  name?: string;
  image?: string;
  command?: unknown;
  args?: unknown;
  securityContext?: { privileged?: unknown };
}

/** The first privileged container's command line, when the pod is a host (hostPID, privileged) pod. */
function hostCommand(pod: KubeObject): { container: Container; words: string[] } | undefined {
  if (specOf(pod).hostPID !== true) return undefined;
  const containers = Array.isArray(specOf(pod).containers) ? (specOf(pod).containers as Container[]) : [];
  const container = containers.find((candidate) => candidate.securityContext?.privileged === true);
  if (!container) return undefined;
  const words = [
    ...(Array.isArray(container.command) ? container.command.map(String) : []),
    ...(Array.isArray(container.args) ? container.args.map(String) : []),
  ];
  return { container, words };
}

/** A pod the world runs on the host: privileged, hostPID, entering PID 1's namespaces or powering off. */
export function isHostScriptPod(pod: KubeObject): boolean {
  const command = hostCommand(pod);
  if (!command) return false;
  return command.words[0] === 'nsenter' || powersHostOff(podScript(pod));
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

  /**
   * A pod was created or changed: a host pod whose container has started gets its script run; any other
   * run-once pod (restartPolicy Never, e.g. the canary's check pod) ends by its command (oneShotExit).
   */
  onPod(pod: KubeObject): void {
    const key = podKey(pod);
    if (this.prepPods.has(key) || isTerminating(pod)) return;
    if (podPhase(pod) !== 'Running' || podNodeName(pod) === undefined) return;
    if (!isHostScriptPod(pod)) {
      if (specOf(pod).restartPolicy !== 'Never') return;
      this.prepPods.set(
        key,
        this.clock.after(this.latency.prepScriptSeconds, `one-shot pod ${pod.metadata.name}`, () =>
          this.endOneShotPod(pod.metadata.namespace ?? '', pod.metadata.name, pod.metadata.uid),
        ),
      );
      return;
    }
    this.prepPods.set(
      key,
      this.clock.after(this.latency.prepScriptSeconds, `prep script ${pod.metadata.name}`, () =>
        this.runPod(pod.metadata.namespace ?? '', pod.metadata.name, pod.metadata.uid),
      ),
    );
  }

  /** A pod was deleted: a script that has not run yet never will. */
  onPodDeleted(object: KubeObject): void {
    const key = podKey(object);
    this.prepPods.get(key)?.();
    this.prepPods.delete(key);
  }

  private runPod(namespace: string, name: string, uid: string | undefined): void {
    const pod = this.store.get('pods', namespace, name);
    if (!pod || pod.metadata.uid !== uid || isTerminating(pod)) return;
    const nodeName = podNodeName(pod);
    const instance = nodeName === undefined ? undefined : this.options.instanceOfNode(nodeName);
    const command = hostCommand(pod);
    if (!instance || nodeName === undefined || !command) return;
    const parsed = podHostScript(command.words);
    const script = parsed?.script ?? podScript(pod);
    let run: HostScriptRun;
    const disk = this.options.identities.diskOf(instance);
    if (!parsed) {
      run = this.refused(
        disk,
        `the container command is not 'nsenter --target 1 --mount … -- sh -c SCRIPT' (or 'sh -c SCRIPT'): ${command.words.join(' ')}`,
      );
    } else if (!parsed.entersHostMountNamespace) {
      run = this.refused(
        disk,
        "the script runs in the container's mount namespace, not the host's: nothing it does reaches the host disk (use nsenter --target 1 --mount …)",
      );
    } else {
      run = runHostScript(script, disk ?? { files: {}, images: [] });
    }
    if (instance.osDiskId && disk) this.compute.setDiskContent(instance.osDiskId, run.content);
    this.record(instance, nodeName, 'pod', script, run, { namespace, pod: name });
    this.finishPod(namespace, name, run);
    if (run.poweredOff) this.compute.powerOffInstance(instance.id, { cause: 'guest' });
  }

  private endOneShotPod(namespace: string, name: string, uid: string | undefined): void {
    const pod = this.store.get('pods', namespace, name);
    if (!pod || pod.metadata.uid !== uid || isTerminating(pod) || podPhase(pod) !== 'Running') return;
    const containers = Array.isArray(specOf(pod).containers) ? (specOf(pod).containers as Container[]) : [];
    const words = containers.flatMap((container) => [
      ...(Array.isArray(container.command) ? container.command.map(String) : []),
      ...(Array.isArray(container.args) ? container.args.map(String) : []),
    ]);
    const code = oneShotExit(words);
    this.finishPod(
      namespace,
      name,
      {
        content: { files: {}, images: [] },
        ok: code === 0,
        ...(code === 0 ? {} : { error: `the command exited with ${code}: ${words.join(' ')}` }),
        poweredOff: false,
        changed: [],
        effects: [],
      },
      code,
    );
  }

  private refused(disk: HostScriptRun['content'] | undefined, error: string): HostScriptRun {
    return {
      content: disk ?? { files: {}, images: [] },
      ok: false,
      error,
      poweredOff: false,
      changed: [],
      effects: [],
    };
  }

  private record(
    instance: InstanceInfo,
    nodeName: string,
    via: PrepRecord['via'],
    script: string,
    run: HostScriptRun,
    pod: { namespace: string; pod: string } | undefined,
  ): void {
    this.records.push({
      at: timestamp(this.clock.nowMs()),
      cluster: this.name,
      via,
      ...(pod ?? {}),
      nodeName,
      instanceId: instance.id,
      vmId: instance.vmId,
      script,
      effects: [
        ...(via === 'pod' && run.ok ? (['enters-host-namespaces'] as PrepEffect[]) : []),
        ...run.effects,
      ],
      outcome: run.ok ? 'succeeded' : 'failed',
      ...(run.error === undefined ? {} : { error: run.error }),
      changed: run.changed,
    });
  }

  /** The container ends: exit 0 (the pod Succeeded), or 127 with the reason (the pod Failed). */
  private finishPod(namespace: string, name: string, run: HostScriptRun, exitCode?: number): void {
    const finishedAt = timestamp(this.clock.nowMs());
    this.store.mutate('pods', namespace, name, (target) => {
      const status = statusOf(target);
      const containers = Array.isArray(specOf(target).containers)
        ? (specOf(target).containers as Container[])
        : [];
      status.phase = run.ok ? 'Succeeded' : 'Failed';
      if (!run.ok) status.message = run.error;
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
            exitCode: exitCode ?? (run.ok ? 0 : 127),
            reason: run.ok ? 'Completed' : 'Error',
            ...(run.ok ? {} : { message: run.error }),
            startedAt: status.startTime ?? finishedAt,
            finishedAt,
          },
        },
      }));
      target.status = status;
    });
  }

  /** Run Command on an instance: the script runs as root on the host; a power-off in it stops the VM. */
  handleRunCommand(instance: InstanceInfo, script: string): { stdout: string; stderr: string } {
    const disk = this.options.identities.diskOf(instance);
    const run = runHostScript(script, disk ?? { files: {}, images: [] });
    if (instance.osDiskId && disk) this.compute.setDiskContent(instance.osDiskId, run.content);
    this.record(instance, nodeNameOf(instance), 'run-command', script, run, undefined);
    if (run.poweredOff) {
      // The guest powers itself off once the agent has run the script.
      this.clock.after(1, `run command power-off ${instance.name}`, () => {
        if (this.compute.getInstance(instance.id)?.powerState === 'running') {
          this.compute.powerOffInstance(instance.id, { cause: 'guest' });
        }
      });
    }
    return run.ok ? { stdout: 'Enable succeeded', stderr: '' } : { stdout: '', stderr: run.error ?? '' };
  }

  stop(): void {
    for (const cancel of this.prepPods.values()) cancel();
  }
}

function podKey(pod: KubeObject): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name}/${pod.metadata.uid ?? ''}`;
}

/**
 * How a run-once pod's command ends in the simulator (sim/README.md "One-shot pods"): `true` → 0,
 * `false` → 1, a shell line ending in `exit N` → N; anything else is taken to succeed (the check ran).
 */
export function oneShotExit(words: readonly string[]): number {
  const last = words.at(-1)?.trim() ?? '';
  if (words.length === 1 && last === 'false') return 1;
  if (words.length === 1 && last === 'true') return 0;
  const exit = /(?:^|[;&|\s])exit\s+(\d{1,3})\s*$/.exec(last);
  if (exit?.[1] !== undefined) return Number(exit[1]);
  if (/(?:^|[;&|\s])false\s*$/.test(last)) return 1;
  return 0;
}
