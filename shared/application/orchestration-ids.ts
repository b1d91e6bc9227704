/**
 * Names the durable world shares with the triggers and the CLI: orchestrator names, deterministic
 * instance ids (the singleton keys), and the external events an instance listens for. One home, so that a
 * trigger, a sub-orchestration start and a cancel all address the same instance.
 */

export const ORCHESTRATION = {
  refreshPool: 'refreshPool',
  refreshCluster: 'refreshCluster',
  refreshSubscription: 'refreshSubscription',
  clusterStatus: 'clusterStatus',
  poolSignal: 'poolSignal',
  rollbackPool: 'rollbackPool',
  releasePool: 'releasePool',
  reapCluster: 'reapCluster',
  retirePool: 'retirePool',
  retireCluster: 'retireCluster',
} as const;

export type OrchestrationName = (typeof ORCHESTRATION)[keyof typeof ORCHESTRATION];

/** External events. */
export const EVENT = {
  /** An operator stops a pool's refresh; the run gives the node back and fails. */
  cancel: 'cancel',
  /** A reboot notice for a pool, absorbed by its running debounce. */
  rebootNotice: 'rebootNotice',
} as const;

/** A pool's refresh, whatever starts it (timer via the cluster run, HTTP, a reboot debounce, the CLI). */
export function poolInstanceId(cluster: string, pool: string): string {
  return `refresh:${cluster}:${pool}`;
}

/** A cluster's auto-mode run: the timer's and the HTTP API's singleton key. */
export function clusterInstanceId(cluster: string): string {
  return `refresh:${cluster}`;
}

/** The schedule's run of one subscription's clusters, admitted a few pools at a time. */
export function subscriptionInstanceId(subscriptionId: string): string {
  return `refresh-subscription:${subscriptionId.toLowerCase()}`;
}

/**
 * A pool's rollback: one at a time per pool. A dry run gets a unique suffix (it changes nothing and may
 * run beside anything).
 */
export function rollbackInstanceId(cluster: string, pool: string, dryRunSuffix?: string): string {
  return dryRunSuffix === undefined
    ? `rollback:${cluster}:${pool}`
    : `rollback-plan:${cluster}:${pool}:${dryRunSuffix}`;
}

/**
 * A pool's retirement (scheduled or `retire --generation`): one at a time per pool. A dry run gets a
 * unique suffix (it changes nothing and may run beside anything).
 */
export function retireInstanceId(cluster: string, pool: string, dryRunSuffix?: string): string {
  return dryRunSuffix === undefined
    ? `retire:${cluster}:${pool}`
    : `retire-plan:${cluster}:${pool}:${dryRunSuffix}`;
}

/** The retirement timer's run over a cluster's pools: at most one per cluster in a task hub. */
export function retireClusterInstanceId(cluster: string): string {
  return `retire:${cluster}`;
}

/** A pool's reboot-notice debounce: at most one per pool absorbs notices. */
export function signalInstanceId(cluster: string, pool: string): string {
  return `signal:${cluster}:${pool}`;
}

/** Giving back what a pool's dead runs hold (`release`): one at a time per pool in a task hub. */
export function releaseInstanceId(cluster: string, pool: string): string {
  return `release:${cluster}:${pool}`;
}

/** The reaper timer's run over a cluster's pools: at most one per cluster in a task hub. */
export function reapInstanceId(cluster: string): string {
  return `reap:${cluster}`;
}

/** A dry run (`plan`) of a pool or a cluster: never a singleton, so a suffix makes each one unique. */
export function planInstanceId(cluster: string, pool: string | undefined, suffix: string): string {
  return pool === undefined ? `plan:${cluster}:${suffix}` : `plan:${cluster}:${pool}:${suffix}`;
}
