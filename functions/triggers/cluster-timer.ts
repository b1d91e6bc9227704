/**
 * What the timers share: start one singleton orchestration per configured cluster, skipping a cluster
 * whose instance (or a blocker) is still active. One cluster failing to start does not keep the others
 * from theirs: it is logged and reported.
 */
import { randomUUID } from 'node:crypto';

import type { InvocationContext, Timer } from '@azure/functions';

import type { OrchestrationClient, StartOutcome } from '../../shared/application/singleton.js';
import { startSingleton } from '../../shared/application/singleton.js';
import { messageOf } from '../../shared/domain/errors.js';
import type { OrchestrationHandle } from '../orchestration.js';
import { startRequest } from '../orchestration.js';
import type { TriggerDependencies } from './trigger-dependencies.js';

export interface ScheduleOutcome {
  readonly cluster: string;
  readonly outcome: StartOutcome['kind'] | 'failed';
  readonly instanceId: string;
}

export interface ClusterTimerSpec<Input> {
  /** The timer's name in logs (`refresh schedule`). */
  readonly label: string;
  /** The orchestration to start. */
  readonly orchestration: OrchestrationHandle<Input, unknown>;
  instanceIdOf(cluster: string): string;
  /** The orchestration's input; `runSeed` is fresh randomness per start (run ids of two task hubs differ). */
  inputOf(cluster: string, runSeed: string): NoInfer<Input>;
  /** Instances that, while active, mean this cluster's start is skipped too. */
  blockersOf?(cluster: string): readonly string[];
}

export async function startForEveryCluster<Input>(
  timer: Timer,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters'>,
  spec: ClusterTimerSpec<Input>,
): Promise<ScheduleOutcome[]> {
  if (timer.isPastDue) context.warn(`${spec.label} is past due; running now`);
  const outcomes: ScheduleOutcome[] = [];
  for (const { name: cluster } of deps.clusters) {
    const instanceId = spec.instanceIdOf(cluster);
    try {
      const started = await startSingleton(
        client,
        startRequest(
          spec.orchestration,
          instanceId,
          spec.inputOf(cluster, randomUUID()),
          spec.blockersOf?.(cluster),
        ),
      );
      if (started.kind === 'running') {
        context.log(`${spec.label}: skipping cluster, a run is still active`, {
          cluster,
          instanceId: started.instanceId,
        });
      } else {
        context.log(`${spec.label}: started cluster run`, { cluster, instanceId });
      }
      outcomes.push({ cluster, outcome: started.kind, instanceId });
    } catch (error) {
      context.error(`${spec.label}: starting the cluster run failed`, {
        cluster,
        instanceId,
        error: messageOf(error),
      });
      outcomes.push({ cluster, outcome: 'failed', instanceId });
    }
  }
  return outcomes;
}
