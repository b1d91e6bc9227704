import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Timer } from '@azure/functions';

import {
  handleRetirementSchedule,
  RETIREMENT_SCHEDULE,
} from '../../../functions/triggers/retirement-schedule.timer.js';
import { ncrontabProblem } from '../../../shared/config/ncrontab.js';
import { FakeDurableClient } from './durable-client-double.js';
import { CLUSTERS, recordingContext } from './fixtures.js';

const TIMER: Timer = {
  isPastDue: false,
  schedule: { adjustForDST: false },
  scheduleStatus: {
    last: '2026-11-28T02:00:00Z',
    next: '2026-11-28T02:15:00Z',
    lastUpdated: '2026-11-28T02:00:00Z',
  },
};

void describe('retirement schedule timer', () => {
  void it('is a valid quarter-hour NCRONTAB', () => {
    assert.equal(ncrontabProblem(RETIREMENT_SCHEDULE), undefined);
  });

  void it('starts one retireCluster as retire:<cluster> per configured cluster', async () => {
    const client = new FakeDurableClient();
    const outcomes = await handleRetirementSchedule(TIMER, client, recordingContext(), {
      clusters: CLUSTERS,
    });
    assert.deepEqual(
      client.started.map((s) => [s.name, s.instanceId, { ...(s.input as object), runSeed: 'seed' }]),
      [
        ['retireCluster', 'retire:prod', { cluster: 'prod', trigger: 'retirement-timer', runSeed: 'seed' }],
        ['retireCluster', 'retire:dev', { cluster: 'dev', trigger: 'retirement-timer', runSeed: 'seed' }],
      ],
    );
    assert.deepEqual(
      outcomes.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:started', 'dev:started'],
    );
  });

  void it('skips a cluster while its previous retirement run is active', async () => {
    const client = new FakeDurableClient();
    client.seed('retire:prod', 'Running', { step: 'retiring' }, 'retireCluster');
    const outcomes = await handleRetirementSchedule(TIMER, client, recordingContext(), {
      clusters: CLUSTERS,
    });
    assert.deepEqual(
      outcomes.map((o) => `${o.cluster}:${o.outcome}`),
      ['prod:running', 'dev:started'],
    );
  });
});
