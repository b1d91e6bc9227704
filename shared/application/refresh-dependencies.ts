/**
 * What the refresh activities need from the outside world, bound once per worker by the composition
 * root: per-cluster configuration (already validated), the gateways to Azure and to the cluster, and
 * a clock. Activities never read settings or the environment themselves.
 */
import type { ProvisioningState, StorageAccountType } from '../domain/compute.js';
import type { ScaleSetRef } from '../domain/provider-id.js';
import type { SelectionPolicy } from '../domain/selection-policy.js';
import type { ClusterGateway } from '../ports/cluster-gateway.js';
import type { ComputeGateway } from '../ports/compute-gateway.js';
import type { PoolRunSettings } from './refresh-contracts.js';

/** A pool named in configuration: its scale set and resource group. */
export interface ConfiguredPool {
  readonly name: string;
  readonly scaleSet: ScaleSetRef;
}

/** Everything a run needs to know about one pool, from configuration. */
export interface PoolConfiguration {
  readonly enabled: boolean;
  readonly policy: SelectionPolicy;
  readonly run: PoolRunSettings;
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
}

export interface ClusterHandle {
  readonly configuration: ClusterConfiguration;
  readonly compute: ComputeGateway;
  readonly kube: ClusterGateway;
}

export interface RefreshDependencies {
  readonly clusterNames: readonly string[];
  /** Throws NotFoundError for a cluster that is not configured. */
  cluster(name: string): Promise<ClusterHandle>;
  now(): Date;
}

/** Storage types the gallery accepts for a version; ZRS falls back to LRS where a region has no zones. */
export const STORAGE_ACCOUNT_TYPES: readonly StorageAccountType[] = [
  'Standard_ZRS',
  'Standard_LRS',
  'Premium_LRS',
];

/** Provisioning states in which a resource is still being worked on by ARM. */
export const IN_PROGRESS_STATES: readonly ProvisioningState[] = [
  'Creating',
  'Updating',
  'Deleting',
  'Migrating',
];
