/** The orchestrators by name: registered by the function app and run as they are by the local runner. */
import type { OrchestrationHandler } from 'durable-functions';

import type { OrchestrationName } from '../../shared/application/orchestration-ids.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { clusterStatusOrchestration } from './cluster-status.orchestration.js';
import { poolSignalOrchestration } from './pool-signal.orchestration.js';
import { reapClusterOrchestration } from './reap-cluster.orchestration.js';
import { refreshClusterOrchestration } from './refresh-cluster.orchestration.js';
import { refreshPoolOrchestration } from './refresh-pool.orchestration.js';
import { releasePoolOrchestration } from './release-pool.orchestration.js';
import { rollbackPoolOrchestration } from './rollback-pool.orchestration.js';

export const ORCHESTRATORS: Readonly<Record<OrchestrationName, OrchestrationHandler>> = {
  [ORCHESTRATION.refreshPool]: refreshPoolOrchestration,
  [ORCHESTRATION.refreshCluster]: refreshClusterOrchestration,
  [ORCHESTRATION.clusterStatus]: clusterStatusOrchestration,
  [ORCHESTRATION.poolSignal]: poolSignalOrchestration,
  [ORCHESTRATION.rollbackPool]: rollbackPoolOrchestration,
  [ORCHESTRATION.releasePool]: releasePoolOrchestration,
  [ORCHESTRATION.reapCluster]: reapClusterOrchestration,
};
