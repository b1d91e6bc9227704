/**
 * The schedule (`%VMSSP_SCHEDULE%`, NCRONTAB, UTC): auto mode for every configured cluster. Clusters are
 * grouped by Azure subscription, one `refresh-subscription:<subscriptionId>` instance each, which admits
 * the subscription's pools a few at a time (refresh-subscription.orchestration.ts) and skips
 * a cluster whose own run is still active; a subscription whose previous run is still active is skipped.
 */
import { randomUUID } from 'node:crypto';

import type { InvocationContext, Timer } from '@azure/functions';
import * as df from 'durable-functions';

import { subscriptionInstanceId } from '../../shared/application/orchestration-ids.js';
import type { OrchestrationClient, StartOutcome } from '../../shared/application/singleton.js';
import { startSingleton } from '../../shared/application/singleton.js';
import { clustersBySubscription } from '../../shared/domain/admission.js';
import { messageOf } from '../../shared/domain/errors.js';
import { startRequest } from '../orchestration.js';
import { orchestrations } from '../orchestrations/index.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export interface SubscriptionScheduleOutcome {
  readonly subscriptionId: string;
  readonly clusters: readonly string[];
  readonly outcome: StartOutcome['kind'] | 'failed';
  readonly instanceId: string;
}

export async function handleRefreshSchedule(
  timer: Timer,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters' | 'admission'>,
): Promise<SubscriptionScheduleOutcome[]> {
  if (timer.isPastDue) context.warn('refresh schedule is past due; running now');
  const outcomes: SubscriptionScheduleOutcome[] = [];
  for (const { subscriptionId, clusters } of clustersBySubscription(deps.clusters)) {
    const instanceId = subscriptionInstanceId(subscriptionId);
    try {
      const started = await startSingleton(
        client,
        startRequest(orchestrations.refreshSubscription, instanceId, {
          subscriptionId,
          clusters: [...clusters],
          ...deps.admission,
          trigger: 'timer',
          // Fresh randomness per start: run ids of two task hubs differ.
          runSeed: randomUUID(),
        }),
      );
      if (started.kind === 'running') {
        context.log('refresh schedule: skipping subscription, its run is still active', {
          subscriptionId,
          instanceId: started.instanceId,
        });
      } else {
        context.log('refresh schedule: started subscription run', { subscriptionId, instanceId, clusters });
      }
      outcomes.push({ subscriptionId, clusters, outcome: started.kind, instanceId });
    } catch (error) {
      // One subscription failing to start does not keep the others from theirs.
      context.error('refresh schedule: starting the subscription run failed', {
        subscriptionId,
        instanceId,
        error: messageOf(error),
      });
      outcomes.push({ subscriptionId, clusters, outcome: 'failed', instanceId });
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
