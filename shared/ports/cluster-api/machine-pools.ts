/**
 * A Cluster API management cluster's MachinePools, through the product's scoped service account in the
 * pools' namespace (infra/kubernetes/management/). The contract of shared/ports/kubernetes/index.ts holds:
 * domain types in and out, NotFoundError for a missing object on reads, deletions of missing objects are
 * no-ops, 429/5xx/connection failures are TransientError, 401/403 and invalid requests TerminalError naming
 * the permission. Every write is idempotent.
 */
import type { MachinePoolMachine, MachinePoolView } from '../../domain/cluster-api.js';

/** The canary pool's objects: clones of the pool's, named by the caller, carrying the version under test. */
export interface CanaryPoolSpec {
  readonly namespace: string;
  /** The pool being refreshed (MachinePool and AzureMachinePool names), whose objects are cloned. */
  readonly source: { readonly machinePool: string; readonly azureMachinePool: string };
  /** Name for the cloned MachinePool, AzureMachinePool and KubeadmConfig (CAPZ names the canary's scale set after it). */
  readonly name: string;
  readonly replicas: number;
  /** The image the canary's template carries (`spec.template.image`, as written). */
  readonly image: Readonly<Record<string, unknown>>;
  /** Labels on every canary object (the run id, the pool): how a later run or the reaper finds them. */
  readonly labels: Readonly<Record<string, string>>;
}

export interface MachinePoolsPort {
  /**
   * The pool whose AzureMachinePool is named `scaleSetName` (CAPZ names the scale set after it), with its
   * owning MachinePool; NotFoundError when there is none in the namespace.
   */
  findByScaleSet(namespace: string, scaleSetName: string): Promise<MachinePoolView>;
  /**
   * Sets `AzureMachinePool.spec.template.image` if the object is still at `resourceVersion`; `conflict`
   * when someone wrote it since (re-read and decide again).
   */
  setTemplateImage(
    namespace: string,
    azureMachinePool: string,
    image: Readonly<Record<string, unknown>>,
    resourceVersion: string,
  ): Promise<'set' | 'conflict'>;
  /** The AzureMachinePoolMachines of one AzureMachinePool (by CAPZ's machine-pool label). */
  listMachines(namespace: string, azureMachinePool: string): Promise<MachinePoolMachine[]>;
  /** Creates the canary's KubeadmConfig, AzureMachinePool and MachinePool (each skipped when it exists). */
  createCanaryPool(spec: CanaryPoolSpec): Promise<void>;
  /** Deletes the canary's MachinePool, AzureMachinePool and KubeadmConfig (missing ones are no-ops). */
  deleteCanaryPool(namespace: string, name: string): Promise<void>;
  /** Names of canary pools carrying all of `labels` (what a dead run left). */
  listCanaryPools(namespace: string, labels: Readonly<Record<string, string>>): Promise<string[]>;
}

/** The ports to one cluster's management cluster. */
export interface ClusterApiPorts {
  readonly machinePools: MachinePoolsPort;
}
