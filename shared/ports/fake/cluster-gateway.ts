/**
 * An in-memory ClusterGateway for fast tests: nodes with annotations and cordons, pods bound to nodes
 * that evictions remove (or a PodDisruptionBudget refuses), DaemonSets, and the prep pod whose phase moves
 * on with the fake's clock. It keeps the port's contract: NotFoundError for missing reads, no-op deletions
 * of absent pods, idempotent writes. Calls are logged; `nextError` queues one-shot failures; `reset`
 * starts afresh. `onPrepPodCreated` lets a test connect the prep pod to a compute fake (it powers the
 * host off). Access reviews allow everything but what `denyAccess` took away (the rules review lists a
 * wildcard rule then, or the grants of `grantRules`).
 * Check pods run `checkPodRunMs` and end as `checkPodOutcome` says.
 */
import type { DaemonSetTarget } from '../../domain/canary.js';
import type { ClusterNode, NodeTaint } from '../../domain/cluster-node.js';
import type { PodOnNode } from '../../domain/drain.js';
import { NotFoundError } from '../../domain/errors.js';
import {
  describeAccess,
  type KubernetesAccess,
  type ResourceRule,
  rulesAllow,
} from '../../domain/kubernetes-access.js';
import type { PoolLease } from '../../domain/ownership.js';
import type {
  AccessDecision,
  CheckPodSpec,
  ClusterGateway,
  EvictionOutcome,
  LeaseWrite,
  PodOutcome,
  PodPhase,
  PodSummary,
  PrepPodSpec,
  RulesReview,
} from '../cluster-gateway.js';
import { RecordingFake } from './recording-fake.js';

export type ClusterMethod = keyof ClusterGateway;

export interface FakeClusterOptions {
  /** The clock pod phases follow (epoch ms); a test's virtual clock. Default: Date.now. */
  readonly now?: () => number;
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
  /** Nodes per page of `scanNodes` (each page is one recorded `scanNodes` call). Default 500. */
  readonly nodePageSize?: number;
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

export class FakeClusterGateway extends RecordingFake<ClusterMethod> implements ClusterGateway {
  readonly #options: FakeClusterOptions;
  #nodes = new Map<string, ClusterNode>();
  #pods = new Map<string, PodRecord>();
  #daemonSets = new Set<string>();
  #prepPods = new Map<string, PrepPodRecord>();
  #denied = new Set<string>();
  #rules: ResourceRule[] | undefined;
  #accessReviews = true;
  #checkPods = new Map<string, { spec: CheckPodSpec; finishesAt: number }>();
  #leases = new Map<string, PoolLease>();
  #leaseVersion = 0;

  constructor(options: FakeClusterOptions = {}) {
    super(options.now ?? (() => Date.now()));
    this.#options = options;
  }

  // ---- test controls -----------------------------------------------------------------------------

  /** Reviews (and the run's permission check) find this access missing (`describeAccess` form). */
  denyAccess(access: string): void {
    this.#denied.add(access);
  }

  /** What the rules review lists (default: one rule allowing everything); access reviews follow it. */
  grantRules(rules: readonly ResourceRule[]): void {
    this.#rules = [...rules];
  }

  /** The API server has no SelfSubjectAccessReview (404): callers must fall back to the rules review. */
  withoutAccessReviews(): void {
    this.#accessReviews = false;
  }

  override reset(): void {
    super.reset();
    this.#denied = new Set();
    this.#rules = undefined;
    this.#accessReviews = true;
    this.#nodes = new Map();
    this.#pods = new Map();
    this.#daemonSets = new Set();
    this.#prepPods = new Map();
    this.#checkPods = new Map();
    this.#leases = new Map();
  }

  removeNode(name: string): void {
    this.#nodes.delete(name);
    for (const [key, record] of this.#pods) if (record.nodeName === name) this.#pods.delete(key);
  }

  /** Check pods that exist now. */
  checkPods(): CheckPodSpec[] {
    return [...this.#checkPods.values()].map((record) => record.spec);
  }

  addNode(node: ClusterNode): void {
    this.#nodes.set(node.name, node);
  }

  /** A pod on a node; `blockedBy` makes its eviction refused by a PodDisruptionBudget. */
  addPod(nodeName: string, pod: PodOnNode, blockedBy?: string): void {
    this.#pods.set(podKey(pod.namespace, pod.name), {
      pod,
      nodeName,
      ...(blockedBy === undefined ? {} : { blockedBy }),
    });
  }

  /** The budget now allows the pod's eviction. */
  unblockPod(namespace: string, name: string): void {
    const record = this.#pods.get(podKey(namespace, name));
    if (record !== undefined) delete record.blockedBy;
  }

  addDaemonSet(namespace: string, name: string): void {
    this.#daemonSets.add(podKey(namespace, name));
  }

  node(name: string): ClusterNode | undefined {
    return this.#nodes.get(name);
  }

  podsOn(nodeName: string): PodOnNode[] {
    return [...this.#pods.values()]
      .filter((record) => record.nodeName === nodeName)
      .map((record) => record.pod);
  }

  /** A lease as it is now (test setup and assertions). */
  lease(namespace: string, name: string): PoolLease | undefined {
    return this.#leases.get(podKey(namespace, name));
  }

  /** Writes a lease as another runner would, bypassing the port. */
  putLease(lease: LeaseWrite): PoolLease {
    return this.#storeLease(lease);
  }

  /** Prep pods that exist now (name → phase). */
  prepPods(): Map<string, PodPhase> {
    return new Map([...this.#prepPods.entries()].map(([key, record]) => [key, this.#phase(record)]));
  }

  // ---- the port ----------------------------------------------------------------------------------

  serverVersion(): Promise<string> {
    return this.call('serverVersion', [], () => 'v1.30.6');
  }

  reviewAccess(accesses: readonly KubernetesAccess[]): Promise<AccessDecision[]> {
    return this.call('reviewAccess', [accesses], () => {
      if (!this.#accessReviews) {
        throw new NotFoundError(
          'KubeNotFound',
          'reviewing access: the server could not find the requested resource (selfsubjectaccessreviews)',
        );
      }
      return accesses.map((access): AccessDecision => {
        const allowed = this.#allows(access);
        return allowed ? { allowed } : { allowed, reason: 'no RBAC rule allows it' };
      });
    });
  }

  reviewRules(namespace: string): Promise<RulesReview> {
    return this.call('reviewRules', [namespace], () => ({
      resourceRules: this.#rules ?? [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      incomplete: false,
    }));
  }

  listNodes(): Promise<ClusterNode[]> {
    return this.call('listNodes', [], () => [...this.#nodes.values()]);
  }

  async scanNodes(
    visit: (page: readonly ClusterNode[]) => void | Promise<void>,
    _restart: () => void,
  ): Promise<void> {
    const size = Math.max(1, this.#options.nodePageSize ?? 500);
    const names = [...this.#nodes.keys()];
    let offset = 0;
    do {
      // One recorded call per page, as the API server sees one list request per page.
      const page = await this.call('scanNodes', [offset], () =>
        names.slice(offset, offset + size).flatMap((name) => {
          const node = this.#nodes.get(name);
          return node === undefined ? [] : [node];
        }),
      );
      await visit(page);
      offset += size;
    } while (offset < names.length);
  }

  getNode(name: string): Promise<ClusterNode> {
    return this.call('getNode', [name], () => this.#node(name, `reading node ${name}`));
  }

  patchNodeAnnotations(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.call('patchNodeAnnotations', [name, changes], () => {
      const node = this.#node(name, `annotating node ${name}`);
      const annotations: Record<string, string> = { ...node.annotations };
      for (const [key, value] of Object.entries(changes)) {
        if (value === null) delete annotations[key];
        else annotations[key] = value;
      }
      this.#nodes.set(name, { ...node, annotations });
    });
  }

  setNodeUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    return this.call('setNodeUnschedulable', [name, unschedulable], () => {
      const node = this.#node(name, `${unschedulable ? 'cordoning' : 'uncordoning'} node ${name}`);
      this.#nodes.set(name, { ...node, unschedulable });
    });
  }

  listPodsOnNode(nodeName: string): Promise<PodOnNode[]> {
    return this.call('listPodsOnNode', [nodeName], () => this.podsOn(nodeName));
  }

  daemonSetExists(namespace: string, name: string): Promise<boolean> {
    return this.call('daemonSetExists', [namespace, name], () =>
      this.#daemonSets.has(podKey(namespace, name)),
    );
  }

  evictPod(
    namespace: string,
    name: string,
    gracePeriodSeconds: number | undefined,
  ): Promise<EvictionOutcome> {
    return this.call('evictPod', [namespace, name, gracePeriodSeconds], (): EvictionOutcome => {
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
    return this.call('createPrepPod', [spec], () => {
      const key = podKey(spec.namespace, spec.name);
      if (this.#prepPods.has(key)) return;
      const behaviour = this.#options.podBehaviour?.(spec);
      const finishesAt = this.now() + (behaviour?.runMs ?? this.#options.prepPodRunMs ?? 45_000);
      const outcome = behaviour?.outcome ?? this.#options.prepPodOutcome ?? 'Succeeded';
      const cancel = outcome === 'Succeeded' ? this.#options.onPrepPodCreated?.(spec, finishesAt) : undefined;
      this.#prepPods.set(key, { spec, finishesAt, outcome, ...(cancel === undefined ? {} : { cancel }) });
    });
  }

  getPodPhase(namespace: string, name: string): Promise<PodPhase | undefined> {
    return this.call('getPodPhase', [namespace, name], () => {
      const record = this.#prepPods.get(podKey(namespace, name));
      return record === undefined ? undefined : this.#phase(record);
    });
  }

  deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void> {
    return this.call('deletePod', [namespace, name, gracePeriodSeconds], () => {
      const key = podKey(namespace, name);
      const prepPod = this.#prepPods.get(key);
      // A pod deleted before its script ended never powers the host off.
      if (prepPod !== undefined && this.now() < prepPod.finishesAt) prepPod.cancel?.();
      this.#prepPods.delete(key);
      this.#checkPods.delete(key);
      this.#pods.delete(key);
    });
  }

  listDaemonSets(): Promise<DaemonSetTarget[]> {
    return this.call('listDaemonSets', [], () =>
      [...this.#daemonSets].map((key) => {
        const [namespace = '', name = ''] = key.split('/');
        return {
          namespace,
          name,
          uid: key,
          nodeSelector: {},
          requiredNodeAffinity: [],
          tolerations: [{ operator: 'Exists' }],
        };
      }),
    );
  }

  patchNodeLabels(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.call('patchNodeLabels', [name, changes], () => {
      const node = this.#node(name, `labelling node ${name}`);
      const labels: Record<string, string> = { ...node.labels };
      for (const [key, value] of Object.entries(changes)) {
        if (value === null) delete labels[key];
        else labels[key] = value;
      }
      this.#nodes.set(name, { ...node, labels });
    });
  }

  setNodeTaint(name: string, key: string, taint: NodeTaint | null): Promise<void> {
    return this.call('setNodeTaint', [name, key, taint], () => {
      const node = this.#node(name, `tainting node ${name}`);
      const taints = node.taints.filter((entry) => entry.key !== key);
      this.#nodes.set(name, { ...node, taints: taint === null ? taints : [...taints, taint] });
    });
  }

  createCheckPod(spec: CheckPodSpec): Promise<void> {
    return this.call('createCheckPod', [spec], () => {
      const key = podKey(spec.namespace, spec.name);
      if (this.#checkPods.has(key)) return;
      this.#checkPods.set(key, { spec, finishesAt: this.now() + (this.#options.checkPodRunMs ?? 20_000) });
    });
  }

  getPodOutcome(namespace: string, name: string): Promise<PodOutcome | undefined> {
    return this.call('getPodOutcome', [namespace, name], () => {
      const record = this.#checkPods.get(podKey(namespace, name));
      if (record === undefined) return undefined;
      if (this.now() < record.finishesAt) return { phase: 'Running' as const };
      const outcome = this.#options.checkPodOutcome ?? 'Succeeded';
      return outcome === 'Failed' ? { phase: outcome, message: 'exit code 1' } : { phase: outcome };
    });
  }

  listPods(namespace: string, labels: Readonly<Record<string, string>>): Promise<PodSummary[]> {
    return this.call('listPods', [namespace, labels], () =>
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

  getLease(namespace: string, name: string): Promise<PoolLease | undefined> {
    return this.call('getLease', [namespace, name], () => this.#leases.get(podKey(namespace, name)));
  }

  createLease(lease: LeaseWrite): Promise<PoolLease | 'exists'> {
    return this.call('createLease', [lease], () =>
      this.#leases.has(podKey(lease.namespace, lease.name)) ? 'exists' : this.#storeLease(lease),
    );
  }

  replaceLease(lease: LeaseWrite, resourceVersion: string): Promise<PoolLease | 'conflict' | 'gone'> {
    return this.call('replaceLease', [lease, resourceVersion], () => {
      const existing = this.#leases.get(podKey(lease.namespace, lease.name));
      if (existing === undefined) return 'gone';
      if (existing.resourceVersion !== resourceVersion) return 'conflict';
      return this.#storeLease(lease);
    });
  }

  // ---- internals ---------------------------------------------------------------------------------

  #allows(access: KubernetesAccess): boolean {
    if (this.#denied.has(describeAccess(access))) return false;
    return this.#rules === undefined || rulesAllow(this.#rules, access);
  }

  #storeLease(lease: LeaseWrite): PoolLease {
    this.#leaseVersion += 1;
    const stored: PoolLease = { ...structuredClone(lease), resourceVersion: String(this.#leaseVersion) };
    this.#leases.set(podKey(lease.namespace, lease.name), stored);
    return stored;
  }

  #node(name: string, action: string): ClusterNode {
    const node = this.#nodes.get(name);
    if (node === undefined) throw new NotFoundError('NodeNotFound', `${action}: not found`);
    return node;
  }

  #phase(record: PrepPodRecord): PodPhase {
    return this.now() >= record.finishesAt ? record.outcome : 'Running';
  }
}

function podKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
