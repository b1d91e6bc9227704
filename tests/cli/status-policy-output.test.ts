// `vmss-prototype status` prints each pool's PoolImagePolicy under the table: valid or not (each problem
// with its field), paused, what it overrides, and its actions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { render } from '../../cli/output.js';
import type { PoolStatus } from '../../shared/application/pool-status.js';

const POOL: PoolStatus = {
  cluster: 'prod',
  pool: 'agents',
  scaleSet: 'agents-vmss',
  modelImage: 'none',
  pointsAtOurImage: false,
  pinned: false,
  versionCount: 0,
  eligible: true,
  run: { kind: 'idle' },
  freshness: { basis: 'unknown', detail: 'the image records no patch time' },
  history: { versions: [], runs: [], freshness: [] },
  nodes: [],
  convergence: {
    samples: [],
    now: { at: '2026-11-28T03:00:00.000Z', counts: {} },
    retirement: { enabled: false, budget: { nodes: 1 }, budgetAllowed: 1, usedInWindow: 0, windowed: false },
  },
};

function statusText(pool: PoolStatus): string {
  return render(
    { kind: 'status', clusters: [{ cluster: 'prod', pools: [pool], unreadable: [] }] },
    { width: 200 },
  );
}

void describe('status with a PoolImagePolicy', () => {
  void it('says nothing of a policy for a pool without one', () => {
    assert.doesNotMatch(statusText(POOL), /PoolImagePolicy/);
  });

  void it('prints a valid one, paused, what it overrides and its actions', () => {
    const text = statusText({
      ...POOL,
      imagePolicy: {
        name: 'agents',
        generation: 4,
        valid: true,
        problems: [],
        paused: true,
        overridden: ['spec.canary.soak'],
        actions: {
          rollback: {
            target: '2026.1120.1',
            observedGeneration: 4,
            state: 'Done',
            startedAt: '2026-11-28T02:00:00.000Z',
            message: 'rolled back',
          },
        },
      },
    });
    assert.match(
      text,
      /prod\/agents:\n {2}PoolImagePolicy agents \(generation 4\): valid, paused; overrides spec\.canary\.soak\n {2}rollback 2026\.1120\.1: Done \(rolled back\)/,
    );
  });

  void it('prints an invalid one with each problem', () => {
    const text = statusText({
      ...POOL,
      imagePolicy: {
        name: 'agents',
        generation: 5,
        valid: false,
        problems: [{ field: 'spec.canary.instances', message: 'got 50; expected an integer from 1 to 10' }],
        paused: false,
        overridden: [],
        actions: {},
      },
    });
    assert.match(
      text,
      /invalid, nothing starts: spec\.canary\.instances: got 50; expected an integer from 1 to 10/,
    );
  });
});
