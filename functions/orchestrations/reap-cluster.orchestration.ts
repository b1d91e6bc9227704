/**
 * The reaper on its own timer (`%VMSSP_REAPER_SCHEDULE%`, every 5 minutes by default): for each
 * pool of a cluster, gives back what runs that are no longer alive left (`releaseLeftovers`, as `release`
 * does). It only reads unless something is to be given back, and leaves a pool a live run holds alone; so a
 * dead run's node is back within its lease's expiry plus one period, not at the next refresh. One survey
 * reads every pool (the listings pools share once: cluster-holdings.ts); only the pools it finds something
 * to give back in (or could not read) get a give-back, one after another (each holds its pool's lease
 * alone, and reads the pool again under it); one failing does not stop the others.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type {
  ReapClusterInput,
  ReapClusterResult,
  ReleasePoolResult,
} from '../../shared/application/refresh-contracts.js';
import { definedOnly } from '../../shared/domain/optional.js';
import { activities } from '../activities.js';
import { defineOrchestration } from '../orchestration.js';
import { call, childFailureMessage } from './call.js';
import { ReapClusterInputSchema } from './inputs.js';
import { releaseLeftovers } from './release-pool.orchestration.js';

/** The reaper timer's run over a cluster's pools (`reap:<cluster>`). */
export const reapClusterOrchestration = defineOrchestration(
  ORCHESTRATION.reapCluster,
  ReapClusterInputSchema,
  runReapCluster,
);

function* runReapCluster(
  context: OrchestrationContext,
  input: ReapClusterInput,
): Generator<Task, ReapClusterResult, unknown> {
  const { cluster } = input;
  context.df.setCustomStatus({ cluster, step: 'listing-pools' });
  const survey = yield* call(
    context,
    activities.surveyClusterHoldings,
    { cluster },
    { step: 'listing-pools' },
  );
  const results: ReleasePoolResult[] = [];
  for (const surveyed of survey.pools) {
    const { pool } = surveyed;
    if (surveyed.outcome !== 'to-give-back') {
      results.push({
        cluster,
        pool,
        outcome: surveyed.outcome,
        ...definedOnly({ holder: surveyed.holder }),
        actions: [],
        kept: surveyed.kept,
        failures: [],
      });
      continue;
    }
    context.df.setCustomStatus({ cluster, pool, step: 'giving-back-leftovers' });
    try {
      results.push(
        yield* releaseLeftovers(context, {
          cluster,
          pool,
          trigger: input.trigger,
          runSeed: context.df.newGuid(`${input.runSeed ?? ''}|reap|${pool}`),
          purpose: 'reap',
        }),
      );
    } catch (error) {
      results.push({
        cluster,
        pool,
        outcome: 'failed',
        actions: [],
        kept: [],
        failures: [childFailureMessage(error)],
      });
    }
  }
  context.df.setCustomStatus({ cluster, step: 'done' });
  return { cluster, pools: results };
}
