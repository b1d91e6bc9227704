// Table test of the run state rule: running only while the lease is live and its holder alive.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PoolLease } from '../../../shared/domain/ownership.js';
import { LEASE_ANNOTATIONS } from '../../../shared/domain/ownership.js';
import type { HolderLiveness, RunState } from '../../../shared/domain/run-state.js';
import { releaseCommand, runStateOf } from '../../../shared/domain/run-state.js';

const NOW = new Date('2026-11-22T12:00:00Z');

function lease(overrides: Partial<PoolLease> = {}): PoolLease {
  return {
    namespace: 'vmss-prototype',
    name: 'vmssp-x',
    holder: 'cli/host-1/run-1',
    acquiredAt: '2026-11-22T11:50:00.000000Z',
    renewedAt: '2026-11-22T11:55:00.000000Z',
    durationSeconds: 900,
    annotations: {},
    ...overrides,
  };
}

const released = lease({
  holder: undefined,
  annotations: {
    [LEASE_ANNOTATIONS.lastHolder]: 'cli/host-1/run-0',
    [LEASE_ANNOTATIONS.releasedAt]: '2026-11-22T11:40:00Z',
  },
});

const CASES: readonly {
  readonly name: string;
  readonly lease: PoolLease | undefined;
  readonly holder: HolderLiveness;
  readonly kind: RunState['kind'];
  readonly cause?: string;
}[] = [
  { name: 'no lease yet', lease: undefined, holder: 'unknown', kind: 'idle' },
  { name: 'released', lease: released, holder: 'unknown', kind: 'idle' },
  { name: 'live lease, holder unknown', lease: lease(), holder: 'unknown', kind: 'running' },
  { name: 'live lease, holder alive', lease: lease(), holder: 'alive', kind: 'running' },
  {
    name: 'live lease, holder gone',
    lease: lease(),
    holder: 'gone',
    kind: 'interrupted',
    cause: 'holder-gone',
  },
  {
    name: 'expired lease, holder unknown',
    lease: lease({ renewedAt: '2026-11-22T11:44:59Z' }),
    holder: 'unknown',
    kind: 'interrupted',
    cause: 'lease-expired',
  },
  {
    name: 'expired lease, holder said alive (another host cannot tell)',
    lease: lease({ renewedAt: '2026-11-22T11:30:00Z' }),
    holder: 'alive',
    kind: 'interrupted',
    cause: 'lease-expired',
  },
  {
    name: 'expires exactly now',
    lease: lease({ renewedAt: '2026-11-22T11:45:00Z' }),
    holder: 'unknown',
    kind: 'interrupted',
    cause: 'lease-expired',
  },
  {
    name: 'never renewed, acquired a minute ago',
    lease: lease({ renewedAt: undefined, acquiredAt: '2026-11-22T11:59:00Z' }),
    holder: 'unknown',
    kind: 'running',
  },
];

void describe('runStateOf', () => {
  for (const row of CASES) {
    void it(row.name, () => {
      const state = runStateOf({ pool: 'p1', lease: row.lease, holder: row.holder, now: NOW });
      assert.equal(state.kind, row.kind);
      if (state.kind === 'interrupted') {
        assert.equal(state.cause, row.cause);
        assert.equal(state.runId, 'run-1');
        assert.equal(state.wayOut, 'vmss-prototype release --pool p1');
        assert.ok(state.detail.endsWith('`vmss-prototype release --pool p1` gives back what it held'));
      }
    });
  }

  void it('says who ran last and when it let go, when idle', () => {
    assert.deepEqual(runStateOf({ pool: 'p1', lease: released, holder: 'unknown', now: NOW }), {
      kind: 'idle',
      lastRunId: 'run-0',
      releasedAt: '2026-11-22T11:40:00Z',
    });
  });

  void it('carries the run, its start, its expiry and a cancel request while running', () => {
    const state = runStateOf({
      pool: 'p1',
      lease: lease({ annotations: { [LEASE_ANNOTATIONS.cancelRequested]: '2026-11-22T11:58:00Z' } }),
      holder: 'alive',
      now: NOW,
    });
    assert.deepEqual(state, {
      kind: 'running',
      runId: 'run-1',
      since: '2026-11-22T11:50:00.000000Z',
      expiresAt: '2026-11-22T12:10:00.000Z',
      cancelRequested: '2026-11-22T11:58:00Z',
    });
  });

  void it('names the release command', () => {
    assert.equal(releaseCommand('k8s-pool1'), 'vmss-prototype release --pool k8s-pool1');
  });
});
