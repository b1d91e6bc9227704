/**
 * The scenario fields of a Cluster API management cluster and of the workload clusters it manages with
 * CAPZ MachinePools (sim/README.md "Cluster API management cluster (CAPZ)"), and their cross-checks.
 * Kept apart from sim/world/scenario.ts, which embeds them.
 */
import { z } from 'zod';

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DURATION_RE = /^([+-]?)(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const Name = z.string().regex(NAME_RE, 'expected a DNS label (lowercase letters, digits, -)');
const Duration = z.string().regex(DURATION_RE, 'expected a duration such as 30s, 10m, 3h or 2d');
const IntOrPercent = z.union([
  z.int().nonnegative(),
  z.string().regex(/^\d+%$/, 'expected an integer or a percentage'),
]);

/** CAPZ's owner tag on the resources it manages: `sigs.k8s.io_cluster-api-provider-azure_cluster_<name>` (api/v1beta1/tags.go). */
export const CAPZ_OWNER_TAG_PREFIX = 'sigs.k8s.io_cluster-api-provider-azure_cluster_';

export function capzOwnerTag(clusterName: string): string {
  return `${CAPZ_OWNER_TAG_PREFIX}${clusterName}`;
}

/** Whether CAPZ owns a scale set by its tags (any cluster's owner tag). */
export function ownedByCapz(tags: Readonly<Record<string, string>>): boolean {
  return Object.keys(tags).some((key) => key.toLowerCase().startsWith(CAPZ_OWNER_TAG_PREFIX));
}

/** A cluster entry's `clusterApi`: it is a Cluster API management cluster. */
export const ClusterApi = z.strictObject({
  /** Where the CAPI/CAPZ objects of the clusters it manages live, unless `managedBy.namespace` says otherwise. */
  namespace: Name.default('default'),
  /** The controllers' resync (CAPZ main.go `--sync-period`, default 10m). */
  syncPeriod: Duration.default('10m'),
  /**
   * CABPK's bootstrap token TTL (cluster-api bootstrap/kubeadm `--bootstrap-token-ttl`, default 15m): a
   * MachinePool's token is rotated when less than half of it is left.
   */
  tokenTTL: Duration.default('15m'),
  /**
   * The versions of cluster.x-k8s.io MachinePool and Machine served: both (Cluster API v1.11+, v1beta2
   * stored and preferred, v1beta1 deprecated), `[v1beta1]` (an older Cluster API) or `[v1beta2]` (once
   * v1beta1 is no longer served).
   */
  servedVersions: z
    .array(z.enum(['v1beta1', 'v1beta2']))
    .min(1)
    .default(['v1beta1', 'v1beta2'])
    .transform((versions) => [...new Set(versions)].sort()),
});
export type ClusterApi = z.infer<typeof ClusterApi>;

/** A workload cluster entry's `managedBy`: CAPZ manages its owner-tagged scale sets as MachinePools. */
export const ManagedBy = z.strictObject({
  /** A scenario cluster with `clusterApi`. */
  managementCluster: Name,
  /** Default: the management cluster's `clusterApi.namespace`. */
  namespace: Name.optional(),
  /** The CAPI Cluster object's name; default: this cluster's name. */
  clusterName: Name.optional(),
});
export type ManagedBy = z.infer<typeof ManagedBy>;

/** A CAPZ scale set's `machinePool`: the AzureMachinePool's rolling-update strategy and the autoscaler bounds. */
export const MachinePoolSpec = z.strictObject({
  strategy: z
    .strictObject({
      maxSurge: IntOrPercent.default(1),
      maxUnavailable: IntOrPercent.default(0),
      deletePolicy: z.enum(['Oldest', 'Newest', 'Random']).default('Oldest'),
    })
    .prefault({}),
  autoscaler: z.strictObject({ min: z.int().nonnegative(), max: z.int().nonnegative() }).optional(),
});
export type MachinePoolSpec = z.infer<typeof MachinePoolSpec>;

/** What the cross-checks read of a cluster entry. */
interface ClusterFacts {
  name: string;
  clusterApi?: ClusterApi | undefined;
  managedBy?: ManagedBy | undefined;
  scaleSets: readonly { tags: Readonly<Record<string, string>>; machinePool?: MachinePoolSpec | undefined }[];
}

export interface Issue {
  path: (string | number)[];
  message: string;
}

/**
 * Cross-checks: `managedBy` names a cluster with `clusterApi` (not itself); `machinePool` only on a scale set
 * CAPZ owns (the owner tag of the managed cluster's CAPI name); a cluster without `clusterApi` has a scale
 * set; autoscaler bounds in order.
 */
export function clusterApiIssues(clusters: readonly ClusterFacts[]): Issue[] {
  const issues: Issue[] = [];
  const byName = new Map(clusters.map((cluster) => [cluster.name, cluster]));
  clusters.forEach((cluster, c) => {
    if (cluster.scaleSets.length === 0 && cluster.clusterApi === undefined) {
      issues.push({
        path: ['clusters', c, 'scaleSets'],
        message:
          'a cluster needs at least one scale set (only a Cluster API management cluster, clusterApi, may have none)',
      });
    }
    const managedBy = cluster.managedBy;
    if (managedBy) {
      const management = byName.get(managedBy.managementCluster);
      if (!management || management.name === cluster.name) {
        issues.push({
          path: ['clusters', c, 'managedBy', 'managementCluster'],
          message: `unknown management cluster ${managedBy.managementCluster}; known: ${[...byName.keys()].filter((name) => name !== cluster.name).join(', ') || 'none'}`,
        });
      } else if (management.clusterApi === undefined) {
        issues.push({
          path: ['clusters', c, 'managedBy', 'managementCluster'],
          message: `cluster ${management.name} is not a Cluster API management cluster (it has no clusterApi)`,
        });
      }
    }
    const ownerTag = capzOwnerTag(managedBy?.clusterName ?? cluster.name);
    cluster.scaleSets.forEach((scaleSet, s) => {
      if (scaleSet.machinePool === undefined) return;
      const path = ['clusters', c, 'scaleSets', s, 'machinePool'];
      if (!managedBy) {
        issues.push({ path, message: 'machinePool needs the cluster to be managedBy a management cluster' });
      } else if (scaleSet.tags[ownerTag] !== 'owned') {
        issues.push({ path, message: `machinePool needs the CAPZ owner tag ${ownerTag}: owned` });
      }
      const bounds = scaleSet.machinePool.autoscaler;
      if (bounds && bounds.min > bounds.max) {
        issues.push({
          path: [...path, 'autoscaler'],
          message: `min ${bounds.min} is above max ${bounds.max}`,
        });
      }
    });
  });
  return issues;
}
