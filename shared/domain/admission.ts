/**
 * Admission of a fleet's refreshes per Azure subscription: when the schedule finds many clusters due at
 * once, their pools are let in a few at a time per subscription, because Azure's Compute limits are
 * per subscription and region (learn.microsoft.com/azure/virtual-machines/compute-throttling-limits),
 * and each pool's first start is spread over a jitter window so that the subscriptions' first waves
 * do not hit Azure Resource Manager in the same second. Pure: the jitter is a hash of a key the caller
 * passes (an orchestration's instance id and the cluster), never randomness, so a replay finds the same.
 */

/** How a subscription's pools are admitted: how many at once in the subscription, and in one cluster. */
export interface AdmissionShape {
  readonly poolsAtOnce: number;
  readonly poolsPerCluster: number;
}

/**
 * `maxPoolsPerSubscription` pools of the subscription at once (at least 1), at most
 * `min(maxParallelPools, that)` of them from one cluster: 8 and 4 admit 8 pools, 4 per cluster.
 */
export function admissionShape(maxPoolsPerSubscription: number, maxParallelPools: number): AdmissionShape {
  const poolsAtOnce = Math.max(1, Math.floor(maxPoolsPerSubscription));
  const poolsPerCluster = Math.max(1, Math.min(Math.floor(maxParallelPools), poolsAtOnce));
  return { poolsAtOnce, poolsPerCluster };
}

/** A pool waiting for a slot of its subscription: its earliest start (ms, its jitter) and its cluster. */
export interface QueuedPool {
  readonly cluster: string;
  readonly pool: string;
  readonly notBeforeMs: number;
}

/**
 * The pool of `queue` to start now, as its index, or -1: the first whose jitter has ended and whose
 * cluster runs fewer than `poolsPerCluster` pools, while the subscription runs fewer than `poolsAtOnce`
 * (`running` counts each cluster's pools running now). Queue order is the admission order.
 */
export function nextAdmittedPool(
  queue: readonly QueuedPool[],
  running: ReadonlyMap<string, number>,
  shape: AdmissionShape,
  nowMs: number,
): number {
  let total = 0;
  for (const count of running.values()) total += count;
  if (total >= shape.poolsAtOnce) return -1;
  return queue.findIndex(
    (entry) => entry.notBeforeMs <= nowMs && (running.get(entry.cluster) ?? 0) < shape.poolsPerCluster,
  );
}

/**
 * When a subscription's window should look again for a pool to start (ms): at the latest `checkMs`
 * after now; sooner when a slot is free and the earliest queued jitter ends first (never sooner than a
 * second from now). Undefined when nothing waits.
 */
export function nextAdmissionCheckMs(
  queue: readonly QueuedPool[],
  slotFree: boolean,
  nowMs: number,
  checkMs: number,
): number | undefined {
  if (queue.length === 0) return undefined;
  const earliest = Math.min(...queue.map((entry) => entry.notBeforeMs));
  return Math.min(nowMs + checkMs, slotFree ? Math.max(earliest, nowMs + 1000) : Infinity);
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
