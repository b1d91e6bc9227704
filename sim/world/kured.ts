/**
 * A stand-in for kured ≥ 1.7 running with `--annotate-nodes`: it reboots nodes one at a time and sets
 * and clears the node annotations exactly as kured's `rebootAsRequired` does
 * (https://github.com/kubereboot/kured/blob/main/cmd/kured/main.go).
 */
import type { ComputeState } from '../arm/compute-state.js';
import type { KubeObject } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { messageOf } from '../errors.js';
import { budgetsForPod, computeBudget } from '../kube/disruption.js';
import { isNodeReady, isUnschedulable, specOf, statusOf, timestamp } from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import type { ClusterWorld } from './cluster.js';
import { KURED_LOCK, KURED_MOST_RECENT_REBOOT_NEEDED, KURED_REBOOT_IN_PROGRESS } from './nodes.js';

export type KuredStep =
  | 'annotated'
  | 'lock-acquired'
  | 'cordoned'
  | 'evicted'
  | 'eviction-blocked'
  | 'drained'
  | 'drain-failed'
  | 'rebooting'
  | 'uncordoned'
  | 'annotation-removed'
  | 'lock-released'
  | 'notified';

export interface KuredEvent {
  at: string;
  node: string;
  step: KuredStep;
  message: string;
}

export interface KuredRun {
  nodes: readonly string[];
  state: 'running' | 'succeeded' | 'failed';
  /** Nodes rebooted so far, in order. */
  rebooted: string[];
  failed: { node: string; reason: string }[];
  done: Promise<KuredRun>;
}

export interface KuredOptions {
  cluster: ClusterWorld;
  clock: WorldClock;
  compute: ComputeState;
  /** `--ds-namespace`/`--ds-name`: the DaemonSet whose annotation is the lock. */
  daemonSetNamespace?: string;
  daemonSetName?: string;
  /** How often the drain retries an eviction a PDB refused (kubectl drain: 5 s). */
  evictionRetrySeconds?: number;
  /** `--drain-timeout`; 0 waits forever, as kured's default does. */
  drainTimeoutSeconds?: number;
  onGuestReboot?: (vmId: string, nodeName: string) => void;
}

/** kured's notification templates (`--message-template-*` defaults). */
const MESSAGES = {
  drain: (node: string) => `Draining node ${node}`,
  reboot: (node: string) => `Rebooting node ${node}`,
  uncordon: (node: string) => `Node ${node} rebooted & uncordoned successfully!`,
};

export class KuredStandIn {
  readonly events: KuredEvent[] = [];
  private readonly cluster: ClusterWorld;
  private readonly clock: WorldClock;
  private readonly compute: ComputeState;
  private readonly namespace: string;
  private readonly daemonSetName: string;
  private readonly retrySeconds: number;
  private readonly drainTimeoutSeconds: number;
  private readonly onGuestReboot: (vmId: string, nodeName: string) => void;
  private readonly cancels = new Set<() => void>();
  private readonly waiting: { run: KuredRun; resolve: (run: KuredRun) => void }[] = [];
  private active: { run: KuredRun; resolve: (run: KuredRun) => void } | undefined;

  constructor(options: KuredOptions) {
    this.cluster = options.cluster;
    this.clock = options.clock;
    this.compute = options.compute;
    this.namespace = options.daemonSetNamespace ?? 'kube-system';
    this.daemonSetName = options.daemonSetName ?? 'kured';
    this.retrySeconds = options.evictionRetrySeconds ?? 5;
    this.drainTimeoutSeconds = options.drainTimeoutSeconds ?? 0;
    this.onGuestReboot = options.onGuestReboot ?? (() => undefined);
  }

  isBusy(): boolean {
    return this.active !== undefined;
  }

  /** A patch needs a reboot on these nodes: reboot them one at a time (kured's lock serialises nodes). */
  patchAndReboot(nodeNames: readonly string[]): KuredRun {
    for (const name of nodeNames) {
      if (!this.cluster.store.get('nodes', undefined, name)) {
        throw new Error(`rebooting node ${name} with kured: no such node in cluster ${this.cluster.name}`);
      }
    }
    let resolve: (run: KuredRun) => void = () => undefined;
    const done = new Promise<KuredRun>((settle) => {
      resolve = settle;
    });
    const run: KuredRun = { nodes: [...nodeNames], state: 'running', rebooted: [], failed: [], done };
    this.waiting.push({ run, resolve });
    if (!this.active) this.startNext();
    return run;
  }

  stop(): void {
    for (const cancel of this.cancels) cancel();
    this.cancels.clear();
  }

  // --------------------------------------------------------------------------- sequencing
  // Continuation style on the scheduler (no promises inside), so advancing the clock runs a whole cycle.

  private startNext(): void {
    const next = this.waiting.shift();
    this.active = next;
    if (next) this.rebootAt(next, 0);
  }

  private rebootAt(entry: { run: KuredRun; resolve: (run: KuredRun) => void }, index: number): void {
    const { run } = entry;
    const name = run.nodes[index];
    if (name === undefined) {
      run.state = run.failed.length === 0 ? 'succeeded' : 'failed';
      entry.resolve(run);
      this.startNext();
      return;
    }
    this.rebootOne(name, (outcome) => {
      if (outcome === 'rebooted') run.rebooted.push(name);
      else run.failed.push({ node: name, reason: outcome });
      this.rebootAt(entry, index + 1);
    });
  }

  private after(seconds: number, label: string, action: () => void): void {
    const cancel = this.clock.after(seconds, label, () => {
      this.cancels.delete(cancel);
      action();
    });
    this.cancels.add(cancel);
  }

  // --------------------------------------------------------------------------- one node

  private record(node: string, step: KuredStep, message: string): void {
    this.events.push({ at: timestamp(this.clock.nowMs()), node, step, message });
  }

  private node(name: string): KubeObject | undefined {
    return this.cluster.store.get('nodes', undefined, name);
  }

  private mutateNode(name: string, change: (node: KubeObject) => void): boolean {
    try {
      this.cluster.store.mutate('nodes', undefined, name, change);
      return true;
    } catch (error) {
      if (error instanceof KubeStoreError) return false;
      throw error;
    }
  }

  private rebootOne(name: string, done: (outcome: string) => void): void {
    const node = this.node(name);
    if (!node) {
      done('node not found');
      return;
    }

    // Step 2 of rebootAsRequired: annotate before blockers and the lock, only when not yet in progress.
    const annotations = node.metadata.annotations ?? {};
    if (annotations[KURED_REBOOT_IN_PROGRESS] === undefined) {
      const now = timestamp(this.clock.nowMs());
      this.mutateNode(name, (target) => {
        target.metadata.annotations = {
          ...(target.metadata.annotations ?? {}),
          [KURED_REBOOT_IN_PROGRESS]: now,
          [KURED_MOST_RECENT_REBOOT_NEEDED]: now,
        };
      });
      this.record(
        name,
        'annotated',
        `${KURED_REBOOT_IN_PROGRESS}=${now}, ${KURED_MOST_RECENT_REBOOT_NEEDED}=${now}`,
      );
    }

    const wasUnschedulable = isUnschedulable(node);
    this.acquireLock(name, wasUnschedulable);
    this.record(name, 'notified', MESSAGES.drain(name));
    this.mutateNode(name, (target) => {
      target.spec = { ...specOf(target), unschedulable: true };
    });
    this.record(name, 'cordoned', 'spec.unschedulable=true');

    this.drainPass(name, this.clock.nowMs(), (drained) => {
      if (!drained) {
        // kured without --force-reboot: release the lock, uncordon best effort, reboot-in-progress stays.
        if (!wasUnschedulable) this.uncordon(name);
        this.releaseLock(name);
        done('drain failed');
        return;
      }
      const instance = this.cluster.instanceOfNode(name);
      if (!instance) {
        this.releaseLock(name);
        done('instance not found');
        return;
      }
      const bootId = this.bootId(name);
      this.record(name, 'notified', MESSAGES.reboot(name));
      this.record(name, 'rebooting', 'reboot command run on the host');
      try {
        this.compute.restartInstance(instance.id, { cause: 'guest' });
      } catch (error) {
        if (!wasUnschedulable) this.uncordon(name);
        this.releaseLock(name);
        done(`reboot refused: ${messageOf(error)}`);
        return;
      }
      this.onGuestReboot(instance.vmId, name);
      this.waitForBoot(name, bootId, (outcome) => {
        if (outcome !== 'booted') {
          this.releaseLock(name);
          done(outcome);
          return;
        }
        // The kured pod on the node comes back with it and finishes the cycle while holding the lock.
        if (!wasUnschedulable) {
          this.uncordon(name);
          this.record(name, 'notified', MESSAGES.uncordon(name));
        }
        this.mutateNode(name, (target) => {
          const next = { ...(target.metadata.annotations ?? {}) };
          delete next[KURED_REBOOT_IN_PROGRESS];
          target.metadata.annotations = next;
        });
        this.record(name, 'annotation-removed', `${KURED_REBOOT_IN_PROGRESS} removed`);
        this.releaseLock(name);
        done('rebooted');
      });
    });
  }

  private waitForBoot(name: string, bootId: string | undefined, done: (outcome: string) => void): void {
    this.after(this.retrySeconds, `kured wait ${name}`, () => {
      const current = this.node(name);
      if (!current) {
        done('node deleted during reboot');
        return;
      }
      if (this.bootId(name) !== bootId && isNodeReady(current)) done('booted');
      else this.waitForBoot(name, bootId, done);
    });
  }

  private bootId(name: string): string | undefined {
    const node = this.node(name);
    const nodeInfo = node ? (statusOf(node).nodeInfo as { bootID?: string } | undefined) : undefined;
    return nodeInfo?.bootID;
  }

  private uncordon(name: string): void {
    if (
      this.mutateNode(name, (target) => {
        const spec = { ...specOf(target) };
        delete spec.unschedulable;
        target.spec = spec;
      })
    ) {
      this.record(name, 'uncordoned', 'spec.unschedulable cleared');
    }
  }

  /** The lock is an annotation on the kured DaemonSet; without the DaemonSet there is nothing to hold. */
  private acquireLock(name: string, unschedulable: boolean): void {
    const value = JSON.stringify({
      nodeID: name,
      metadata: { unschedulable },
      created: new Date(this.clock.nowMs()).toISOString(),
      TTL: 0,
    });
    try {
      this.cluster.store.mutate('daemonsets', this.namespace, this.daemonSetName, (daemonSet) => {
        daemonSet.metadata.annotations = { ...(daemonSet.metadata.annotations ?? {}), [KURED_LOCK]: value };
      });
      this.record(name, 'lock-acquired', value);
    } catch (error) {
      if (!(error instanceof KubeStoreError)) throw error;
    }
  }

  private releaseLock(name: string): void {
    try {
      this.cluster.store.mutate('daemonsets', this.namespace, this.daemonSetName, (daemonSet) => {
        const next = { ...(daemonSet.metadata.annotations ?? {}) };
        delete next[KURED_LOCK];
        daemonSet.metadata.annotations = next;
      });
      this.record(name, 'lock-released', `${KURED_LOCK} removed`);
    } catch (error) {
      if (!(error instanceof KubeStoreError)) throw error;
    }
  }

  /** kubectl drain with Force, DeleteEmptyDirData and IgnoreAllDaemonSets, through PDB-checked evictions. */
  private drainPass(name: string, startedMs: number, done: (drained: boolean) => void): void {
    const store = this.cluster.store;
    const pods = this.cluster.workloadPodsOn(name);
    if (pods.length === 0) {
      this.record(name, 'drained', 'no pods left to evict');
      done(true);
      return;
    }
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp !== undefined) continue;
      const blocked = budgetsForPod(store, pod).find(
        (pdb) => computeBudget(store, pdb).disruptionsAllowed < 1,
      );
      if (blocked) {
        this.record(
          name,
          'eviction-blocked',
          `Cannot evict pod as it would violate the pod's disruption budget (${pod.metadata.namespace ?? ''}/${pod.metadata.name}, pdb ${blocked.metadata.name})`,
        );
        continue;
      }
      this.cluster.controllers.deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, undefined);
      this.record(name, 'evicted', `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`);
    }
    if (this.cluster.workloadPodsOn(name).length === 0) {
      this.record(name, 'drained', 'no pods left to evict');
      done(true);
      return;
    }
    if (this.drainTimeoutSeconds > 0 && this.clock.nowMs() - startedMs >= this.drainTimeoutSeconds * 1000) {
      this.record(name, 'drain-failed', `drain did not complete within ${this.drainTimeoutSeconds}s`);
      done(false);
      return;
    }
    this.after(this.retrySeconds, `kured drain ${name}`, () => this.drainPass(name, startedMs, done));
  }
}
