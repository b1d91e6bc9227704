/** Read-only activities: a cluster's pools, one pool's plan, one pool's image status. */
import { planPoolForCluster, planPoolsOfCluster } from '../plan-cluster.js';
import { listPoolsOfCluster } from '../pool-lookup.js';
import { readPoolStatus } from '../pool-status.js';
import { defineActivity, failureOf } from './activity.js';
import { ClusterInput, Name, ScaleSetRefInput } from './inputs.js';

const listPools = defineActivity('listPools', ClusterInput, async (deps, { cluster }) => {
  const handle = await deps.cluster(cluster);
  const pools = await listPoolsOfCluster(handle);
  return {
    pools: pools.map((pool) => pool.name),
    // Where each pool's scale set is, in the same order: a status reads it there (readPoolStatus).
    scaleSets: pools.map((pool) => pool.scaleSet),
    maxParallelPools: handle.configuration.maxParallelPools,
  };
});

const planPool = defineActivity(
  'planPool',
  ClusterInput.extend({ pool: Name, node: Name.optional() }),
  async (deps, input) =>
    planPoolForCluster(await deps.cluster(input.cluster), input.pool, input.node, deps.now()),
);

/**
 * Every pool's plan from one listing of the cluster's nodes (the cluster run's planning step), with the
 * scale set each pool was found on (a status reads each pool there, without looking for it again). A pool
 * that cannot be planned is a failure value in its place; a transient failure fails the call (retried).
 */
const planCluster = defineActivity('planCluster', ClusterInput, async (deps, { cluster }) => {
  const handle = await deps.cluster(cluster);
  const outcomes = await planPoolsOfCluster(handle, deps.now());
  return {
    maxParallelPools: handle.configuration.maxParallelPools,
    pools: outcomes.map((outcome) =>
      outcome.ok
        ? { pool: outcome.pool, scaleSet: outcome.scaleSet, ok: true as const, plan: outcome.plan }
        : {
            pool: outcome.pool,
            scaleSet: outcome.scaleSet,
            ok: false as const,
            failure: failureOf(outcome.error),
          },
    ),
  };
});

const readPoolStatusActivity = defineActivity(
  'readPoolStatus',
  ClusterInput.extend({ pool: Name, scaleSet: ScaleSetRefInput.optional() }),
  async (deps, input) =>
    readPoolStatus(
      await deps.cluster(input.cluster),
      input.pool,
      deps.now(),
      input.scaleSet === undefined ? undefined : { name: input.pool, scaleSet: input.scaleSet },
    ),
);

/** Planning and status, in the catalogue. */
export const PLANNING_ACTIVITIES = {
  listPools,
  planPool,
  planCluster,
  readPoolStatus: readPoolStatusActivity,
} as const;
