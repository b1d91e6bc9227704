/**
 * What the refresh activities need from the outside world, bound once per worker by the composition
 * root: per-cluster configuration (already validated), the ports to Azure and to the cluster, and
 * a clock. Activities never read settings or the environment themselves.
 */
import type { BootstrapFlavour } from '../domain/bootstrap-flavour.js';
import type { CanaryPolicy } from '../domain/canary.js';
import type { CaptureModeSetting } from '../domain/capture-mode.js';
import type { StorageAccountType } from '../domain/compute.js';
import type { GenerationPolicy } from '../domain/generations.js';
import type { RunnerIdentity } from '../domain/ownership.js';
import type { PolicyEvaluation } from '../domain/pool-policy.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import type { RetirementSettings } from '../domain/retirement.js';
import type { SelectionPolicy } from '../domain/selection-policy.js';
import type { SnapshotCompletionWait } from '../domain/snapshot-readiness.js';
import type { ClusterApiPorts } from '../ports/cluster-api/machine-pools.js';
import type { ComputePorts } from '../ports/compute/index.js';
import type { KubernetesPorts, ServerPort } from '../ports/kubernetes/index.js';
import type { RunEventPublisher, RunEventRecorder } from '../ports/run-events.js';

/** Everything a refresh run needs to know about its pool, resolved once from settings and Azure. */
export interface PoolRunSettings {
  readonly drainGracePeriodSeconds: number;
  readonly drainTimeoutSeconds: number;
  /**
   * `capture.mode`: `auto` (live where safe, else drain-and-stop: the plan decides, shared/domain/capture-mode.ts),
   * `live`, `drain-and-stop` (a privileged prep pod powers the host off) or `run-command` (Azure Run Command,
   * then a power-off through the API: no pod, no privileged namespace).
   */
  readonly captureMode: CaptureModeSetting;
  /** The product's namespace: the prep pod runs there (drain-and-stop). */
  readonly prepNamespace: string;
  /** The prep pod's image; set with drain-and-stop (settings require it), absent with run-command. */
  readonly prepImage?: string;
  /** How long the Run Command may take before the run gives the node back (run-command). */
  readonly runCommandTimeoutSeconds: number;
  /** Keep the donor stopped until its snapshot completed (domain/snapshot-readiness.ts). */
  readonly waitForSnapshotCompletion: SnapshotCompletionWait;
  readonly keepExtensionTypes: readonly string[];
  readonly history: number;
  readonly storageAccountType: StorageAccountType;
  readonly extraRegions: readonly string[];
  /** Point the model at the version (pinned) instead of the definition (latest). */
  readonly pinVersion: boolean;
  /** `promotion.retirement` (docs/retirement.md). */
  readonly retirement: RetirementSettings;
  readonly deleteEmptyDirData: boolean;
  readonly forceUnreplicated: boolean;
  /** `capture.live.rootPartition`. */
  readonly liveRootPartition: number;
  /** `capture.live.maxFreeze` in seconds. */
  readonly liveMaxFreezeSeconds: number;
  /** The canary gate a new version must pass before it is published. */
  readonly canary: CanaryPolicy;
  /** Node generation labels and the optional taint on older generations. */
  readonly generations: GenerationPolicy;
}

/** A pool named in configuration: its scale set and resource group. */
export interface ConfiguredPool {
  readonly name: string;
  readonly scaleSet: ScaleSetRef;
}

/** Everything a run needs to know about one pool, from configuration. */
export interface PoolConfiguration {
  readonly enabled: boolean;
  /** Why `enabled` is false when it is not the settings' `pools[].enabled` (a PoolImagePolicy's pause). */
  readonly disabledReason?: string;
  /**
   * The pool's PoolImagePolicy as it applies (shared/application/pool-policies.ts): its object, whether it
   * is valid, which settings it replaced. Absent: the pool has none, it runs with its settings.
   */
  readonly imagePolicy?: PolicyEvaluation;
  readonly policy: SelectionPolicy;
  /** `pools[].bootstrapFlavour`; absent: detected from the donor at planning. */
  readonly bootstrapFlavour?: BootstrapFlavour;
  readonly run: PoolRunSettings;
  /** The cluster's CAPZ settings (docs/capz.md): where its MachinePools live, and whether their rollout is accepted. */
  readonly capz?: { readonly namespace: string; readonly rollout: 'refuse' | 'allow' };
  readonly gallery: {
    readonly subscriptionId: string;
    readonly resourceGroup: string;
    readonly galleryName: string;
    readonly imageDefinitionName: string;
  };
}

export interface ClusterConfiguration {
  readonly name: string;
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly maxParallelPools: number;
  /** `all`: every scale set that has nodes in the cluster, named after the scale set. */
  readonly pools: 'all' | readonly ConfiguredPool[];
  /** Configuration of a pool (by name); for `all`, the cluster-wide defaults. */
  poolConfiguration(pool: ConfiguredPool): PoolConfiguration;
  /** The cluster's CAPZ management cluster (`capz`), when it has CAPZ MachinePools. */
  readonly capz?: CapzConfiguration;
}

/** Where a cluster's MachinePools live (`capz`): the rollout opt-in is per pool (`PoolConfiguration.capz`). */
export interface CapzConfiguration {
  /** The management cluster's API server URL (for messages and `doctor`). */
  readonly managementCluster: string;
  /** The namespace of the cluster's MachinePools and AzureMachinePools. */
  readonly namespace: string;
}

export interface ClusterHandle {
  readonly configuration: ClusterConfiguration;
  readonly compute: ComputePorts;
  readonly kube: KubernetesPorts;
  /** The cluster's management cluster (its settings have `capz`): its MachinePools. */
  readonly clusterApi?: ClusterApiPorts;
  /** The management cluster's API server itself (version, access reviews), with `clusterApi`: for `doctor`. */
  readonly managementServer?: ServerPort;
}

export interface RefreshDependencies {
  readonly clusterNames: readonly string[];
  /** Throws NotFoundError for a cluster that is not configured. */
  cluster(name: string): Promise<ClusterHandle>;
  now(): Date;
  /** Who runs: the runner kind (`cli`, `function-app`) and its host, for the pool lease's holder identity. */
  readonly runner: RunnerIdentity;
  /**
   * The share of Azure's usual timings the runs' polls wait for (`VMSSP_SIMULATOR_WAIT_SCALE`, a simulator
   * at ×1 only); absent: 1. Handed to each run with its pool lease (functions/orchestrations/ownership.ts).
   */
  readonly waitScale?: number;
  /** Where run events go; absent: none are published (no topic configured). */
  readonly events?: RunEventPublisher;
  /** The run metrics; absent: none are recorded. */
  readonly metrics?: RunEventRecorder;
  /** Configured values never quoted from a pod into a reason or an event (canary check pods' environment values). */
  readonly sensitiveValues?: readonly string[];
}
