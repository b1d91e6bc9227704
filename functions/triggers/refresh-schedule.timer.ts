/**
 * The schedule (`%VMSSP_SCHEDULE%`, NCRONTAB, UTC): auto mode for every configured cluster, one
 * `refresh:<cluster>` instance each, skipping a cluster whose previous run is still active.
 */
import { randomUUID } from 'node:crypto';

import type { InvocationContext, Timer } from '@azure/functions';
import * as df from 'durable-functions';

import { clusterInstanceId, ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { RefreshClusterInput } from '../../shared/application/refresh-contracts.js';
import type { OrchestrationClient, StartOutcome } from '../../shared/application/singleton.js';
import { startSingleton } from '../../shared/application/singleton.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export interface ScheduleOutcome {
  readonly cluster: string;
  readonly outcome: StartOutcome['kind'] | 'failed';
  readonly instanceId: string;
}

export async function handleRefreshSchedule(
  timer: Timer,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters'>,
): Promise<ScheduleOutcome[]> {
  if (timer.isPastDue) context.warn('refresh schedule is past due; running now');
  const outcomes: ScheduleOutcome[] = [];
  // One cluster failing to start must not keep the others from their run.
  for (const { name: cluster } of deps.clusters) {
    const instanceId = clusterInstanceId(cluster);
    const input: RefreshClusterInput = { cluster, trigger: 'timer', runSeed: randomUUID() };
    try {
      const started = await startSingleton(client, { name: ORCHESTRATION.refreshCluster, instanceId, input });
      if (started.kind === 'running') {
        context.log('refresh schedule: skipping cluster, its run is still active', { cluster, instanceId });
      } else {
        context.log('refresh schedule: started cluster run', { cluster, instanceId });
      }
      outcomes.push({ cluster, outcome: started.kind, instanceId });
    } catch (error) {
      context.error('refresh schedule: starting the cluster run failed', {
        cluster,
        instanceId,
        error: error instanceof Error ? error.message : String(error),
      });
      outcomes.push({ cluster, outcome: 'failed', instanceId });
    }
  }
  return outcomes;
}

export function registerRefreshSchedule(): void {
  df.app.client.timer('refreshSchedule', {
    schedule: '%VMSSP_SCHEDULE%',
    handler: async (timer: Timer, client: df.DurableClient, context: InvocationContext): Promise<void> => {
      await handleRefreshSchedule(timer, client, context, workerTriggerDependencies());
    },
  });
}
