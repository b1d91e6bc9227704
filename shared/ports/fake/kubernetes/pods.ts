/**
 * The fake cluster's pods: pods bound to nodes that evictions remove (or a PodDisruptionBudget refuses),
 * the prep pod (and live capture's freeze and scrub pods) whose phase moves on with the clock, and check
 * pods that run `checkPodRunMs` and end as `checkPodOutcome` says.
 */
import type { PodOnNode } from '../../../domain/drain.js';
import { definedOnly } from '../../../domain/optional.js';
import type {
  CheckPodSpec,
  EvictionOutcome,
  KubernetesMethod,
  PodOutcome,
  PodPhase,
  PodsPort,
  PodSummary,
  PrepPodSpec,
} from '../../kubernetes/index.js';
import type { CallLog } from '../recording-fake.js';

export interface FakePodsOptions {
  /** How long the prep pod runs before it ends (ms). Default 45 s. */
  readonly prepPodRunMs?: number;
  /** How the prep pod ends. Default Succeeded. */
  readonly prepPodOutcome?: 'Succeeded' | 'Failed';
  /**
   * Called when a prep pod is created, with the time it will finish (a compute fake powers off then);
   * may return what undoes that when the pod is deleted before it finished.
   */
  readonly onPrepPodCreated?: (spec: PrepPodSpec, finishesAt: number) => (() => void) | void;
  /** Per pod, what differs from the options above (live capture's freeze and scrub pods). */
  readonly podBehaviour?: (
    spec: PrepPodSpec,
  ) => { readonly runMs?: number; readonly outcome?: 'Succeeded' | 'Failed' } | undefined;
  /** How long a check pod runs (ms). Default 20 s. */
  readonly checkPodRunMs?: number;
  /** How check pods end. Default Succeeded. */
  readonly checkPodOutcome?: 'Succeeded' | 'Failed';
}

interface PodRecord {
  pod: PodOnNode;
  readonly nodeName: string;
  /** A PodDisruptionBudget refuses its eviction with this message. */
  blockedBy?: string;
}

interface PrepPodRecord {
  readonly spec: PrepPodSpec;
  readonly finishesAt: number;
  readonly outcome: 'Succeeded' | 'Failed';
  readonly cancel?: () => void;
}

export class FakePods implements PodsPort {
  #pods = new Map<string, PodRecord>();
  #prepPods = new Map<string, PrepPodRecord>();
  #checkPods = new Map<string, { spec: CheckPodSpec; finishesAt: number }>();

  constructor(
    private readonly log: CallLog<KubernetesMethod>,
    private readonly options: FakePodsOptions = {},
  ) {}

  // ---- test controls -----------------------------------------------------------------------------

  /** A pod on a node; `blockedBy` makes its eviction refused by a PodDisruptionBudget. */
  add(nodeName: string, pod: PodOnNode, blockedBy?: string): void {
    this.#pods.set(podKey(pod.namespace, pod.name), {
      pod,
      nodeName,
      ...definedOnly({ blockedBy }),
    });
  }

  /** The budget now allows the pod's eviction. */
  unblock(namespace: string, name: string): void {
    const record = this.#pods.get(podKey(namespace, name));
    if (record !== undefined) delete record.blockedBy;
  }

  /** Forgets the pods bound to a node (the node was removed). */
  removeOn(nodeName: string): void {
    for (const [key, record] of this.#pods) if (record.nodeName === nodeName) this.#pods.delete(key);
  }

  podsOn(nodeName: string): PodOnNode[] {
    return [...this.#pods.values()]
      .filter((record) => record.nodeName === nodeName)
      .map((record) => record.pod);
  }

  /** Prep pods that exist now (namespace/name → phase). */
  prepPods(): Map<string, PodPhase> {
    return new Map([...this.#prepPods.entries()].map(([key, record]) => [key, this.#phase(record)]));
  }

  /** Check pods that exist now. */
  checkPods(): CheckPodSpec[] {
    return [...this.#checkPods.values()].map((record) => record.spec);
  }

  reset(): void {
    this.#pods = new Map();
    this.#prepPods = new Map();
    this.#checkPods = new Map();
  }

  // ---- the port ----------------------------------------------------------------------------------

  listOnNode(nodeName: string): Promise<PodOnNode[]> {
    return this.log.call('pods.listOnNode', [nodeName], () => this.podsOn(nodeName));
  }

  list(namespace: string, labels: Readonly<Record<string, string>>): Promise<PodSummary[]> {
    return this.log.call('pods.list', [namespace, labels], () =>
      [...this.#prepPods.values()]
        .filter(
          (record) =>
            record.spec.namespace === namespace &&
            Object.entries(labels).every(([key, value]) => record.spec.labels[key] === value),
        )
        .map((record) => ({
          namespace,
          name: record.spec.name,
          labels: { ...record.spec.labels },
          phase: this.#phase(record),
          nodeName: record.spec.nodeName,
        })),
    );
  }

  evict(namespace: string, name: string, gracePeriodSeconds: number | undefined): Promise<EvictionOutcome> {
    return this.log.call('pods.evict', [namespace, name, gracePeriodSeconds], (): EvictionOutcome => {
      const key = podKey(namespace, name);
      const record = this.#pods.get(key);
      if (record === undefined) return { kind: 'gone' };
      if (record.blockedBy !== undefined) return { kind: 'blocked', message: record.blockedBy };
      // Evicted pods are gone by the next listing: their controllers recreate them elsewhere.
      this.#pods.delete(key);
      return { kind: 'evicted' };
    });
  }

  createPrepPod(spec: PrepPodSpec): Promise<void> {
    return this.log.call('pods.createPrepPod', [spec], () => {
      const key = podKey(spec.namespace, spec.name);
      if (this.#prepPods.has(key)) return;
      const behaviour = this.options.podBehaviour?.(spec);
      const finishesAt = this.log.now() + (behaviour?.runMs ?? this.options.prepPodRunMs ?? 45_000);
      const outcome = behaviour?.outcome ?? this.options.prepPodOutcome ?? 'Succeeded';
      const cancel = outcome === 'Succeeded' ? this.options.onPrepPodCreated?.(spec, finishesAt) : undefined;
      this.#prepPods.set(key, { spec, finishesAt, outcome, ...definedOnly({ cancel }) });
    });
  }

  createCheckPod(spec: CheckPodSpec): Promise<void> {
    return this.log.call('pods.createCheckPod', [spec], () => {
      const key = podKey(spec.namespace, spec.name);
      if (this.#checkPods.has(key)) return;
      this.#checkPods.set(key, { spec, finishesAt: this.log.now() + (this.options.checkPodRunMs ?? 20_000) });
    });
  }

  getPhase(namespace: string, name: string): Promise<PodPhase | undefined> {
    return this.log.call('pods.getPhase', [namespace, name], () => {
      const record = this.#prepPods.get(podKey(namespace, name));
      return record === undefined ? undefined : this.#phase(record);
    });
  }

  getOutcome(namespace: string, name: string): Promise<PodOutcome | undefined> {
    return this.log.call('pods.getOutcome', [namespace, name], (): PodOutcome | undefined => {
      const prepPod = this.#prepPods.get(podKey(namespace, name));
      if (prepPod !== undefined) {
        const phase = this.#phase(prepPod);
        return phase === 'Running'
          ? { phase }
          : { phase, endedAt: new Date(prepPod.finishesAt).toISOString() };
      }
      const record = this.#checkPods.get(podKey(namespace, name));
      if (record === undefined) return undefined;
      if (this.log.now() < record.finishesAt) return { phase: 'Running' as const };
      const outcome = this.options.checkPodOutcome ?? 'Succeeded';
      return outcome === 'Failed' ? { phase: outcome, message: 'exit code 1' } : { phase: outcome };
    });
  }

  delete(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void> {
    return this.log.call('pods.delete', [namespace, name, gracePeriodSeconds], () => {
      const key = podKey(namespace, name);
      const prepPod = this.#prepPods.get(key);
      // A pod deleted before its script ended never powers the host off.
      if (prepPod !== undefined && this.log.now() < prepPod.finishesAt) prepPod.cancel?.();
      this.#prepPods.delete(key);
      this.#checkPods.delete(key);
      this.#pods.delete(key);
    });
  }

  #phase(record: PrepPodRecord): PodPhase {
    return this.log.now() >= record.finishesAt ? record.outcome : 'Running';
  }
}

function podKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
