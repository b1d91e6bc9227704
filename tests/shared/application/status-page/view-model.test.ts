// Table tests of the status page's view model: plan, run state, held nodes and generation labels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PoolStatus } from '../../../../shared/application/pool-status.js';
import { poolViewOf } from '../../../../shared/application/status-page/view-model.js';

const NOW = '2026-11-23T12:00:00.000Z';

function pool(overrides: Partial<PoolStatus> = {}): PoolStatus {
  return {
    cluster: 'prod',
    pool: 'pool1',
    scaleSet: 'k8s-pool1-vmss',
    modelImage: 'gallery',
    pointsAtOurImage: true,
    pinned: false,
    run: { kind: 'idle' },
    versionCount: 0,
    eligible: true,
    freshness: { basis: 'unknown', detail: '' },
    ownership: { lease: { state: 'free' }, heldNodes: [], leftovers: [], kept: [] },
    history: { versions: [], runs: [], freshness: [] },
    nodes: [],
    convergence: {
      samples: [],
      now: { at: NOW, counts: {} },
      retirement: {
        enabled: false,
        budget: { nodes: 1 },
        budgetAllowed: 1,
        usedInWindow: 0,
        windowed: false,
      },
    },
    ...overrides,
  };
}

void describe('poolViewOf: plan', () => {
  const cases: readonly [string, Partial<PoolStatus>, string, boolean][] = [
    ['scale set refused', { eligible: false, refusal: 'ephemeral OS disk' }, 'refused', true],
    ['plan would refresh', { plan: { outcome: 'planned', reason: 'n1' } }, 'refreshable', false],
    ['plan: up to date', { plan: { outcome: 'up-to-date', reason: 'x' } }, 'up-to-date', false],
    // The control-plane pool: its scale set is eligible, but plan refuses every node.
    [
      'plan skips every node',
      { plan: { outcome: 'skipped', reason: 'no eligible node: control-plane' } },
      'skipped',
      true,
    ],
    [
      'plan refuses the capture',
      { plan: { outcome: 'refused', reason: 'unknown flavour' } },
      'refused',
      true,
    ],
    ['planning failed', { plan: { outcome: 'not-planned', reason: 'forbidden' } }, 'unplanned', false],
    ['read without a plan', {}, 'unplanned', false],
  ];
  for (const [name, overrides, state, collapsed] of cases) {
    void it(`${name}: ${state}${collapsed ? ', collapsed' : ''}`, () => {
      const view = poolViewOf(pool(overrides));
      assert.equal(view.eligibility.state, state);
      assert.equal(view.collapsed, collapsed);
    });
  }

  void it('a skipped pool with a version of ours or a held node stays in view', () => {
    const skipped = { plan: { outcome: 'skipped' as const, reason: 'control-plane' } };
    assert.equal(
      poolViewOf(pool({ ...skipped, currentVersion: { name: '2026.1123.1', id: 'v' } })).collapsed,
      false,
    );
  });
});

void describe('poolViewOf: run and held nodes', () => {
  const held = {
    lease: { state: 'free' as const },
    heldNodes: [
      {
        node: 'n1',
        runId: 'r1',
        byLiveRun: true,
        since: '2026-11-23T11:00:00Z',
        cordoned: true,
        vm: 'stopped',
      },
    ],
    leftovers: [],
    kept: [],
  };

  void it('running: the run, since when; its node is held by a running run', () => {
    const view = poolViewOf(
      pool({
        run: { kind: 'running', runId: 'r1', since: '2026-11-23T11:00:00Z', expiresAt: NOW },
        ownership: held,
      }),
    );
    assert.deepEqual(
      [view.run.state, view.run.runId, view.run.since],
      ['running', 'r1', '2026-11-23T11:00:00Z'],
    );
    assert.deepEqual(
      view.heldNodes.map((node) => [node.node, node.state, node.since, node.vm]),
      [['n1', 'running', '2026-11-23T11:00:00Z', 'stopped']],
    );
  });

  void it('interrupted: left behind, with the way out, and its node too', () => {
    const view = poolViewOf(
      pool({
        run: {
          kind: 'interrupted',
          runId: 'r1',
          cause: 'lease-expired',
          expiresAt: NOW,
          detail: 'run r1 was interrupted',
          wayOut: 'vmss-prototype release --pool pool1',
        },
        // Even a stale `byLiveRun` never makes the node of an interrupted run "running".
        ownership: held,
      }),
    );
    assert.equal(view.run.state, 'interrupted');
    assert.equal(view.run.label, 'interrupted, left behind');
    assert.equal(view.run.wayOut, 'vmss-prototype release --pool pool1');
    assert.deepEqual(
      view.heldNodes.map((node) => node.state),
      ['left behind'],
    );
  });

  void it('idle: the last run, with its end or the moment it had ended by', () => {
    const runs = [
      { runId: 'r2', outcome: 'failed' as const, reason: 'ARM said no', endedAt: NOW, steps: [] },
      { runId: 'r1', outcome: 'refreshed' as const, endedBy: NOW, steps: [] },
    ];
    const view = poolViewOf(pool({ history: { versions: [], runs, freshness: [] } }));
    assert.deepEqual(
      [view.run.state, view.run.runId, view.run.endedAt, view.run.detail],
      ['failed', 'r2', NOW, 'ARM said no'],
    );
    const earlier = poolViewOf(pool({ history: { versions: [], runs: runs.slice(1), freshness: [] } }));
    assert.deepEqual([earlier.run.state, earlier.run.endedBy], ['refreshed', NOW]);
    assert.equal(poolViewOf(pool()).run.state, 'none');
  });
});

void describe('poolViewOf: generation labels', () => {
  const node = { ready: true, cordoned: false, olderGeneration: false };
  const cases: readonly [PoolStatus['nodes'][number], string][] = [
    [{ ...node, name: 'a', generation: '2026.1123.2', generationState: 'current' }, 'current'],
    [{ ...node, name: 'b', generation: '2026.1123.1', generationState: 'older' }, 'older'],
    [
      { ...node, name: 'c', generation: '2026.1123.1', generationState: 'older', olderGeneration: true },
      'older, tainted',
    ],
    [{ ...node, name: 'd', generation: '2026.1123.3', generationState: 'rejected' }, 'rejected v2026.1123.3'],
    [{ ...node, name: 'e', generation: 'unknown', generationState: 'original' }, "the pool's original image"],
    [{ ...node, name: 'f' }, 'not labelled yet'],
  ];
  for (const [input, label] of cases) {
    void it(`${input.name}: ${label}`, () => {
      assert.equal(poolViewOf(pool({ nodes: [input] })).nodes[0]?.label, label);
    });
  }
});
