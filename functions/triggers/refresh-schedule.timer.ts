/**
 * The schedule (`%VMSSP_SCHEDULE%`, NCRONTAB, UTC): auto mode for every configured cluster, one
 * `refresh:<cluster>` instance each, skipping a cluster whose previous run is still active.
 */
import type { InvocationContext, Timer } from '@azure/functions';
import * as df from 'durable-functions';

import { clusterInstanceId } from '../../shared/application/orchestration-ids.js';
import type { OrchestrationClient } from '../../shared/application/singleton.js';
import { orchestrations } from '../orchestrations/index.js';
import type { ScheduleOutcome } from './cluster-timer.js';
import { startForEveryCluster } from './cluster-timer.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export async function handleRefreshSchedule(
  timer: Timer,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters'>,
): Promise<ScheduleOutcome[]> {
  return startForEveryCluster(timer, client, context, deps, {
    label: 'refresh schedule',
    orchestration: orchestrations.refreshCluster,
    instanceIdOf: clusterInstanceId,
    inputOf: (cluster, runSeed) => ({ cluster, trigger: 'timer', runSeed }),
  });
}

export function registerRefreshSchedule(): void {
  df.app.client.timer('refreshSchedule', {
    schedule: '%VMSSP_SCHEDULE%',
    handler: async (timer: Timer, client: df.DurableClient, context: InvocationContext): Promise<void> => {
      await handleRefreshSchedule(timer, client, context, workerTriggerDependencies());
    },
  });
}
