/**
 * The retirement timer (docs/retirement.md): every quarter hour, one `retire:<cluster>` run per
 * configured cluster starts the retirement of the pools whose scheduled retirement may act now. The pace
 * is the operator's, set per pool by windows and budgets: this timer only bounds how soon after a window
 * opens its first node goes (at most 15 minutes). Skipped while the cluster's previous run is active.
 */
import type { InvocationContext, Timer } from '@azure/functions';
import * as df from 'durable-functions';

import { retireClusterInstanceId } from '../../shared/application/orchestration-ids.js';
import type { OrchestrationClient } from '../../shared/application/singleton.js';
import { orchestrations } from '../orchestrations/index.js';
import type { ScheduleOutcome } from './cluster-timer.js';
import { startForEveryCluster } from './cluster-timer.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

/** Every quarter hour, on the quarter (NCRONTAB, UTC). */
export const RETIREMENT_SCHEDULE = '0 */15 * * * *';

export async function handleRetirementSchedule(
  timer: Timer,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters'>,
): Promise<ScheduleOutcome[]> {
  return startForEveryCluster(timer, client, context, deps, {
    label: 'retirement schedule',
    orchestration: orchestrations.retireCluster,
    instanceIdOf: retireClusterInstanceId,
    inputOf: (cluster, runSeed) => ({ cluster, trigger: 'retirement-timer', runSeed }),
  });
}

export function registerRetirementSchedule(): void {
  df.app.client.timer('retirementSchedule', {
    schedule: RETIREMENT_SCHEDULE,
    handler: async (timer: Timer, client: df.DurableClient, context: InvocationContext): Promise<void> => {
      await handleRetirementSchedule(timer, client, context, workerTriggerDependencies());
    },
  });
}
