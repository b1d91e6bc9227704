/**
 * A stand-in for cluster-autoscaler's scale-down of empty nodes: it removes a node with no workload pods
 * (a drained one, for example) unless the node carries `cluster-autoscaler.kubernetes.io/scale-down-disabled=true`.
 */
import type { ComputeState } from '../arm/compute-state.js';
import type { KubeObject } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { specOf, taintsOf, timestamp } from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import type { ClusterWorld } from './cluster.js';
import { SCALE_DOWN_DISABLED, TO_BE_DELETED_TAINT } from './nodes.js';

export interface ScaleDownRecord {
  at: string;
  node: string;
  instanceId: string;
}

export interface AutoscalerOptions {
  cluster: ClusterWorld;
  clock: WorldClock;
  compute: ComputeState;
  /** `--scale-down-unneeded-time`: how long a node must stay empty before a periodic loop removes it. */
  unneededSeconds?: number;
}

/** CA's eligibility checks that matter here (`core/scaledown/eligibility`). */
export function scaleDownBlocker(node: KubeObject): string | undefined {
  if ((node.metadata.annotations ?? {})[SCALE_DOWN_DISABLED] === 'true')
    return 'scale-down disabled by annotation';
  const labels = node.metadata.labels ?? {};
  if ('node-role.kubernetes.io/control-plane' in labels || 'node-role.kubernetes.io/master' in labels) {
    return 'control-plane node';
  }
  if (taintsOf(node).some((taint) => taint.key === TO_BE_DELETED_TAINT)) return 'already being deleted';
  return undefined;
}

export class AutoscalerStandIn {
  readonly removed: ScaleDownRecord[] = [];
  private readonly cluster: ClusterWorld;
  private readonly clock: WorldClock;
  private readonly compute: ComputeState;
  private readonly unneededSeconds: number;
  private readonly unneededSince = new Map<string, number>();
  private loop: (() => void) | undefined;

  constructor(options: AutoscalerOptions) {
    this.cluster = options.cluster;
    this.clock = options.clock;
    this.compute = options.compute;
    this.unneededSeconds = options.unneededSeconds ?? 600;
  }

  /** Empty nodes CA could remove now, by name. */
  candidates(): string[] {
    return this.cluster.store
      .list('nodes')
      .filter((node) => scaleDownBlocker(node) === undefined)
      .filter((node) => this.cluster.workloadPodsOn(node.metadata.name).length === 0)
      .map((node) => node.metadata.name);
  }

  /** Removes one empty node at once (first by name); returns its name, or undefined when none qualifies. */
  scaleDownIdle(): string | undefined {
    const [candidate] = this.candidates();
    if (candidate === undefined) return undefined;
    return this.remove(candidate) ? candidate : undefined;
  }

  /** Runs a scale-down loop every `intervalSeconds`, removing nodes empty for `unneededSeconds`. */
  enable(intervalSeconds = 10): void {
    this.disable();
    const tick = (): void => {
      const now = this.clock.nowMs();
      const empty = new Set(this.candidates());
      for (const name of [...this.unneededSince.keys()])
        if (!empty.has(name)) this.unneededSince.delete(name);
      for (const name of empty) {
        const since = this.unneededSince.get(name) ?? now;
        this.unneededSince.set(name, since);
        if (now - since >= this.unneededSeconds * 1000) {
          this.remove(name);
          this.unneededSince.delete(name);
        }
      }
      this.loop = this.clock.after(intervalSeconds, `autoscaler ${this.cluster.name}`, tick);
    };
    this.loop = this.clock.after(intervalSeconds, `autoscaler ${this.cluster.name}`, tick);
  }

  disable(): void {
    this.loop?.();
    this.loop = undefined;
    this.unneededSince.clear();
  }

  isEnabled(): boolean {
    return this.loop !== undefined;
  }

  private remove(nodeName: string): boolean {
    const instance = this.cluster.instanceOfNode(nodeName);
    if (!instance) return false;
    try {
      // CA taints the node first so nothing new lands on it, then shrinks the node group.
      this.cluster.store.mutate('nodes', undefined, nodeName, (node) => {
        const spec = specOf(node);
        const taints = Array.isArray(spec.taints) ? [...(spec.taints as object[])] : [];
        taints.push({
          key: TO_BE_DELETED_TAINT,
          value: String(Math.floor(this.clock.nowMs() / 1000)),
          effect: 'NoSchedule',
        });
        node.spec = { ...spec, taints };
      });
    } catch (error) {
      if (!(error instanceof KubeStoreError)) throw error;
      return false;
    }
    this.compute.deleteInstance(instance.id);
    this.removed.push({ at: timestamp(this.clock.nowMs()), node: nodeName, instanceId: instance.id });
    return true;
  }
}
