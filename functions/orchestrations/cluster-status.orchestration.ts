/** Reads every pool's image status in parallel: current version, what built it, whether the model uses it. */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { PoolStatus } from '../../shared/application/pool-status.js';
import { ACTIVITY } from '../../shared/application/refresh-contracts.js';
import { callStep } from './orchestration-steps.js';
import type { ClusterPools } from './refresh-cluster.orchestration.js';

export function* clusterStatusOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolStatus[], unknown> {
  const { cluster } = context.df.getInput<{ cluster: string }>();
  const { pools } = yield* callStep<ClusterPools>(context, 'listing-pools', ACTIVITY.listPools, { cluster });
  if (pools.length === 0) return [];
  return (yield context.df.Task.all(
    pools.map((pool) => context.df.callActivity(ACTIVITY.readPoolStatus, { cluster, pool })),
  )) as PoolStatus[];
}
