/**
 * Admission of a fleet's refreshes per Azure subscription: when the schedule finds many clusters due at
 * once, their pools are let in a few at a time per subscription, because Azure's Compute limits are
 * per subscription and region (learn.microsoft.com/azure/virtual-machines/compute-throttling-limits),
 * and each cluster's first start is spread over a jitter window so that the subscriptions' first waves
 * do not hit Azure Resource Manager in the same second. Pure: the jitter is a hash of a key the caller
 * passes (an orchestration's instance id and the cluster), never randomness, so a replay finds the same.
 */

/** How a subscription's clusters are admitted: how many at once, each with how many pools at once. */
export interface AdmissionShape {
  readonly clustersAtOnce: number;
  readonly poolsPerCluster: number;
}

/**
 * Clusters at once × pools per cluster ≤ `maxPoolsPerSubscription`, the pools per cluster at most the
 * cluster's own `maxParallelPools`: 8 per subscription and 4 per cluster admit 2 clusters of 4; 3 per
 * subscription admit 1 cluster of 3.
 */
export function admissionShape(maxPoolsPerSubscription: number, maxParallelPools: number): AdmissionShape {
  const cap = Math.max(1, Math.floor(maxPoolsPerSubscription));
  const poolsPerCluster = Math.max(1, Math.min(Math.floor(maxParallelPools), cap));
  return { clustersAtOnce: Math.max(1, Math.floor(cap / poolsPerCluster)), poolsPerCluster };
}

/** Clusters grouped by subscription (compared without case), both in name order. */
export function clustersBySubscription(
  clusters: readonly { readonly name: string; readonly subscriptionId: string }[],
): { readonly subscriptionId: string; readonly clusters: readonly string[] }[] {
  const groups = new Map<string, { subscriptionId: string; clusters: string[] }>();
  for (const cluster of clusters) {
    const key = cluster.subscriptionId.toLowerCase();
    const group = groups.get(key) ?? { subscriptionId: key, clusters: [] };
    group.clusters.push(cluster.name);
    groups.set(key, group);
  }
  return [...groups.values()]
    .map((group) => ({ ...group, clusters: group.clusters.sort((a, b) => a.localeCompare(b)) }))
    .sort((a, b) => a.subscriptionId.localeCompare(b.subscriptionId));
}

/**
 * A start delay in [0, windowSeconds) derived from `key` (FNV-1a, 32 bits): the same key always gives
 * the same delay, different keys spread evenly. 0 when the window is 0.
 */
export function admissionJitterSeconds(key: string, windowSeconds: number): number {
  const window = Math.floor(windowSeconds);
  if (window <= 0) return 0;
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    hash ^= key.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % window;
}
