/** Reads every pool's image status in parallel: current version, what built it, whether the model uses it. */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { PoolStatus } from '../../shared/application/pool-status.js';
import { activities } from '../activities.js';
import { call, callEach } from './call.js';

export function* clusterStatusOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolStatus[], unknown> {
  const { cluster } = context.df.getInput<{ cluster: string }>();
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
