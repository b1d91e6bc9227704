/**
 * Pods: the ones a drain evicts, and the product's own one-shot pods (prep, freeze, scrub and check
 * pods). shared/ports/kubernetes/index.ts has the contract every port keeps.
 */
import type { PodOnNode } from '../../domain/drain.js';

/** What an eviction request came to. */
export type EvictionOutcome =
  | { readonly kind: 'evicted' }
  /** The pod is already gone. */
  | { readonly kind: 'gone' }
  /** A PodDisruptionBudget refuses for now (HTTP 429): retry later. */
  | { readonly kind: 'blocked'; readonly message: string };

/**
 * A one-shot privileged pod that runs a script on its node's host: the prep pod that prepares a node's
 * disk and powers it off, and live capture's freeze and scrub pods.
 */
export interface PrepPodSpec {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string;
  readonly image: string;
  /** Shell script run in the host's namespaces (nsenter into PID 1). */
  readonly script: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * `all` (default): mount, UTS, IPC, network and PID namespaces (nsenter forks the shell). `mount`: the
   * host's mount namespace only, so the shell is the container's PID 1 and receives the kubelet's TERM
   * (live capture's pods thaw and unmount in their traps).
   */
  readonly hostNamespaces?: 'all' | 'mount';
  /** Seconds the kubelet waits after TERM before it kills (default 0: at once). */
  readonly terminationGracePeriodSeconds?: number;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** The operator's check pod, pinned to a canary node: an unprivileged container that must exit 0. */
export interface CheckPodSpec {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string;
  readonly image: string;
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  /** The kubelet stops the pod after this long (`activeDeadlineSeconds`). */
  readonly deadlineSeconds: number;
  readonly labels: Readonly<Record<string, string>>;
}

/** A pod's phase and, when it ended, why (the container's exit code or reason). */
export interface PodOutcome {
  readonly phase: PodPhase;
  readonly message?: string;
  /** When its container ended (`state.terminated.finishedAt`, RFC 3339), once it has. */
  readonly endedAt?: string;
}

/** A pod as listing by label shows it. */
export interface PodSummary {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly phase: PodPhase;
  readonly nodeName?: string;
}

export interface PodsPort {
  /** Every pod bound to the node, across namespaces (paged). */
  listOnNode(nodeName: string): Promise<PodOnNode[]>;
  /** Pods of one namespace whose labels include `labels` (an equality selector). */
  list(namespace: string, labels: Readonly<Record<string, string>>): Promise<PodSummary[]>;
  /** Eviction API (policy/v1); honours PodDisruptionBudgets. */
  evict(namespace: string, name: string, gracePeriodSeconds: number | undefined): Promise<EvictionOutcome>;
  /** Creates the prep pod; when it already exists (a retried activity), leaves it. */
  createPrepPod(spec: PrepPodSpec): Promise<void>;
  /** Creates the check pod; when it already exists (a retried activity), leaves it. */
  createCheckPod(spec: CheckPodSpec): Promise<void>;
  /** A pod's phase; undefined when it does not exist. */
  getPhase(namespace: string, name: string): Promise<PodPhase | undefined>;
  /** Phase, end reason and end time of a pod; undefined when it does not exist. */
  getOutcome(namespace: string, name: string): Promise<PodOutcome | undefined>;
  /** Deletes with grace period 0 (or the one given: the pod gets TERM first); no-op when absent. */
  delete(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void>;
}
