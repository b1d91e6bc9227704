// Is a recorded run running: only while it holds the pool's live lease and its holder is alive.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LEASE_ANNOTATIONS, type PoolLease } from '../../../shared/domain/ownership.js';
import { type HolderLiveness, type RecordedRunState, runState } from '../../../shared/domain/run-state.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const ID = 'refresh:prod:pool1';

function lease(overrides: Partial<PoolLease> = {}, instanceId = ID): PoolLease {
  return {
    namespace: 'vmss-prototype',
    name: 'vmssp-pool1-1234abcd',
    holder: 'cli/laptop/run-1',
    renewedAt: '2026-11-27T11:55:00Z',
    durationSeconds: 900,
    annotations: { [LEASE_ANNOTATIONS.instanceId]: instanceId },
    ...overrides,
  };
}

const CASES: readonly [string, PoolLease | undefined, HolderLiveness, RecordedRunState][] = [
  ['no lease at all', undefined, 'unknown', { kind: 'ended', why: 'free' }],
  ['given back (no holder)', lease({ holder: undefined }), 'gone', { kind: 'ended', why: 'free' }],
  ['expired', lease({ renewedAt: '2026-11-27T11:40:00Z' }), 'alive', { kind: 'ended', why: 'expired' }],
  ['held for another instance', lease({}, 'refresh:prod'), 'alive', { kind: 'ended', why: 'other-run' }],
  ['live, holder alive', lease(), 'alive', { kind: 'running', runId: 'run-1' }],
  ['live, holder unknown (trusted)', lease(), 'unknown', { kind: 'running', runId: 'run-1' }],
  ['live, holder gone', lease(), 'gone', { kind: 'interrupted', runId: 'run-1' }],
];

void describe('runState', () => {
  for (const [name, given, liveness, expected] of CASES) {
    void it(name, () => {
      assert.deepEqual(runState(given, ID, liveness, NOW), expected);
    });
  }
});
