/**
 * Reads every pool's image status in parallel (current version, what built it, whether the model uses it),
 * then plans the cluster once as a dry run does, so that every status says what `plan` would decide.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { planSummaryOf } from '../../shared/application/pool-plan.js';
import type { ClusterStatusRead, PoolStatus, UnreadablePool } from '../../shared/application/pool-status.js';
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
): Generator<Task, ClusterStatusRead, unknown> {
  const { pools, scaleSets } = yield* call(
    context,
    activities.listPools,
    { cluster },
    { step: 'listing-pools' },
  );
  if (pools.length === 0) return { pools: [], unreadable: [] };
  const outcomes = yield* callEach(
    context,
    activities.readPoolStatus,
    // Each pool's scale set where the listing found it: no pool is looked for again (a pool whose scale
    // set is gone would list every node of the cluster to find it).
    pools.map((pool, index) => {
      // A history recorded before the listing named scale sets has none: the pool is looked for.
      const scaleSet = (scaleSets as typeof scaleSets | undefined)?.[index];
      return scaleSet === undefined ? { cluster, pool } : { cluster, pool, scaleSet };
    }),
    { step: 'reading-status' },
  );
  // A status is a report: a pool that could not be read (its scale set deleted, a group the role does not
  // reach) is named with the reason, and every other pool is still reported.
  const statuses: PoolStatus[] = [];
  const unreadable: UnreadablePool[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.ok) statuses.push(outcome.value);
    else unreadable.push({ pool: pools[index] ?? '?', reason: outcome.failure.message });
  }
  // The same planning `plan` runs (one listing of the cluster's nodes): the page and `status --json` say
  // what it decides, never a verdict of their own (a control-plane pool has an eligible scale set whose
  // nodes are all refused).
  const planning = yield* call(context, activities.planCluster, { cluster }, { step: 'planning' });
  const planned = statuses.map((status): PoolStatus => {
    const entry = planning.pools.find((candidate) => candidate.pool === status.pool);
    if (entry === undefined) return status;
    return {
      ...status,
      plan: entry.ok
        ? planSummaryOf(entry.plan.decision)
        : { outcome: 'not-planned', reason: entry.failure.message },
    };
  });
  return { pools: planned, unreadable };
}
