/**
 * Run events end to end: real refreshes on the simulator publish CloudEvents 1.0 through
 * @azure/eventgrid to a local HTTPS receiver speaking Event Grid's publishing protocol, with a bearer
 * token; in order, once each (durable replays publish nothing twice); a topic that fails or is down does
 * not fail the refresh; a canary check pod's secret never appears in any event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AccessToken, TokenCredential } from '@azure/core-auth';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { ReceivedBatch } from './event-receiver.js';
import { startEventReceiver } from './event-receiver.js';
import type { Harness, HarnessOptions } from './harness.js';
import {
  assertIdentityClean,
  nodeOf,
  POOL1,
  POOL2,
  startHarness,
  withCheckPodCanary,
  withUndrainablePod,
} from './harness.js';

const FAKE_TOKEN = 'fake-event-grid-token';

function fakeCredential(scopes: string[]): TokenCredential {
  return {
    getToken: (requested): Promise<AccessToken> => {
      scopes.push(...(Array.isArray(requested) ? requested : [requested]));
      return Promise.resolve({ token: FAKE_TOKEN, expiresOnTimestamp: Date.now() + 3_600_000 });
    },
  };
}

async function withReceiver(
  options: HarnessOptions,
  test: (
    harness: Harness,
    receiver: Awaited<ReturnType<typeof startEventReceiver>>,
    extra: {
      scopes: string[];
      logs: string[];
    },
  ) => Promise<void>,
  events: { maxAttempts?: number; firstDelayMs?: number } = {},
): Promise<void> {
  const receiver = await startEventReceiver();
  const scopes: string[] = [];
  const logs: string[] = [];
  const harness = await startHarness({
    clock: 'manual',
    ...options,
    env: { VMSSP_EVENTS_TOPIC_ENDPOINT: receiver.endpoint },
    compose: {
      events: {
        credential: fakeCredential(scopes),
        caPem: receiver.caPem,
        log: (message, details) => logs.push(`${message} ${JSON.stringify(details)}`),
        ...events,
      },
    },
  });
  try {
    await test(harness, receiver, { scopes, logs });
    assertIdentityClean(harness, 'the canaries the refreshes created');
  } finally {
    await harness.stop();
    await receiver.stop();
  }
}

async function refresh(harness: Harness, pool: string, id: string, node?: string) {
  return harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool, trigger: 'test', ...(node === undefined ? {} : { node }) },
    id,
  );
}

function received(batches: readonly ReceivedBatch[]): Record<string, unknown>[] {
  return batches.flatMap((batch) => batch.events);
}

function summary(event: Record<string, unknown>): string {
  const data = event['data'] as Record<string, unknown>;
  return `${String(event['type']).replace('io.vmss-prototype.', '')} ${String(data['pool'])}`;
}

void describe('run events to an Event Grid topic', { concurrency: false }, () => {
  void it('a successful and a failed refresh publish their events in order, authenticated', async () => {
    const donor = nodeOf(POOL2, 1);
    await withReceiver(
      {
        scenario: withUndrainablePod(donor),
        settings: (cluster) => {
          cluster.capture = { ...cluster.capture, drainTimeout: '2m' };
        },
      },
      async (harness, receiver, { scopes }) => {
        const ok = await refresh(harness, POOL1, 'events-ok');
        assert.equal(ok.runtimeStatus, 'Completed', JSON.stringify(ok.failure));
        const result = ok.output as PoolRefreshResult;
        assert.equal(result.outcome, 'refreshed', result.reason);
        const failed = await refresh(harness, POOL2, 'events-failed', donor);
        assert.equal(failed.runtimeStatus, 'Failed');
        await harness.composition.events?.flush(30_000);

        const events = received(receiver.accepted);
        assert.deepEqual(events.map(summary), [
          `refresh.started ${POOL1}`,
          `version.published ${POOL1}`,
          `refresh.succeeded ${POOL1}`,
          `refresh.started ${POOL2}`,
          `refresh.failed ${POOL2}`,
        ]);
        assert.deepEqual(receiver.refused, [], 'no request refused');
        for (const batch of receiver.accepted) {
          assert.equal(batch.contentType, 'application/cloudevents-batch+json; charset=utf-8');
          assert.equal(batch.authorization, `Bearer ${FAKE_TOKEN}`);
        }
        assert.ok(scopes.includes('https://eventgrid.azure.net/.default'), scopes.join(', '));
        assert.equal(new Set(events.map((event) => event['id'])).size, events.length, 'ids are unique');

        const [started, published, succeeded, , failure] = events;
        assert.ok(started && published && succeeded && failure);
        assert.equal(started['specversion'], '1.0');
        assert.equal(started['source'], `/clusters/prod/pools/${POOL1}`);
        assert.equal(started['subject'], `runs/${result.runId ?? ''}`);
        assert.equal(started['id'], `${result.runId ?? ''}/refresh.started/runs/${result.runId ?? ''}`);
        const startedData = started['data'] as Record<string, unknown>;
        assert.equal(startedData['donor'], result.donor);
        assert.equal(startedData['trigger'], 'test');
        assert.equal(published['subject'], `versions/${result.version?.versionName ?? ''}`);
        assert.equal((published['data'] as Record<string, unknown>)['imageVersionId'], result.version?.id);
        const done = succeeded['data'] as Record<string, unknown>;
        assert.equal(done['outcome'], 'refreshed');
        assert.equal(done['version'], result.version?.versionName);
        assert.equal(done['donorOutOfServiceSeconds'], result.donorOutOfServiceSeconds);
        const phases = done['phases'] as { phase: string; seconds: number }[];
        assert.deepEqual(
          phases.map((phase) => phase.phase),
          [
            'planning',
            'acquiring-lease',
            'giving-back-leftovers',
            'preparing-image',
            'capture',
            'image',
            'canary',
            'publishing',
            'model',
            'generations',
            'releasing-lease',
          ],
        );
        assert.equal(
          done['durationSeconds'],
          phases.reduce((sum, phase) => sum + phase.seconds, 0),
        );
        assert.ok((phases.find((phase) => phase.phase === 'capture')?.seconds ?? 0) > 0, 'capture took time');
        // Times are the orchestration's (simulated) clock, in order.
        const times = events.map((event) => Date.parse(String(event['time'])));
        assert.deepEqual(
          [...times].sort((a, b) => a - b),
          times,
        );

        const failedData = failure['data'] as Record<string, unknown>;
        assert.equal(failedData['step'], 'draining');
        assert.match(String(failedData['message']), /timed out after \d+ s: 1 pods left/);
        assert.equal(typeof failedData['errorType'], 'string');
      },
    );
  });

  void it('a topic that answers 500, then one that is down, never fails the refresh', async () => {
    await withReceiver(
      {},
      async (harness, receiver, { logs }) => {
        receiver.answer(500);
        const first = await refresh(harness, POOL1, 'events-500');
        assert.equal(first.runtimeStatus, 'Completed', JSON.stringify(first.failure));
        assert.equal((first.output as PoolRefreshResult).outcome, 'refreshed');
        await harness.composition.events?.flush(30_000);
        assert.deepEqual(receiver.accepted, []);
        assert.ok(receiver.refused.length >= 2, `retried (${receiver.refused.length} attempts)`);
        assert.ok(
          logs.some((line) => line.includes('given up') && line.includes('refresh.started')),
          logs.join('\n'),
        );
        assert.ok(!logs.join('\n').includes(FAKE_TOKEN), 'the token is never logged');

        await receiver.stop();
        const second = await refresh(harness, POOL2, 'events-down');
        assert.equal(second.runtimeStatus, 'Completed', JSON.stringify(second.failure));
        assert.equal((second.output as PoolRefreshResult).outcome, 'refreshed');
        await harness.composition.events?.flush(30_000);
      },
      { maxAttempts: 2, firstDelayMs: 10 },
    );
  });

  void it('a canary rejection publishes version.rejected; the check pod secret is in no event', async () => {
    const secret = 'canary-secret-7f3c9a1e55d2';
    await withReceiver(
      {
        settings: withCheckPodCanary(`echo ${secret}; test -e /dev/kvm || exit 3`, [
          { name: 'CHECK_TOKEN', value: secret },
        ]),
      },
      async (harness, receiver) => {
        const status = await refresh(harness, POOL2, 'events-canary');
        assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
        const result = status.output as PoolRefreshResult;
        assert.equal(result.outcome, 'rejected-by-canary', result.reason);
        await harness.composition.events?.flush(30_000);
        const events = received(receiver.accepted);
        assert.deepEqual(events.map(summary), [
          `refresh.started ${POOL2}`,
          `version.rejected ${POOL2}`,
          `refresh.failed ${POOL2}`,
        ]);
        const rejected = events[1]?.['data'] as Record<string, unknown>;
        assert.match(String(rejected['reason']), /exit code 3/);
        assert.equal((events[2]?.['data'] as Record<string, unknown>)['errorType'], 'rejected-by-canary');
        for (const batch of receiver.accepted) {
          assert.ok(!batch.body.includes(secret), `the canary secret is in no event: ${batch.body}`);
        }
      },
    );
  });
});
