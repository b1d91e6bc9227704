/**
 * Prep runs of a simulated cluster: the one-shot privileged pods on a node — the drain-and-stop prep pod,
 * live capture's freeze and scrub pods — (and scripts sent through Run Command) run as processes of the
 * host (host-shell.ts) over its model (host-runtime.ts). Timing follows what a real pod does: the kubelet
 * pulls the image when the node lacks it (the pod is Pending meanwhile — where kamino's 49 s went); the
 * script starts with its container; a segment of it that does disk work takes `prepScriptSeconds`, one
 * that only sets things up (traps, timers, a freeze) takes no time; `sleep`/`wait` suspend it.
 *
 * Deleting the pod: with a grace period, the kubelet sends TERM to the container's PID 1 — the shell when
 * the pod enters only the host's mount namespace, nsenter (which ignores it) when it forks into the host's
 * PID namespace — and the pod is gone once the script has ended; with grace 0 (or at the end of the grace)
 * the process is killed, no trap runs. A pod deleted before its script ran changes nothing; one whose
 * script ended with a power-off has told the host, which powers off. A host that shuts down kills its
 * processes; their pods fail.
 */
import type { ComputeState, InstanceInfo } from '../arm/compute-state.js';
import { durationOf, type KubeObject, type KubeStore, type LatencyProfile } from '../contracts.js';
import { messageOf } from '../errors.js';
import {
  isTerminating,
  nodeNameOf as podNodeName,
  podPhase,
  specOf,
  statusOf,
  timestamp,
} from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import { type HostEffects, noEffects } from './host-commands.js';
import type { HostRuntimes } from './host-runtime.js';
import { podHostScript } from './host-script.js';
import { HostShell, type ShellStep } from './host-shell.js';
import type { NodeIdentities } from './node-identity.js';
import { nodeNameOf } from './nodes.js';
import { terminationMessage } from './one-shot-output.js';
import { runOneShot } from './one-shot-run.js';
import { PATHS } from './os-disk.js';
import { podScript, powersHostOff, type PrepEffect } from './prep-pod.js';
import { type RealPodRuns, startRealPodRun } from './real-pod-runs.js';
import { findBwrap, type RealShellResult } from './real-shell.js';
import { applyRun, podArgv, runOnHost } from './real-shell-run.js';
import type { StagedRun } from './staged-run.js';

/**
 * Which shell takes a host script: the real one (bubblewrap over the node's disk), or, when bwrap is not
 * installed, the modelled shell with what its grammar knows, so the demo runs on a machine without
 * bubblewrap, and a script beyond the grammar fails naming the package (WITHOUT_BWRAP).
 */
function shellOf(): 'real' | 'modelled' {
  return findBwrap() === null ? 'modelled' : 'real';
}

const WITHOUT_BWRAP =
  "; the simulator's real shell would run it, but 'bwrap' is not installed on this machine: install Debian's bubblewrap package (apt-get install -y bubblewrap) and run again";

function withBwrapHint(error: string): string {
  return findBwrap() === null ? `${error}${WITHOUT_BWRAP}` : error;
}

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
  /** Files the script removed or emptied, as paths on the disk they were on. */
  changed: string[];
  /**
   * Which shell took the script: `real` (sh in a bubblewrap sandbox over the disk's tree, real-shell.ts)
   * or `modelled` (the grammar of host-shell.ts, when bwrap is not installed).
   */
  shell: 'real' | 'modelled';
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
  hosts: HostRuntimes;
}

interface Container {
  name?: string;
  image?: string;
  command?: unknown;
  args?: unknown;
  env?: unknown;
  terminationMessagePolicy?: unknown;
  securityContext?: { privileged?: unknown };
}

/** A script running for a pod. */
interface Process {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string | undefined;
  readonly instance: InstanceInfo;
  readonly nodeName: string;
  readonly script: string;
  readonly shell: HostShell;
  /** TERM reaches the shell (the pod does not fork into the host's PID namespace). */
  readonly receivesTerm: boolean;
  readonly effects: HostEffects;
  timer?: () => void;
  /** Suspended in `wait` (a TERM trap runs at once). */
  waiting: boolean;
  signalled: boolean;
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
  return /(^|\/)nsenter$/.test(command.words[0] ?? '') || powersHostOff(podScript(pod));
}

export class PrepRuns {
  readonly records: PrepRecord[] = [];
  private readonly processes = new Map<string, Process>();
  /** Pods whose script was refused, pending their failure. */
  private readonly refusals = new Map<string, () => void>();
  /** Scripts in the real shell, pending their run or their end. */
  private readonly realRuns = new Map<string, () => void>();
  /** Scripts with a TERM trap that sleep, in the real shell over simulated time (staged-run.ts). */
  private readonly stagedRuns = new Map<string, StagedRun>();
  /** Run-once pods that are not host pods (check pods), pending their end. */
  private readonly oneShots = new Map<string, () => void>();
  private readonly name: string;
  private readonly store: KubeStore;
  private readonly clock: WorldClock;
  private readonly compute: ComputeState;
  private readonly latency: LatencyProfile;
  private readonly hosts: HostRuntimes;
  private readonly realPods: RealPodRuns;

  constructor(private readonly options: PrepRunsOptions) {
    this.name = options.cluster;
    this.store = options.store;
    this.clock = options.clock;
    this.compute = options.compute;
    this.latency = options.latency;
    this.hosts = options.hosts;
    this.realPods = {
      ...options,
      realRuns: this.realRuns,
      stagedRuns: this.stagedRuns,
      ended: (pod, instance, nodeName, script, result, effects) =>
        this.endReal(pod, instance, nodeName, script, result, effects),
    };
  }

  /**
   * A pod was created or changed: a host pod whose container has started runs its script (TERM on
   * deletion); any other run-once pod (restartPolicy Never, e.g. the canary's check pod) ends by its
   * command (one-shot-run.ts).
   */
  onPod(pod: KubeObject): void {
    const key = podKey(pod);
    const running = this.processes.get(key);
    if (running) {
      if (isTerminating(pod)) this.terminate(running);
      return;
    }
    const staged = this.stagedRuns.get(key);
    if (staged) {
      if (isTerminating(pod)) staged.term();
      return;
    }
    const real = this.realRuns.get(key);
    if (real) {
      // TERM: the shell has no trap the world runs in the real shell; it ends, and the kubelet confirms.
      if (isTerminating(pod)) {
        real();
        this.realRuns.delete(key);
        this.store.remove('pods', pod.metadata.namespace ?? '', pod.metadata.name);
      }
      return;
    }
    if (this.refusals.has(key) || this.oneShots.has(key) || isTerminating(pod)) return;
    if (podPhase(pod) !== 'Running' || podNodeName(pod) === undefined) return;
    if (!isHostScriptPod(pod)) {
      if (specOf(pod).restartPolicy !== 'Never') return;
      this.oneShots.set(
        key,
        this.clock.after(
          durationOf(this.latency, 'prepScriptSeconds'),
          `one-shot pod ${pod.metadata.name}`,
          () => this.endOneShotPod(pod.metadata.namespace ?? '', pod.metadata.name, pod.metadata.uid),
        ),
      );
      return;
    }
    this.start(pod, key);
  }

  /** A pod was deleted (grace 0, or the grace ended): its process is killed, no trap runs. */
  onPodDeleted(object: KubeObject): void {
    const key = podKey(object);
    this.refusals.get(key)?.();
    this.refusals.delete(key);
    this.realRuns.get(key)?.();
    this.realRuns.delete(key);
    this.stagedRuns.get(key)?.kill();
    this.stagedRuns.delete(key);
    const process = this.processes.get(key);
    if (!process) return;
    process.timer?.();
    process.shell.kill();
    this.processes.delete(key);
  }

  /** The host shuts down: its processes die with it; their pods fail. */
  onHostDown(instance: InstanceInfo): void {
    for (const process of [...this.processes.values()]) {
      if (process.instance.vmId !== instance.vmId) continue;
      process.timer?.();
      process.shell.kill();
      this.processes.delete(process.key);
      this.finish(process, { kind: 'ended', ok: false, error: 'the host shut down while the script ran' });
    }
  }

  private start(pod: KubeObject, key: string): void {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name;
    const uid = pod.metadata.uid;
    const nodeName = podNodeName(pod);
    const instance = nodeName === undefined ? undefined : this.options.instanceOfNode(nodeName);
    const command = hostCommand(pod);
    if (!instance || nodeName === undefined || !command) return;
    const parsed = podHostScript(command.words);
    const script = parsed?.script ?? podScript(pod);
    if (shellOf() === 'real') {
      const target = podArgv(command.words);
      if ('refused' in target) this.refuse(key, pod, instance, nodeName, script, target.refused, 'real');
      else startRealPodRun(this.realPods, { pod, key, instance, nodeName, script, argv: target.argv });
      return;
    }
    const refuse = (error: string): void =>
      this.refuse(key, pod, instance, nodeName, script, withBwrapHint(error), 'modelled');
    if (!parsed) {
      refuse(
        `the container command is not 'nsenter --target 1 --mount … -- sh -c SCRIPT' (or 'sh -c SCRIPT'): ${command.words.join(' ')}`,
      );
      return;
    }
    if (!parsed.entersHostMountNamespace) {
      refuse(
        "the script runs in the container's mount namespace, not the host's: nothing it does reaches the host disk (use nsenter --target 1 --mount …)",
      );
      return;
    }
    let shell: HostShell;
    try {
      shell = new HostShell(script);
    } catch (error) {
      refuse(`the script cannot run on the simulated host: ${messageOf(error)}`);
      return;
    }
    const process: Process = {
      key,
      namespace,
      name,
      uid,
      instance,
      nodeName,
      script,
      shell,
      receivesTerm: !parsed.entersHostPidNamespace,
      effects: noEffects(),
      waiting: false,
      signalled: false,
    };
    this.processes.set(key, process);
    this.scheduleSegment(process, this.clock.nowMs());
  }

  /** The pod fails `prepScriptSeconds` after its container started, with `error`; nothing ran. */
  private refuse(
    key: string,
    pod: KubeObject,
    instance: InstanceInfo,
    nodeName: string,
    script: string,
    error: string,
    shell: PrepRecord['shell'],
  ): void {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name;
    const uid = pod.metadata.uid;
    this.refusals.set(
      key,
      this.clock.after(durationOf(this.latency, 'prepScriptSeconds'), `prep script ${name}`, () => {
        this.refusals.delete(key);
        const current = this.store.get('pods', namespace, name);
        if (!current || current.metadata.uid !== uid || isTerminating(current)) return;
        this.record(
          instance,
          nodeName,
          'pod',
          script,
          { ok: false, error, changed: [], effects: [], shell },
          { namespace, pod: name },
        );
        this.finishPod(namespace, name, false, error);
      }),
    );
  }

  /** A real-shell run ended (real-pod-runs.ts): the record, and the pod ends (or its deletion is confirmed). */
  private endReal(
    pod: { readonly namespace: string; readonly name: string },
    instance: InstanceInfo,
    nodeName: string,
    script: string,
    result: RealShellResult,
    effects: HostEffects,
  ): void {
    this.record(
      instance,
      nodeName,
      'pod',
      script,
      {
        ok: result.ok,
        ...(result.error === undefined ? {} : { error: result.error }),
        changed: effects.changed,
        effects: effectsOf(effects),
        shell: 'real',
      },
      { namespace: pod.namespace, pod: pod.name },
    );
    const current = this.store.get('pods', pod.namespace, pod.name);
    if (current && isTerminating(current)) {
      this.store.remove('pods', pod.namespace, pod.name);
      return;
    }
    this.finishPod(pod.namespace, pod.name, result.ok, result.error, result.exitCode);
    if (effects.poweredOff) this.compute.powerOffInstance(instance.id, { cause: 'guest' });
  }

  /** The next segment runs at `fromMs` plus the script time when it does disk work. */
  private scheduleSegment(process: Process, fromMs: number): void {
    const work = process.shell.nextSegmentDoesWork() ? durationOf(this.latency, 'prepScriptSeconds') : 0;
    const delay = Math.max(0, (fromMs - this.clock.nowMs()) / 1000) + work;
    process.timer = this.clock.after(delay, `prep script ${process.name}`, () => this.runSegment(process));
  }

  private runSegment(process: Process, signal = false): void {
    delete process.timer;
    process.waiting = false;
    if (this.processes.get(process.key) !== process) return;
    const pod = this.store.get('pods', process.namespace, process.name);
    if (!pod || pod.metadata.uid !== process.uid) return;
    const instance = this.compute.getInstance(process.instance.id);
    if (!instance || instance.powerState !== 'running') return;
    const saved = process.shell.save();
    const model = this.hosts.model(instance);
    const frozenBefore = model.frozen;
    const effects = noEffects();
    const now = this.clock.nowMs();
    const step = signal
      ? process.shell.signal('TERM', model, effects, now, true)
      : process.shell.run(model, effects, now);
    if (frozenBefore && model.frozen && effects.rootWritten) {
      // A write to a frozen filesystem blocks until the thaw; the segment runs again then.
      process.shell.restore(saved);
      this.hosts.whenThawed(instance.vmId, () => this.scheduleSegment(process, this.clock.nowMs()));
      return;
    }
    this.hosts.commit(instance, model, effects, { name: process.name, kind: 'script' });
    merge(process.effects, effects);
    if (step.kind === 'suspended') {
      process.waiting = step.interruptible;
      if (process.signalled && step.interruptible) {
        this.runSegment(process, true);
        return;
      }
      this.scheduleSegment(process, step.untilMs);
      return;
    }
    this.processes.delete(process.key);
    this.finish(process, step);
    if (effects.poweredOff || process.effects.poweredOff) {
      this.compute.powerOffInstance(instance.id, { cause: 'guest' });
    }
  }

  /** The kubelet's TERM (a graceful deletion). */
  private terminate(process: Process): void {
    if (process.signalled) return;
    process.signalled = true;
    if (!process.receivesTerm) return;
    if (process.waiting) {
      process.timer?.();
      this.runSegment(process, true);
      return;
    }
    // Running or in a foreground sleep: the trap (if any) runs when the current command ends.
    const model = this.hosts.model(process.instance);
    const step = process.shell.signal('TERM', model, noEffects(), this.clock.nowMs(), false);
    if (step.kind === 'ended') {
      // No TERM trap: the shell dies at once.
      process.timer?.();
      this.processes.delete(process.key);
      this.finish(process, step);
    }
  }

  private finish(process: Process, step: ShellStep): void {
    const ok = step.kind === 'ended' && step.ok;
    const error = step.kind === 'ended' ? step.error : undefined;
    this.record(
      process.instance,
      process.nodeName,
      'pod',
      process.script,
      {
        ok,
        ...(error === undefined ? {} : { error }),
        changed: process.effects.changed,
        effects: effectsOf(process.effects),
        shell: 'modelled',
      },
      { namespace: process.namespace, pod: process.name },
    );
    const pod = this.store.get('pods', process.namespace, process.name);
    if (!pod || pod.metadata.uid !== process.uid) return;
    if (isTerminating(pod)) {
      // The container exited: the kubelet confirms the deletion.
      this.store.remove('pods', process.namespace, process.name);
      return;
    }
    this.finishPod(process.namespace, process.name, ok, error);
  }

  private endOneShotPod(namespace: string, name: string, uid: string | undefined): void {
    const alive = (): boolean => {
      const pod = this.store.get('pods', namespace, name);
      return !!pod && pod.metadata.uid === uid && !isTerminating(pod) && podPhase(pod) === 'Running';
    };
    const pod = this.store.get('pods', namespace, name);
    if (!pod || !alive()) return;
    const containers = Array.isArray(specOf(pod).containers) ? (specOf(pod).containers as Container[]) : [];
    const container = containers[0];
    const words = [
      ...(Array.isArray(container?.command) ? container.command.map(String) : []),
      ...(Array.isArray(container?.args) ? container.args.map(String) : []),
    ];
    const env = Object.fromEntries(
      (Array.isArray(container?.env) ? (container.env as { name?: unknown; value?: unknown }[]) : [])
        .filter((entry) => typeof entry.name === 'string')
        .map((entry) => [String(entry.name), typeof entry.value === 'string' ? entry.value : '']),
    );
    const outcome = runOneShot({ words, env, podName: name, nowMs: this.clock.nowMs() });
    // As the kubelet reports it: the pod's own message stays empty; the container's termination message
    // is the end of its log only under FallbackToLogsOnError (one-shot-output.ts).
    const end = (): void => {
      if (!alive()) return;
      const code = outcome.exitCode;
      const message = terminationMessage(container?.terminationMessagePolicy, code, outcome.log);
      this.finishPod(namespace, name, code === 0, message, code, { podMessage: false });
    };
    if (outcome.sleptSeconds > 0) this.clock.after(outcome.sleptSeconds, `one-shot pod ${name} (sleep)`, end);
    else end();
  }

  private record(
    instance: InstanceInfo,
    nodeName: string,
    via: PrepRecord['via'],
    script: string,
    run: {
      ok: boolean;
      error?: string;
      changed: string[];
      effects: PrepEffect[];
      shell: PrepRecord['shell'];
    },
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
      shell: run.shell,
    });
  }

  /** The container ends: exit 0 (the pod Succeeded), or 127 with the reason (the pod Failed). */
  private finishPod(
    namespace: string,
    name: string,
    ok: boolean,
    error: string | undefined,
    exitCode?: number,
    options: { readonly podMessage: boolean } = { podMessage: true },
  ): void {
    const finishedAt = timestamp(this.clock.nowMs());
    this.store.mutate('pods', namespace, name, (target) => {
      const status = statusOf(target);
      const containers = Array.isArray(specOf(target).containers)
        ? (specOf(target).containers as Container[])
        : [];
      status.phase = ok ? 'Succeeded' : 'Failed';
      if (!ok && options.podMessage) status.message = error;
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
            exitCode: exitCode ?? (ok ? 0 : 127),
            reason: ok ? 'Completed' : 'Error',
            ...(ok || error === undefined ? {} : { message: error }),
            startedAt: status.startTime ?? finishedAt,
            finishedAt,
          },
        },
      }));
      target.status = status;
    });
  }

  /** Run Command on an instance: the script runs as root on the host, to its end; a power-off in it stops the VM. */
  handleRunCommand(instance: InstanceInfo, script: string): { stdout: string; stderr: string } {
    let shell: HostShell;
    let effects = noEffects();
    let step: ShellStep;
    // What the extension reports: the script's own stdout and stderr (run-command-extension-linux
    // main/cmds.go `enable`), never its exit status.
    let streams: { stdout: string; stderr: string };
    const shellKind = shellOf();
    if (shellKind === 'real') {
      // The real shell, as root on the host (no nsenter: the agent runs it there); a sleep takes no time.
      const model = this.hosts.model(instance);
      const result = runOnHost(['/bin/sh', '-c', script], model, nodeNameOf(instance), this.clock.nowMs(), {
        separateStreams: true,
      });
      effects = applyRun(model, result);
      this.hosts.commit(instance, model, effects, { name: 'run-command', kind: 'script' });
      step = { kind: 'ended', ok: result.ok, ...(result.error === undefined ? {} : { error: result.error }) };
      // bwrap itself failing (not installed) prints nothing of the script's: its reason is the stderr.
      streams = result.streams ?? { stdout: '', stderr: result.error ?? '' };
    } else
      try {
        shell = new HostShell(script);
        const model = this.hosts.model(instance);
        step = shell.run(model, effects, this.clock.nowMs());
        if (step.kind === 'suspended') {
          shell.kill();
          step = { kind: 'ended', ok: false, error: 'sleep is not supported in Run Command scripts' };
        }
        this.hosts.commit(instance, model, effects, { name: 'run-command', kind: 'script' });
        // The modelled shell prints what echo wrote; a failing command's own message stands for its stderr.
        streams = {
          stdout: shell.stdout,
          stderr: shell.stderr + (step.kind === 'ended' && !step.ok ? modelledStderr(step.error) : ''),
        };
      } catch (error) {
        step = {
          kind: 'ended',
          ok: false,
          error: withBwrapHint(`the script cannot run on the simulated host: ${messageOf(error)}`),
        };
        streams = { stdout: '', stderr: step.error ?? '' };
      }
    const ok = step.kind === 'ended' && step.ok;
    const error = step.kind === 'ended' ? step.error : undefined;
    this.record(
      instance,
      nodeNameOf(instance),
      'run-command',
      script,
      {
        ok,
        ...(error === undefined ? {} : { error }),
        changed: effects.changed,
        effects: effectsOf(effects),
        shell: shellKind,
      },
      undefined,
    );
    if (effects.poweredOff) {
      // The guest powers itself off once the agent has run the script.
      this.clock.after(1, `run command power-off ${instance.name}`, () => {
        if (this.compute.getInstance(instance.id)?.powerState === 'running') {
          this.compute.powerOffInstance(instance.id, { cause: 'guest' });
        }
      });
    }
    return streams;
  }

  stop(): void {
    for (const process of this.processes.values()) process.timer?.();
    for (const cancel of this.refusals.values()) cancel();
    for (const cancel of this.realRuns.values()) cancel();
    for (const staged of this.stagedRuns.values()) staged.kill();
  }
}

function merge(into: HostEffects, from: HostEffects): void {
  into.changed.push(...from.changed);
  into.appended.push(...from.appended);
  into.rootWritten ||= from.rootWritten;
  for (const disk of from.writtenDisks) into.writtenDisks.add(disk);
  into.froze ||= from.froze;
  into.thawed ||= from.thawed;
  into.poweredOff ||= from.poweredOff;
  into.startedUnits.push(...from.startedUnits);
  into.stoppedUnits.push(...from.stoppedUnits);
}

/** What the script did, in the records' words. */
function effectsOf(effects: HostEffects): PrepEffect[] {
  const touched = (prefix: string): boolean =>
    effects.changed.some((path) => path === prefix || path.startsWith(`${prefix}/`));
  const result: PrepEffect[] = [];
  if (effects.appended.some((path) => path.endsWith('ancestry.log'))) result.push('appends-ancestry');
  if (touched(PATHS.hostname)) result.push('removes-hostname');
  if (touched(PATHS.machineId)) result.push('empties-machine-id');
  if (touched('/var/lib/cloud')) result.push('removes-cloud-init-instance-data');
  if (touched('/var/lib/waagent')) result.push('removes-waagent-history');
  if (touched(PATHS.journal)) result.push('removes-old-journals');
  if (effects.poweredOff) result.push('powers-off');
  return result;
}

function podKey(pod: KubeObject): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name}/${pod.metadata.uid ?? ''}`;
}

/**
 * What a modelled script that failed printed on stderr: the failing command's own message; a command
 * that failed without one (`false`) printed nothing (the shell's "failed (exit N)" is ours, not sh's).
 */
function modelledStderr(error: string | undefined): string {
  if (error === undefined || /^line \d+: '[^\n]*' failed \(exit \d+\)$/.test(error)) return '';
  return `${error.replace(/^line \d+: /, '')}\n`;
}
