/** Reads every pool's image status in parallel: current version, what built it, whether the model uses it. */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolStatus } from '../../shared/application/pool-status.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call, callEach } from './call.js';
import { ClusterStatusInputSchema } from './inputs.js';

/** Every pool's image status (`vmss-prototype status`). */
export const clusterStatusOrchestration = defineOrchestration(
  ORCHESTRATION.clusterStatus,
  ClusterStatusInputSchema,
  runClusterStatus,
);

function* runClusterStatus(
  context: OrchestrationContext,
  { cluster }: { readonly cluster: string },
): Generator<Task, PoolStatus[], unknown> {
  const { pools } = yield* call(context, activities.listPools, { cluster }, { step: 'listing-pools' });
  if (pools.length === 0) return [];
  const outcomes = yield* callEach(
    context,
    activities.readPoolStatus,
    pools.map((pool) => ({ cluster, pool })),
    { step: 'reading-status' },
  );
  return outcomes.map((outcome) => {
    if (!outcome.ok) throw outcome.failure;
    return outcome.value;
  });
}
