/**
 * The orchestrations, each defined once (functions/orchestration.ts): their handles, for whoever starts
 * one or reads its output (the triggers, the CLI, a parent orchestration), and their handlers by name,
 * registered by the function app and run as they are by the local runner.
 */
import type { OrchestrationHandler } from 'durable-functions';

import type { OrchestrationName } from '../../shared/application/orchestration-ids.js';
import { clusterStatusOrchestration } from './cluster-status.orchestration.js';
import { poolSignalOrchestration } from './pool-signal.orchestration.js';
import { reapClusterOrchestration } from './reap-cluster.orchestration.js';
import { refreshClusterOrchestration } from './refresh-cluster.orchestration.js';
import { refreshPoolOrchestration } from './refresh-pool.orchestration.js';
import { refreshSubscriptionOrchestration } from './refresh-subscription.orchestration.js';
import { releasePoolOrchestration } from './release-pool.orchestration.js';
import { retireClusterOrchestration } from './retire-cluster.orchestration.js';
import { retirePoolOrchestration } from './retire-pool.orchestration.js';
import { rollbackPoolOrchestration } from './rollback-pool.orchestration.js';

/** Every orchestration's typed handle, by its registered name. */
export const orchestrations = {
  refreshPool: refreshPoolOrchestration,
  refreshCluster: refreshClusterOrchestration,
  refreshSubscription: refreshSubscriptionOrchestration,
  clusterStatus: clusterStatusOrchestration,
  poolSignal: poolSignalOrchestration,
  rollbackPool: rollbackPoolOrchestration,
  releasePool: releasePoolOrchestration,
  reapCluster: reapClusterOrchestration,
  retirePool: retirePoolOrchestration,
  retireCluster: retireClusterOrchestration,
} as const satisfies { readonly [Name in OrchestrationName]: { readonly name: Name } };

export const ORCHESTRATORS: Readonly<Record<OrchestrationName, OrchestrationHandler>> = {
  refreshPool: orchestrations.refreshPool.handler,
  refreshCluster: orchestrations.refreshCluster.handler,
  refreshSubscription: orchestrations.refreshSubscription.handler,
  clusterStatus: orchestrations.clusterStatus.handler,
  poolSignal: orchestrations.poolSignal.handler,
  rollbackPool: orchestrations.rollbackPool.handler,
  releasePool: orchestrations.releasePool.handler,
  reapCluster: orchestrations.reapCluster.handler,
  retirePool: orchestrations.retirePool.handler,
  retireCluster: orchestrations.retireCluster.handler,
};
