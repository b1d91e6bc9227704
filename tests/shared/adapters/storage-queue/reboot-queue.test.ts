/**
 * The reboot queue against a real Azurite: round trip of notices, poison handling as the host does it,
 * and the queue path end to end: an Event Grid message enqueued with @azure/storage-queue is polled,
 * normalized, signals the pool, and after the quiet period exactly one refresh runs on the simulator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { PoolSignalResult } from '../../../../functions/orchestrations/pool-signal.orchestration.js';
import { handleRebootQueueMessage } from '../../../../functions/triggers/reboot-notice.queue.js';
import {
  hostQueueConnection,
  poisonQueueName,
  StorageRebootQueue,
} from '../../../../shared/adapters/storage-queue/reboot-queue.js';
import { signalInstanceId } from '../../../../shared/application/orchestration-ids.js';
import { REBOOT_NOTICE_SCHEMA, type RebootNotice } from '../../../../shared/application/reboot-notices.js';
import { MAX_DEQUEUE_COUNT, type RebootHarness, startRebootHarness } from '../../../e2e/reboot-harness.js';
import { FakeDurableClient } from '../../../functions/triggers/durable-client-double.js';
import { annotatedEvent, fakeDependencies, recordingContext } from '../../../functions/triggers/fixtures.js';
import { type RunningAzurite, startAzurite } from './azurite.js';

const NOTICE: RebootNotice = {
  schema: REBOOT_NOTICE_SCHEMA,
  source: 'kured',
  cluster: 'prod',
  nodeName: 'node-1',
  observedAt: '2026-11-22T10:00:00.000Z',
  eventId: 'kured:1',
};

void describe('StorageRebootQueue (Azurite)', { timeout: 60_000 }, () => {
  let azurite: RunningAzurite;
  before(async () => {
    azurite = await startAzurite();
  });
  after(async () => {
    await azurite.stop();
  });

  void it('sends a notice as plain JSON and receives it back', async () => {
    const queue = new StorageRebootQueue({ connectionString: azurite.connectionString }, 'roundtrip');
    await queue.send(NOTICE);
    const [message] = await queue.receive(1, 5);
    assert.ok(message);
    assert.deepEqual(JSON.parse(message.text), NOTICE);
    assert.equal(message.dequeueCount, 1);
    await queue.delete(message);
    assert.deepEqual(await queue.receive(1, 5), []);
  });

  void it('moves a message to <queue>-poison', async () => {
    const queue = new StorageRebootQueue({ connectionString: azurite.connectionString }, 'poisoned');
    await queue.queue.createIfNotExists();
    await queue.queue.sendMessage('not a notice');
    const [message] = await queue.receive(1, 5);
    assert.ok(message);
    await queue.moveToPoison(message);
    assert.equal(queue.poison.name, poisonQueueName('poisoned'));
    assert.deepEqual(await queue.peekPoison(), ['not a notice']);
  });

  void it('a notice that keeps failing transiently lands in <queue>-poison after maxDequeueCount tries', async () => {
    const queue = new StorageRebootQueue({ connectionString: azurite.connectionString }, 'flaky');
    await queue.send(NOTICE);
    const deps = fakeDependencies();
    deps.nodeResourceId = () => Promise.reject(new Error('connecting to the API server: ECONNREFUSED'));
    const client = new FakeDurableClient();
    const context = recordingContext();
    let attempts = 0;
    // What the host's queue listener does: handle, delete on success, retry on failure, then poison.
    for (;;) {
      const [message] = await queue.receive(1, 30);
      if (message === undefined) break;
      attempts += 1;
      try {
        await handleRebootQueueMessage(message.text, client, context, deps);
        await queue.delete(message);
      } catch {
        if (message.dequeueCount >= MAX_DEQUEUE_COUNT) await queue.moveToPoison(message);
        else await queue.releaseForRetry(message);
      }
    }
    assert.equal(attempts, MAX_DEQUEUE_COUNT);
    assert.deepEqual(
      (await queue.peekPoison()).map((text) => JSON.parse(text) as RebootNotice),
      [NOTICE],
    );
    assert.equal(client.started.length, 0);
  });

  void it('reads the host connection settings', () => {
    const credential = () => ({ getToken: () => Promise.resolve(null) });
    assert.deepEqual(hostQueueConnection({ AzureWebJobsStorage: azurite.connectionString }, credential), {
      connectionString: azurite.connectionString,
    });
    const identity = hostQueueConnection({ AzureWebJobsStorage__accountName: 'stvmssp' }, credential);
    assert.equal(
      identity !== undefined && 'queueServiceUrl' in identity ? identity.queueServiceUrl : undefined,
      'https://stvmssp.queue.core.windows.net',
    );
    assert.equal(hostQueueConnection({}, credential), undefined);
  });
});

void describe('queue path on the simulator', { timeout: 120_000 }, () => {
  let harness: RebootHarness;
  before(async () => {
    harness = await startRebootHarness();
  });
  after(async () => {
    await harness.stop();
  });

  void it('an Event Grid message signals the pool; after the quiet period exactly one refresh runs', async () => {
    const pool = 'k8s-pool2-12345678-vmss';
    const instance = harness.session.running.world.compute
      .listInstances(
        `/subscriptions/${harness.session.running.subscriptionId}/resourceGroups/rg-K8s-Prod/providers/Microsoft.Compute/virtualMachineScaleSets/${pool}`,
      )
      .at(0);
    assert.ok(instance);
    // What an Event Grid → storage queue subscription writes: the event, and a batch of two more.
    await harness.queue.queue.sendMessage(
      JSON.stringify(annotatedEvent(instance.id, 'VirtualMachineRestarted', 'eg-1')),
    );
    await harness.queue.queue.sendMessage(
      Buffer.from(
        JSON.stringify([
          annotatedEvent(instance.id, 'VirtualMachineRestarted', 'eg-2'),
          annotatedEvent(instance.id, 'VirtualMachineCrashed', 'eg-3'),
        ]),
      ).toString('base64'),
    );
    const pumped = await harness.pump();
    assert.equal(pumped.failures, 0);
    assert.deepEqual(
      pumped.results.flatMap((r) => r.signalled.map((s) => s.how)),
      ['started', 'raised'],
    );
    assert.deepEqual(
      pumped.results.flatMap((r) => r.dropped.map((d) => d.reason)),
      ['not-a-reboot'],
    );

    const signalId = signalInstanceId('prod', pool);
    harness.releaseTimers();
    const done = await harness.runner.resume(signalId);
    assert.equal(done.runtimeStatus, 'Completed', JSON.stringify(done.failure));
    const output = done.output as PoolSignalResult;
    assert.equal(output.notices, 2);
    assert.equal(output.runs.length, 1);
    assert.equal(output.runs[0]?.instanceId, `refresh:prod:${pool}`);
    const refresh = await harness.runner.getStatus(`refresh:prod:${pool}`);
    assert.equal(refresh?.runtimeStatus, 'Completed', JSON.stringify(refresh?.failure));
  });
});
