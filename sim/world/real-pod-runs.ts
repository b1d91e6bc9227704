/**
 * A host pod's script in the real shell (real-shell.ts), as the world carries it out over simulated time:
 * it runs `prepScriptSeconds` after the container started; what it did lands on the disk, and the pod
 * ends, once the simulated time it slept has passed too (a write to a frozen root waits for the thaw). A
 * pod deleted before then changes nothing (its process was killed). A script with a TERM trap that
 * sleeps (live capture's freeze pod) runs in stages instead (staged-run.ts): its trap runs on a graceful
 * deletion.
 */
import type { ComputeState, InstanceInfo } from '../arm/compute-state.js';
import { durationOf, type KubeObject, type KubeStore, type LatencyProfile } from '../contracts.js';
import { isTerminating } from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import type { HostEffects } from './host-commands.js';
import type { HostRuntimes } from './host-runtime.js';
import { runsInStages } from './host-stand-ins.js';
import type { RealShellResult } from './real-shell.js';
import { applyRun, runOnHost } from './real-shell-run.js';
import { StagedRun } from './staged-run.js';

/** What a run needs of the cluster's prep runs (prep-runs.ts). */
export interface RealPodRuns {
  readonly store: KubeStore;
  readonly clock: WorldClock;
  readonly compute: ComputeState;
  readonly latency: LatencyProfile;
  readonly hosts: HostRuntimes;
  /** Runs pending their start or their end, by pod key (cancel). */
  readonly realRuns: Map<string, () => void>;
  /** Staged runs, by pod key (TERM on a graceful deletion). */
  readonly stagedRuns: Map<string, StagedRun>;
  /** The run ended: record it and end the pod (or confirm its deletion). */
  ended(
    pod: { readonly namespace: string; readonly name: string },
    instance: InstanceInfo,
    nodeName: string,
    script: string,
    result: RealShellResult,
    effects: HostEffects,
  ): void;
}

export interface RealPodRun {
  readonly pod: KubeObject;
  readonly key: string;
  readonly instance: InstanceInfo;
  readonly nodeName: string;
  readonly script: string;
  readonly argv: readonly string[];
}

export function startRealPodRun(runs: RealPodRuns, start: RealPodRun): void {
  const { pod, key, instance, nodeName, script, argv } = start;
  const namespace = pod.metadata.namespace ?? '';
  const name = pod.metadata.name;
  const uid = pod.metadata.uid;
  const alive = (terminatingToo = false): InstanceInfo | undefined => {
    const current = runs.store.get('pods', namespace, name);
    if (!current || current.metadata.uid !== uid || (isTerminating(current) && !terminatingToo))
      return undefined;
    const host = runs.compute.getInstance(instance.id);
    return host?.powerState === 'running' ? host : undefined;
  };
  const ended = (current: InstanceInfo, result: RealShellResult, effects: HostEffects): void =>
    runs.ended({ namespace, name }, current, nodeName, script, result, effects);
  const apply = (host: InstanceInfo, result: RealShellResult, since?: RealShellResult): HostEffects => {
    const model = runs.hosts.model(host);
    const effects = applyRun(model, result, since);
    runs.hosts.commit(host, model, effects, { name, kind: 'script' });
    return effects;
  };
  const run = (): void => {
    runs.realRuns.delete(key);
    const host = alive();
    if (!host) return;
    const model = runs.hosts.model(host);
    const nowMs = runs.clock.nowMs();
    if (runsInStages(script)) {
      const staged = new StagedRun(runs.clock, `prep script ${name} (sleep)`, {
        run: (stage) => runOnHost(argv, model, nodeName, nowMs, stage),
        alive: () => alive(true),
        apply,
        ended: (current, result, effects) => {
          runs.stagedRuns.delete(key);
          ended(current, result, effects);
        },
      });
      runs.stagedRuns.set(key, staged);
      staged.start();
      return;
    }
    const result = runOnHost(argv, model, nodeName, nowMs);
    const end = (): void => {
      runs.realRuns.delete(key);
      const current = alive();
      if (current) ended(current, result, apply(current, result));
    };
    const wrote = result.changed.length > 0 || result.appended.length > 0;
    const land = (): void => {
      // A write to a frozen root filesystem blocks until the thaw.
      if (wrote) runs.hosts.whenThawed(host.vmId, end);
      else end();
    };
    if (result.sleptSeconds > 0) {
      runs.realRuns.set(key, runs.clock.after(result.sleptSeconds, `prep script ${name} (sleep)`, land));
    } else land();
  };
  runs.realRuns.set(
    key,
    runs.clock.after(durationOf(runs.latency, 'prepScriptSeconds'), `prep script ${name}`, run),
  );
}
