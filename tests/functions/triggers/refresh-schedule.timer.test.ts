import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Timer } from '@azure/functions';

import { handleRefreshSchedule } from '../../../functions/triggers/refresh-schedule.timer.js';
import type { NoticeClusterScope } from '../../../shared/application/reboot-notices.js';
import { FakeDurableClient } from './durable-client-double.js';
import { ADMISSION, CLUSTERS, OTHER_SUB, recordingContext, SUB } from './fixtures.js';

const TIMER: Timer = {
  isPastDue: false,
  schedule: { adjustForDST: false },
  scheduleStatus: {
    last: '2026-11-21T03:00:00Z',
    next: '2026-11-22T03:00:00Z',
    lastUpdated: '2026-11-21T03:00:00Z',
  },
};

/** prod and dev in SUB, staging in OTHER_SUB (written in upper case: subscriptions compare without case). */
const TWO_SUBSCRIPTIONS: readonly NoticeClusterScope[] = [
  ...CLUSTERS,
  { name: 'staging', subscriptionId: OTHER_SUB.toUpperCase(), resourceGroup: 'rg-staging', pools: 'all' },
];

void describe('refresh schedule timer', () => {
  void it('starts one refresh-subscription:<subscription> per subscription, with the admission', async () => {
    const client = new FakeDurableClient();
    const outcomes = await handleRefreshSchedule(TIMER, client, recordingContext(), {
      clusters: TWO_SUBSCRIPTIONS,
      admission: ADMISSION,
    });
    const seeds = client.started.map((s) => (s.input as { runSeed?: unknown }).runSeed);
    assert.deepEqual(
      client.started.map((s) => [s.name, s.instanceId, { ...(s.input as object), runSeed: 'seed' }]),
      [
        [
          'refreshSubscription',
          `refresh-subscription:${OTHER_SUB}`,
          {
            subscriptionId: OTHER_SUB,
            clusters: ['staging'],
            maxPoolsPerSubscription: 8,
            maxParallelPools: 4,
            trigger: 'timer',
            runSeed: 'seed',
          },
        ],
        [
          'refreshSubscription',
          `refresh-subscription:${SUB}`,
          {
            subscriptionId: SUB,
            clusters: ['dev', 'prod'],
            maxPoolsPerSubscription: 8,
            maxParallelPools: 4,
            trigger: 'timer',
            runSeed: 'seed',
          },
        ],
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

  void it('skips a subscription whose run is still active and restarts a finished one', async () => {
    const client = new FakeDurableClient();
    client.seed(`refresh-subscription:${SUB}`, 'Running', { step: 'refreshing' }, 'refreshSubscription');
    client.seed(`refresh-subscription:${OTHER_SUB}`, 'Failed', undefined, 'refreshSubscription');
    const outcomes = await handleRefreshSchedule(TIMER, client, recordingContext(), {
      clusters: TWO_SUBSCRIPTIONS,
      admission: ADMISSION,
    });
    assert.deepEqual(
      outcomes.map((o) => `${o.clusters.join('+')}:${o.outcome}`),
      ['staging:started', 'dev+prod:running'],
    );
  });

  void it('one subscription failing to start does not stop the others', async () => {
    const client = new FakeDurableClient();
    const start = client.startNew.bind(client);
    client.startNew = (name, options) =>
      options.instanceId === `refresh-subscription:${OTHER_SUB}`
        ? Promise.reject(new Error('HTTP 500'))
        : start(name, options);
    const context = recordingContext();
    const outcomes = await handleRefreshSchedule({ ...TIMER, isPastDue: true }, client, context, {
      clusters: TWO_SUBSCRIPTIONS,
      admission: ADMISSION,
    });
    assert.deepEqual(
      outcomes.map((o) => `${o.clusters.join('+')}:${o.outcome}`),
      ['staging:failed', 'dev+prod:started'],
    );
    assert.ok(context.logs.some((log) => log.level === 'error'));
  });
});
