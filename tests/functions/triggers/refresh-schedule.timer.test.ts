import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Timer } from '@azure/functions';

import { handleRefreshSchedule } from '../../../functions/triggers/refresh-schedule.timer.js';
import { FakeDurableClient } from './durable-client-double.js';
import { CLUSTERS, recordingContext } from './fixtures.js';

const TIMER: Timer = {
  isPastDue: false,
  schedule: { adjustForDST: false },
  scheduleStatus: {
    last: '2026-11-21T03:00:00Z',
    next: '2026-11-22T03:00:00Z',
    lastUpdated: '2026-11-21T03:00:00Z',
  },
};

void describe('refresh schedule timer', () => {
  void it('starts one refresh:<cluster> per configured cluster', async () => {
    const client = new FakeDurableClient();
    const outcomes = await handleRefreshSchedule(TIMER, client, recordingContext(), { clusters: CLUSTERS });
    const seeds = client.started.map((s) => (s.input as { runSeed?: unknown }).runSeed);
    assert.deepEqual(
      client.started.map((s) => [s.name, s.instanceId, { ...(s.input as object), runSeed: 'seed' }]),
      [
        ['refreshCluster', 'refresh:prod', { cluster: 'prod', trigger: 'timer', runSeed: 'seed' }],
        ['refreshCluster', 'refresh:dev', { cluster: 'dev', trigger: 'timer', runSeed: 'seed' }],
      ],
    );
    // Randomness for the run ids: two task hubs' timers firing in the same millisecond still differ.
    assert.ok(seeds.every((seed) => typeof seed === 'string' && /^[0-9a-f-]{36}$/.test(seed)));
    assert.notEqual(seeds[0], seeds[1]);
    assert.deepEqual(
      outcomes.map((o) => o.outcome),
      ['started', 'started'],
    );
  });

  void it('skips a cluster whose run is still active and restarts a finished one', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod', 'Running', { step: 'refreshing' }, 'refreshCluster');
    client.seed('refresh:dev', 'Failed', undefined, 'refreshCluster');
    const outcomes = await handleRefreshSchedule(TIMER, client, recordingContext(), { clusters: CLUSTERS });
    assert.deepEqual(
      outcomes.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:running', 'dev:started'],
    );
  });

  void it('one cluster failing to start does not stop the others', async () => {
    const client = new FakeDurableClient();
    const start = client.startNew.bind(client);
    client.startNew = (name, options) =>
      options.instanceId === 'refresh:prod' ? Promise.reject(new Error('HTTP 500')) : start(name, options);
    const context = recordingContext();
    const outcomes = await handleRefreshSchedule({ ...TIMER, isPastDue: true }, client, context, {
      clusters: CLUSTERS,
    });
    assert.deepEqual(
      outcomes.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:failed', 'dev:started'],
    );
    assert.ok(context.logs.some((log) => log.level === 'error'));
  });
});
