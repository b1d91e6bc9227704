/**
 * The ports to one Kubernetes cluster's API server, through the product's scoped service account, one
 * per resource. Implemented by shared/adapters/kubernetes over @kubernetes/client-node; faked by
 * shared/ports/fake/kubernetes.
 *
 * Contract (every port here): domain types in and out; a missing object is `NotFoundError` for reads and
 * a no-op for deletions; 429 (other than a PDB refusal), 5xx and connection failures are
 * `TransientError`; 401/403 and invalid requests are `TerminalError` (they name the permission that is
 * missing). Every write is idempotent.
 */
import type { DaemonSetsPort } from './daemon-sets.js';
import type { LeasesPort } from './leases.js';
import type { NodesPort } from './nodes.js';
import type { PodsPort } from './pods.js';
import type { PoolPoliciesPort } from './pool-policies.js';
import type { ServerPort } from './server.js';

export type { DaemonSetsPort } from './daemon-sets.js';
export type { LeasesPort, LeaseWrite } from './leases.js';
export type { NodeEvent, NodeScanOptions, NodesPort } from './nodes.js';
export type {
  CheckPodSpec,
  EvictionOutcome,
  PodOutcome,
  PodPhase,
  PodsPort,
  PodSummary,
  PrepPodSpec,
} from './pods.js';
export type { PoolPoliciesPort } from './pool-policies.js';
export type { AccessDecision, RulesReview, ServerPort } from './server.js';

/** One cluster's ports, bound to one API server and one identity. */
export interface KubernetesPorts {
  readonly server: ServerPort;
  readonly nodes: NodesPort;
  readonly pods: PodsPort;
  readonly daemonSets: DaemonSetsPort;
  readonly leases: LeasesPort;
  /** The pools' PoolImagePolicy objects and their Events. */
  readonly poolPolicies: PoolPoliciesPort;
}

/** A method of one of the ports, as `<port>.<method>` (what the fakes record, e.g. `nodes.get`). */
export type KubernetesMethod = {
  [Port in keyof KubernetesPorts]: `${Port}.${keyof KubernetesPorts[Port] & string}`;
}[keyof KubernetesPorts];
