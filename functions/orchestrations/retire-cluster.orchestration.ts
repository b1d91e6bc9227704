/**
 * The retirement timer's run over one cluster (`retire:<cluster>`, every quarter hour;
 * retirement-schedule.timer.ts): the pools whose scheduled retirement is enabled and may act now (a
 * window is open, or they have none) each get their retirement run (`retire:<cluster>:<pool>`), one after
 * another; the run plans under the pool's lease and does nothing when nothing is due or the window's
 * budget is spent. One pool failing does not stop the others. Before them, the actions the pools'
 * PoolImagePolicy objects ask for (policy-tick.ts); after them, every policy's status.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION, retireInstanceId } from '../../shared/application/orchestration-ids.js';
import type {
  RetireClusterInput,
  RetireClusterResult,
} from '../../shared/application/retirement-contracts.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call } from './call.js';
import { CHILD_ALREADY_RUNNING, childResult, startChild } from './children.js';
import { RetireClusterInputSchema } from './inputs.js';
import { actOnPoolPolicies, writePolicyStatuses } from './policy-tick.js';
import { retirePoolOrchestration } from './retire-pool.orchestration.js';

export const retireClusterOrchestration = defineOrchestration(
  ORCHESTRATION.retireCluster,
  RetireClusterInputSchema,
  runRetireCluster,
);

function* runRetireCluster(
  context: OrchestrationContext,
  input: RetireClusterInput,
): Generator<Task, RetireClusterResult, unknown> {
  const { cluster } = input;
  // What the pools' PoolImagePolicy objects ask for first (docs/pool-policy.md): a rollback, a retirement.
  context.df.setCustomStatus({ cluster, step: 'reading-pool-policies' });
  const policies = yield* actOnPoolPolicies(context, input);
  context.df.setCustomStatus({ cluster, step: 'listing-pools' });
  const due = yield* call(
    context,
    activities.listPoolsDueForRetirement,
    { cluster },
    { step: 'listing-pools' },
  );
  const pools: RetireClusterResult['pools'][number][] = [];
  for (const pool of due) {
    context.df.setCustomStatus({ cluster, pool, step: 'retiring' });
    const child = startChild(
      context,
      retirePoolOrchestration,
      {
        cluster,
        pool,
        trigger: input.trigger,
        runSeed: context.df.newGuid(`${input.runSeed ?? ''}|retire|${pool}`),
      },
      retireInstanceId(cluster, pool),
    );
    yield child.task;
    const ended = yield* childResult(context, child);
    if (ended.ok) {
      pools.push(ended.output);
    } else if (ended.failure.code === CHILD_ALREADY_RUNNING) {
      pools.push({
        cluster,
        pool,
        outcome: 'skipped',
        reason: 'a retirement of the pool is already running',
      });
    } else {
      pools.push({ cluster, pool, outcome: 'failed', reason: ended.failure.message });
    }
  }
  // Every policy's status, after the tick's runs (those runs wrote theirs already: unchanged ones are not written).
  context.df.setCustomStatus({ cluster, step: 'writing-policy-status' });
  yield* writePolicyStatuses(context, cluster, policies.pools);
  context.df.setCustomStatus({ cluster, step: 'done' });
  return {
    cluster,
    pools,
    ...(policies.actions.length === 0 ? {} : { policyActions: policies.actions }),
    ...(policies.failure === undefined ? {} : { policyFailure: policies.failure }),
  };
}
