/** Read-only activities: a cluster's pools, one pool's plan, one pool's image status. */
import { listPoolsOfCluster, planPoolForCluster } from '../plan-pool.js';
import { readPoolStatus } from '../pool-status.js';
import { defineActivity } from './activity.js';
import { ClusterInput, Name } from './inputs.js';

const listPools = defineActivity('listPools', ClusterInput, async (deps, { cluster }) => {
  const handle = await deps.cluster(cluster);
  const pools = await listPoolsOfCluster(handle);
  return {
    pools: pools.map((pool) => pool.name),
    maxParallelPools: handle.configuration.maxParallelPools,
  };
});

const planPool = defineActivity(
  'planPool',
  ClusterInput.extend({ pool: Name, node: Name.optional() }),
  async (deps, input) =>
    planPoolForCluster(await deps.cluster(input.cluster), input.pool, input.node, deps.now()),
);

const readPoolStatusActivity = defineActivity(
  'readPoolStatus',
  ClusterInput.extend({ pool: Name }),
  async (deps, input) => readPoolStatus(await deps.cluster(input.cluster), input.pool, deps.now()),
);

/** Planning and status, in the catalogue. */
export const PLANNING_ACTIVITIES = { listPools, planPool, readPoolStatus: readPoolStatusActivity } as const;
