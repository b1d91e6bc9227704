/**
 * Contracts between the simulator's parts: the world (sim/world, owns time, compute state, faults,
 * request log) and the Kubernetes API server (sim/kube, owns the object store and API semantics).
 * Both sides code against these interfaces so they can be built and tested separately.
 */

/** Simulated time. All durations the simulator reports are simulated seconds. */
export interface SimClock {
  /** Current simulated time in epoch milliseconds. */
  nowMs(): number;
  /** Current simulated time. */
  now(): Date;
}

/** Discrete-event scheduler on simulated time. Due events run in time order, then insertion order. */
export interface Scheduler {
  /** Runs `action` once simulated time reaches `clock.nowMs() + delaySeconds * 1000`. Returns a cancel function. */
  after(delaySeconds: number, label: string, action: () => void): () => void;
  /** Runs every event that is due now (called before each request is served). */
  runDue(): void;
}

/** The Kubernetes resources the simulator stores, by their plural REST name. */
export type KubeResource =
  | 'namespaces'
  | 'nodes'
  | 'pods'
  | 'poddisruptionbudgets'
  | 'daemonsets'
  | 'replicasets'
  | 'deployments'
  | 'leases'
  | 'serviceaccounts'
  | 'secrets'
  | 'events'
  | 'customresourcedefinitions'
  // A custom resource an established CustomResourceDefinition serves, stored as `<plural>.<group>`
  // (a CRD's group always has a dot): sim/kube/crd-registry.ts.
  | `${string}.${string}`
  // Cluster API and CAPZ kinds, served by a management cluster (sim/kube/cluster-api-resources.ts).
  | 'clusters'
  | 'machinepools'
  | 'azuremachinepools'
  | 'azuremachinepoolmachines'
  | 'kubeadmconfigs'
  | 'machines';

export interface KubeObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
  }[];
  finalizers?: string[];
  /** Which field manager set which fields (written by the simulated API server, sim/kube/managed-fields.ts). */
  managedFields?: unknown[];
}

/** Any stored Kubernetes object, as plain JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: KubeObjectMeta;
  [field: string]: unknown;
}

export interface KubeWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  resource: KubeResource;
  object: KubeObject;
  /** The object's resourceVersion, readable without `object` (which the in-memory store copies on first read). */
  resourceVersion?: string;
}

/** Thrown by the store; the API server maps these to Status objects (404, 409). */
export class KubeStoreError extends Error {
  constructor(
    readonly reason: 'NotFound' | 'AlreadyExists' | 'Conflict',
    message: string,
  ) {
    super(message);
    this.name = 'KubeStoreError';
  }
}

/**
 * The Kubernetes object store. Objects go in and out as deep copies. Every write bumps a global
 * resourceVersion (a decimal string) and notifies subscribers synchronously, after the write.
 */
export interface KubeStore {
  get(resource: KubeResource, namespace: string | undefined, name: string): KubeObject | undefined;
  /** All objects of a resource, in one namespace or (namespace undefined) all, sorted by namespace then name. */
  list(resource: KubeResource, namespace?: string): KubeObject[];
  /** Assigns uid, resourceVersion and creationTimestamp. Throws KubeStoreError('AlreadyExists'). */
  create(resource: KubeResource, object: KubeObject): KubeObject;
  /**
   * Replaces an object. When `object.metadata.resourceVersion` is set and differs from the stored one,
   * throws KubeStoreError('Conflict'). Throws KubeStoreError('NotFound').
   */
  update(resource: KubeResource, object: KubeObject): KubeObject;
  /** Read-modify-write for simulator internals (no conflict check). Throws KubeStoreError('NotFound'). */
  mutate(
    resource: KubeResource,
    namespace: string | undefined,
    name: string,
    change: (object: KubeObject) => void,
  ): KubeObject;
  /** Removes an object at once (grace periods are the API server's business). Returns false when absent. */
  remove(resource: KubeResource, namespace: string | undefined, name: string): boolean;
  /** Current global resourceVersion. */
  resourceVersion(): string;
  subscribe(listener: (event: KubeWatchEvent) => void): () => void;
}

/** A fault the simulator injects instead of serving a request. */
export interface InjectedFault {
  status: number;
  /** Sent as `Retry-After` (seconds) when set. */
  retryAfterSeconds?: number;
  /** ARM error code or Kubernetes Status reason. */
  code: string;
  message: string;
}

/** Decides whether a request fails by injection. `operation` is e.g. `Microsoft.Compute/snapshots/write` or `pods/eviction:create`. */
export interface FaultInjector {
  check(api: 'arm' | 'kube', operation: string): InjectedFault | undefined;
}

/** Counts requests per API and operation, for tests and benchmarks. */
export interface RequestLog {
  /**
   * `target`: the method and the path the request named, so a listener can tell repeated reads apart;
   * Kubernetes requests also carry their query (`?labelSelector=…&continue=…`) when they have one.
   */
  record(
    api: 'arm' | 'kube',
    operation: string,
    status: number,
    target?: { method: string; path: string; query?: string },
  ): void;
}

/**
 * How long things take in the simulated world, in simulated seconds. `kamino-observed` comes from
 * kamino's published run log (docs/design.md#timings): drain ≈14 s with 5 s grace, prep pod ≈49 s from creation
 * to power-off (2 s to start + 43 s pulling its image, which is where kamino's pod spent its time, +
 * 4 s of script: kamino's `sleep 4`), instance stop ≈113 s, snapshot ≈65 s, image version ≈665 s,
 * extension delete 13–67 s, scale-set update ≈3 s.
 */
export interface LatencyProfile {
  readonly name: string;
  /** Pod bound to a node to its containers running (images already on the node). */
  readonly podStartSeconds: number;
  /** Pulling an image a node does not have yet (once per node: the node keeps it). */
  readonly imagePullSeconds: number;
  /** A prep script's run, from its container starting to the power-off it ends with. */
  readonly prepScriptSeconds: number;
  /** powerOff (API or guest) until the instance reports `PowerState/stopped`. */
  readonly instanceStopSeconds: number;
  /** deallocate until `PowerState/deallocated`. */
  readonly instanceDeallocateSeconds: number;
  /** start/restart until the instance is running (the node turns Ready `nodeBootSeconds` later). */
  readonly instanceStartSeconds: number;
  /** Instance running until its node reports Ready again (existing node, already bootstrapped). */
  readonly nodeBootSeconds: number;
  /** New instance to Ready node when it must bootstrap from a marketplace image and extensions. */
  readonly newNodeJoinFromMarketplaceSeconds: number;
  /** New instance to Ready node when the model points at a prototype image and bootstrap extensions are gone. */
  readonly newNodeJoinFromPrototypeSeconds: number;
  /**
   * New instance to Ready node when it boots a prototype image of a kubeadm pool whose model still runs
   * `kubeadm join` (warm: packages and images on the disk; only the join and the CNI remain). See
   * sim/README.md "Time to Ready" for the figures and their sources.
   */
  readonly newNodeJoinFromPrototypeWithKubeadmJoinSeconds: number;
  readonly snapshotCreateSeconds: number;
  readonly snapshotDeleteSeconds: number;
  /** Image version creation (and replication) until Succeeded. */
  readonly imageVersionCreateSeconds: number;
  readonly imageVersionDeleteSeconds: number;
  readonly galleryCreateSeconds: number;
  readonly imageDefinitionCreateSeconds: number;
  /** Extension delete takes between these two bounds (deterministic per extension name). */
  readonly extensionDeleteSeconds: readonly [number, number];
  readonly scaleSetUpdateSeconds: number;
  readonly runCommandSeconds: number;
  /** A managed disk created from a snapshot (`createOption: Copy`) until Succeeded. */
  readonly diskCreateSeconds: number;
  readonly diskDeleteSeconds: number;
  /** attachDetachDataDisks (or an instance model update) attaching a data disk until it is in the guest. */
  readonly dataDiskAttachSeconds: number;
  readonly dataDiskDetachSeconds: number;
  /**
   * The next occurrence of `operation`, in seconds, drawn around the figure above by the world's seeded
   * timing model (sim/world/timing.ts). Absent: every occurrence takes exactly the figure. Read
   * durations through `durationOf`, once per occurrence.
   */
  readonly jitter?: (operation: TimedOperation) => number;
}

/** The profile's single-figure durations, the ones the timing model varies. */
export type TimedOperation = {
  [K in keyof LatencyProfile]-?: LatencyProfile[K] extends number ? K : never;
}[keyof LatencyProfile];

/** How long this occurrence of `operation` takes, seconds: drawn when the profile has jitter, else its figure. */
export function durationOf(latency: LatencyProfile, operation: TimedOperation): number {
  return latency.jitter?.(operation) ?? latency[operation];
}

export const KAMINO_OBSERVED: LatencyProfile = {
  name: 'kamino-observed',
  podStartSeconds: 2,
  imagePullSeconds: 43,
  prepScriptSeconds: 4,
  instanceStopSeconds: 113,
  instanceDeallocateSeconds: 120,
  instanceStartSeconds: 30,
  nodeBootSeconds: 30,
  newNodeJoinFromMarketplaceSeconds: 420,
  newNodeJoinFromPrototypeSeconds: 90,
  // Estimate: the 90 s image-only boot plus kubeadm join (discovery, TLS bootstrap) and the CNI pod
  // starting from a cached image; sim/README.md "Time to Ready".
  newNodeJoinFromPrototypeWithKubeadmJoinSeconds: 120,
  snapshotCreateSeconds: 65,
  snapshotDeleteSeconds: 5,
  imageVersionCreateSeconds: 665,
  imageVersionDeleteSeconds: 30,
  galleryCreateSeconds: 5,
  imageDefinitionCreateSeconds: 5,
  extensionDeleteSeconds: [13, 67],
  scaleSetUpdateSeconds: 3,
  runCommandSeconds: 30,
  // Not in kamino's log (it never made disks): guesses, see sim/README.md "Time".
  diskCreateSeconds: 10,
  diskDeleteSeconds: 10,
  dataDiskAttachSeconds: 15,
  dataDiskDetachSeconds: 15,
};
