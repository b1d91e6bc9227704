/**
 * The reaper's schedule (`%VMSSP_REAPER_SCHEDULE%`, NCRONTAB, UTC, every 5 minutes by default): one
 * `reap:<cluster>` instance per configured cluster gives back what dead runs left in its pools.
 * Skipped while the cluster's previous reaper run or its refresh (`refresh:<cluster>`, which reaps the
 * pools it does not refresh, each pool run its own) is active.
 */
import type { InvocationContext, Timer } from '@azure/functions';
import * as df from 'durable-functions';

import { clusterInstanceId, reapInstanceId } from '../../shared/application/orchestration-ids.js';
import type { OrchestrationClient } from '../../shared/application/singleton.js';
import { orchestrations } from '../orchestrations/index.js';
import type { ScheduleOutcome } from './cluster-timer.js';
import { startForEveryCluster } from './cluster-timer.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export async function handleReaperSchedule(
  timer: Timer,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters'>,
): Promise<ScheduleOutcome[]> {
  return startForEveryCluster(timer, client, context, deps, {
    label: 'reaper schedule',
    orchestration: orchestrations.reapCluster,
    instanceIdOf: reapInstanceId,
    inputOf: (cluster, runSeed) => ({ cluster, trigger: 'reaper-timer', runSeed }),
    blockersOf: (cluster) => [clusterInstanceId(cluster)],
  });
}

export function registerReaperSchedule(): void {
  df.app.client.timer('reaperSchedule', {
    schedule: '%VMSSP_REAPER_SCHEDULE%',
    handler: async (timer: Timer, client: df.DurableClient, context: InvocationContext): Promise<void> => {
      await handleReaperSchedule(timer, client, context, workerTriggerDependencies());
    },
  });
}
