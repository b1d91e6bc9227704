/**
 * The reboot-notice path wired for tests: a real Azurite queue, the in-process simulator (manual clock), the
 * product's composition against it, the local durable runner (virtual time) with the refresh
 * orchestrators plus the debounce, and a queue pump that does what the Functions host does.
 */
import azureFunctions from '@azure/functions';

import { createDurableRunner, type DurableRunner, type RunnerOptions } from '../../cli/runner/index.js';
import { SAMPLE_SCENARIO } from '../../cli/session.js';
import { type SimulatorSession, startSimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import {
  handleRebootQueueMessage,
  type QueueMessageResult,
} from '../../functions/triggers/reboot-notice.queue.js';
import type { HttpOrchestrationClient } from '../../functions/triggers/refresh-api.http.js';
import {
  createTriggerDependencies,
  type TriggerDependencies,
} from '../../functions/triggers/trigger-dependencies.js';
import { StorageRebootQueue } from '../../shared/adapters/storage-queue/reboot-queue.js';
import { compose } from '../../shared/composition-root.js';
import { runnerClient } from '../functions/triggers/durable-client-double.js';
import { type RunningAzurite, startAzurite } from '../shared/adapters/storage-queue/azurite.js';

/** host.json `queues.maxDequeueCount`. */
export const MAX_DEQUEUE_COUNT = 5;

export interface RebootHarness {
  readonly azurite: RunningAzurite;
  readonly session: SimulatorSession;
  readonly queue: StorageRebootQueue;
  readonly deps: TriggerDependencies;
  readonly runner: DurableRunner;
  readonly client: HttpOrchestrationClient;
  /** Receives and handles every visible message once, as the host's queue listener does. */
  pump(): Promise<{ results: QueueMessageResult[]; failures: number }>;
  /** Lets durable timers fire (until then they wait, so notices can arrive within the quiet period). */
  releaseTimers(): void;
  /** Holds durable timers due after now again. */
  holdTimers(): void;
  stop(): Promise<void>;
}

export interface RebootHarnessOptions {
  readonly leastPrivilege?: boolean;
  /**
   * Default `manual`: simulated time moves only when the test or a durable timer moves it, so the queue
   * round trips (wall time, long on a busy machine) never read as late deliveries.
   */
  readonly clock?: 'manual' | 'scaled';
}

export async function startRebootHarness(options: RebootHarnessOptions = {}): Promise<RebootHarness> {
  const azurite = await startAzurite();
  let session: SimulatorSession;
  try {
    session = await startSimulatorSession({
      scenarioPath: SAMPLE_SCENARIO,
      clock: options.clock ?? 'manual',
      ...(options.leastPrivilege === undefined ? {} : { leastPrivilege: options.leastPrivilege }),
    });
  } catch (error) {
    await azurite.stop();
    throw error;
  }
  // As the e2e harness: a passed canary stays (`keep`), so the nodes a test reboots are still there after
  // its first refresh; keep-size has tests of its own.
  const clusters = JSON.parse(session.env['VMSSP_CLUSTERS'] ?? '[]') as Record<string, unknown>[];
  if (clusters[0] !== undefined) clusters[0]['promotion'] = { canary: { afterPass: 'keep' } };
  const composition = compose({
    env: { ...session.env, VMSSP_CLUSTERS: JSON.stringify(clusters), VMSSP_QUIET_PERIOD: '10m' },
    simulator: session.endpoints,
    now: () => new Date(session.clock.now()),
  });
  const queue = new StorageRebootQueue(
    { connectionString: azurite.connectionString },
    composition.settings.rebootQueue,
  );
  // Event Grid's subscription (and infra/) creates the queue before anything is delivered.
  await queue.queue.createIfNotExists();
  const deps = createTriggerDependencies(composition, queue);
  const runnerOptions: RunnerOptions = {
    ...durableRegistry(composition.dependencies),
    clock: session.clock,
    maxConcurrentActivities: 8,
    timerHorizonMs: session.clock.now(),
  };
  const runner = createDurableRunner(runnerOptions);
  const client = runnerClient(runner);
  const context = new azureFunctions.InvocationContext({
    invocationId: 'queue',
    functionName: 'rebootNoticeQueue',
    logHandler: () => undefined,
  });
  return {
    azurite,
    session,
    queue,
    deps,
    runner,
    client,
    async pump() {
      const results: QueueMessageResult[] = [];
      let failures = 0;
      for (const message of await queue.receive(32, 1)) {
        try {
          results.push(await handleRebootQueueMessage(message.text, client, context, deps));
          await queue.delete(message);
        } catch {
          failures += 1;
          if (message.dequeueCount >= MAX_DEQUEUE_COUNT) await queue.moveToPoison(message);
          else await queue.releaseForRetry(message);
        }
      }
      return { results, failures };
    },
    releaseTimers() {
      runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
    },
    holdTimers() {
      runnerOptions.timerHorizonMs = session.clock.now();
    },
    async stop() {
      await session.stop();
      await azurite.stop();
    },
  };
}
