/**
 * Plans the cluster once as a dry run does (one listing of its nodes, which also finds its pools), then
 * reads every pool's image status in parallel (current version, what built it, whether the model uses
 * it), so that every status says what `plan` would decide.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { planSummaryOf } from '../../shared/application/pool-plan.js';
import type { ClusterStatusRead, PoolStatus, UnreadablePool } from '../../shared/application/pool-status.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import type { CallOutcome } from './call.js';
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
  // The same planning `plan` runs (one listing of the cluster's nodes): the page and `status --json` say
  // what it decides, never a verdict of their own (a control-plane pool has an eligible scale set whose
  // nodes are all refused). It also finds the pools (the listing pool discovery would make again) and
  // where each one's scale set is.
  const planning = yield* call(context, activities.planCluster, { cluster }, { step: 'planning' });
  if (planning.pools.length === 0) return { pools: [], unreadable: [] };
  // Each pool read on the scale set the planning found it on: no pool is looked for again (a pool whose
  // scale set is gone would list every node of the cluster to find it).
  const inputs = planning.pools.map(({ pool, scaleSet }) => ({ cluster, pool, scaleSet }));
  // As many pools at a time as a cluster run works on (`maxParallelPools`, 4 by default): each read holds
  // a page of its pool's nodes, and the CLI's runner would otherwise read 8 at once (at 20 000 nodes the
  // status peaked at 296–348 MiB so, 272–276 MiB 4 at a time; docs/scale.md).
  const window = Math.max(1, planning.maxParallelPools);
  const outcomes: CallOutcome<PoolStatus>[] = [];
  for (let first = 0; first < inputs.length; first += window) {
    outcomes.push(
      ...(yield* callEach(context, activities.readPoolStatus, inputs.slice(first, first + window), {
        step: 'reading-status',
      })),
    );
  }
  // A status is a report: a pool that could not be read (its scale set deleted, a group the role does not
  // reach) is named with the reason, and every other pool is still reported.
  const statuses: PoolStatus[] = [];
  const unreadable: UnreadablePool[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    const entry = planning.pools[index];
    if (!outcome.ok) {
      unreadable.push({ pool: entry?.pool ?? '?', reason: outcome.failure.message });
      continue;
    }
    const status = outcome.value;
    statuses.push(
      entry === undefined
        ? status
        : {
            ...status,
            plan: entry.ok
              ? planSummaryOf(entry.plan.decision)
              : { outcome: 'not-planned', reason: entry.failure.message },
          },
    );
  }
  return { pools: statuses, unreadable };
}
