/**
 * The port to one Kubernetes cluster's API server, through the product's scoped service account.
 * Implemented by shared/adapters/kubernetes over @kubernetes/client-node.
 *
 * Contract: domain types in and out; a missing object is `NotFoundError` for reads and a no-op for
 * deletions; 429 (other than a PDB refusal), 5xx and connection failures are `TransientError`;
 * 401/403 and invalid requests are `TerminalError` (they name the permission that is missing).
 * Every write is idempotent.
 */
import type { DaemonSetTarget } from '../domain/canary.js';
import type { ClusterNode, NodeTaint } from '../domain/cluster-node.js';
import type { PodOnNode } from '../domain/drain.js';
import type { KubernetesAccess, ResourceRule } from '../domain/kubernetes-access.js';
import type { PoolLease } from '../domain/ownership.js';

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

/** What the API server answered to a SelfSubjectAccessReview. */
export interface AccessDecision {
  readonly allowed: boolean;
  /** The authorizer's explanation, when it gave one. */
  readonly reason?: string;
}

/** What a SelfSubjectRulesReview answered for a namespace. */
export interface RulesReview {
  readonly resourceRules: readonly ResourceRule[];
  /** The server could not list every rule (an authorizer that cannot enumerate, e.g. a webhook). */
  readonly incomplete: boolean;
}
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
}

/** A pod as listing by label shows it. */
export interface PodSummary {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly phase: PodPhase;
  readonly nodeName?: string;
}

/** A lease to write: everything but the server's resourceVersion; no holder releases it. */
export type LeaseWrite = Omit<PoolLease, 'resourceVersion'>;

export interface ClusterGateway {
  /** `GET /version`: the server answers over TLS verified with the configured CA, the token is accepted. */
  serverVersion(): Promise<string>;
  /**
   * SelfSubjectAccessReview per access, in order. An API server without the authorization API answers
   * NotFoundError (then `reviewRules` is the fallback).
   */
  reviewAccess(accesses: readonly KubernetesAccess[]): Promise<AccessDecision[]>;
  /** SelfSubjectRulesReview: the service account's rules in `namespace` (cluster-wide rules included). */
  reviewRules(namespace: string): Promise<RulesReview>;

  listNodes(): Promise<ClusterNode[]>;
  /**
   * Lists the nodes page by page (limit/continue), each page converted as it arrives, so a caller that
   * folds the pages holds one page at a time. Every node is visited once, in list order; when the server
   * expires the continue token, `restart` is called and the pages come again from the first.
   */
  scanNodes(
    visit: (page: readonly ClusterNode[]) => void | Promise<void>,
    restart: () => void,
  ): Promise<void>;
  getNode(name: string): Promise<ClusterNode>;
  /** Sets (string) or removes (null) annotations; other annotations are untouched. */
  patchNodeAnnotations(name: string, changes: Readonly<Record<string, string | null>>): Promise<void>;
  setNodeUnschedulable(name: string, unschedulable: boolean): Promise<void>;

  /** Every pod bound to the node, across namespaces (paged). */
  listPodsOnNode(nodeName: string): Promise<PodOnNode[]>;
  daemonSetExists(namespace: string, name: string): Promise<boolean>;
  /** Eviction API (policy/v1); honours PodDisruptionBudgets. */
  evictPod(namespace: string, name: string, gracePeriodSeconds: number | undefined): Promise<EvictionOutcome>;

  /** Creates the prep pod; when it already exists (a retried activity), leaves it. */
  createPrepPod(spec: PrepPodSpec): Promise<void>;
  getPodPhase(namespace: string, name: string): Promise<PodPhase | undefined>;
  /** Deletes with grace period 0 (or the one given: the pod gets TERM first); no-op when absent. */
  deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void>;

  /** Every DaemonSet, with what decides which nodes it runs on (paged). */
  listDaemonSets(): Promise<DaemonSetTarget[]>;
  /** Sets (string) or removes (null) labels; other labels are untouched. */
  patchNodeLabels(name: string, changes: Readonly<Record<string, string | null>>): Promise<void>;
  /**
   * Puts `taint` on the node (replacing one with the same key), or removes every taint with `key` (null);
   * other taints are untouched. A concurrent change of the node is a TransientError (read again, retry).
   */
  setNodeTaint(name: string, key: string, taint: NodeTaint | null): Promise<void>;
  /** Creates the check pod; when it already exists (a retried activity), leaves it. */
  createCheckPod(spec: CheckPodSpec): Promise<void>;
  /** Phase and end reason of a pod; undefined when it does not exist. */
  getPodOutcome(namespace: string, name: string): Promise<PodOutcome | undefined>;
  /** Pods of one namespace whose labels include `labels` (an equality selector). */
  listPods(namespace: string, labels: Readonly<Record<string, string>>): Promise<PodSummary[]>;

  /** coordination.k8s.io/v1 Lease; undefined when absent. */
  getLease(namespace: string, name: string): Promise<PoolLease | undefined>;
  /** Creates the lease; `exists` when another writer created it first. */
  createLease(lease: LeaseWrite): Promise<PoolLease | 'exists'>;
  /**
   * Replaces the lease if it is still at `resourceVersion` (optimistic concurrency); `conflict` when
   * someone wrote it since (re-read and decide again), `gone` when it was deleted.
   */
  replaceLease(lease: LeaseWrite, resourceVersion: string): Promise<PoolLease | 'conflict' | 'gone'>;
}
