import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Timer } from '@azure/functions';

import { handleReaperSchedule } from '../../../functions/triggers/reaper-schedule.timer.js';
import { FakeDurableClient } from './durable-client-double.js';
import { CLUSTERS, recordingContext } from './fixtures.js';

const TIMER: Timer = {
  isPastDue: false,
  schedule: { adjustForDST: false },
  scheduleStatus: {
    last: '2026-11-22T12:00:00Z',
    next: '2026-11-22T12:05:00Z',
    lastUpdated: '2026-11-22T12:00:00Z',
  },
};

void describe('reaper schedule timer', () => {
  void it('starts one reapCluster as reap:<cluster> per configured cluster, each with its own seed', async () => {
    const client = new FakeDurableClient();
    const outcomes = await handleReaperSchedule(TIMER, client, recordingContext(), { clusters: CLUSTERS });
    assert.deepEqual(
      client.started.map((s) => [s.name, s.instanceId, { ...(s.input as object), runSeed: 'seed' }]),
      [
        ['reapCluster', 'reap:prod', { cluster: 'prod', trigger: 'reaper-timer', runSeed: 'seed' }],
        ['reapCluster', 'reap:dev', { cluster: 'dev', trigger: 'reaper-timer', runSeed: 'seed' }],
      ],
    );
    const seeds = client.started.map((s) => (s.input as { runSeed?: unknown }).runSeed);
    assert.ok(seeds.every((seed) => typeof seed === 'string' && /^[0-9a-f-]{36}$/.test(seed)));
    assert.notEqual(seeds[0], seeds[1]);
    assert.deepEqual(
      outcomes.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:started', 'dev:started'],
    );
  });

  void it('skips a cluster while its previous reaper run or its refresh is active; a finished one starts again', async () => {
    const client = new FakeDurableClient();
    client.seed('reap:prod', 'Running', { step: 'giving-back-leftovers' }, 'reapCluster');
    client.seed('refresh:dev', 'Running', { step: 'refreshing' }, 'refreshCluster');
    const context = recordingContext();
    const busy = await handleReaperSchedule(TIMER, client, context, { clusters: CLUSTERS });
    assert.deepEqual(
      busy.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:running', 'dev:running'],
    );
    assert.deepEqual(client.started, []);

    client.seed('reap:prod', 'Completed', undefined, 'reapCluster');
    client.seed('refresh:dev', 'Failed', undefined, 'refreshCluster');
    const next = await handleReaperSchedule(TIMER, client, context, { clusters: CLUSTERS });
    assert.deepEqual(
      next.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:started', 'dev:started'],
    );
  });

  void it('one cluster failing to start does not stop the others', async () => {
    const client = new FakeDurableClient();
    const start = client.startNew.bind(client);
    client.startNew = (name, options) =>
      options.instanceId === 'reap:prod' ? Promise.reject(new Error('HTTP 500')) : start(name, options);
    const context = recordingContext();
    const outcomes = await handleReaperSchedule({ ...TIMER, isPastDue: true }, client, context, {
      clusters: CLUSTERS,
    });
    assert.deepEqual(
      outcomes.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:failed', 'dev:started'],
    );
    assert.ok(context.logs.some((log) => log.level === 'error'));
    assert.ok(context.logs.some((log) => log.level === 'warning'));
  });
});
