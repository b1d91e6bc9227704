// `vmss-prototype status` names the nodes built from a rejected or abandoned version (an outside scale-out
// while a canary had the model pinned, a rollback) under the table, by version, with the command that
// replaces them; nodes of any other generation are not listed there.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { render } from '../../cli/output.js';
import type { PoolNodeView, PoolStatus } from '../../shared/application/pool-status.js';

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

function node(name: string, generation: string, state: PoolNodeView['generationState']): PoolNodeView {
  return { name, generation, ready: true, cordoned: false, olderGeneration: false, generationState: state };
}

function statusText(pool: PoolStatus): string {
  return render(
    { kind: 'status', clusters: [{ cluster: 'prod', pools: [pool], unreadable: [] }] },
    { width: 200 },
  );
}

void describe('status with nodes of a rejected version', () => {
  void it('says nothing when no node is of a rejected or abandoned version', () => {
    const text = statusText({ ...POOL, nodes: [node('a-0', '2026.1127.1', 'current')] });
    assert.doesNotMatch(text, /built from/);
  });

  void it('names them per version with the command that replaces them', () => {
    const text = statusText({
      ...POOL,
      nodes: [
        node('a-0', 'unknown', 'original'),
        node('a-4', '2026.1128.1', 'rejected'),
        node('a-5', '2026.1128.1', 'rejected'),
        node('a-6', '2026.1126.1', 'abandoned'),
      ],
    });
    assert.match(
      text,
      /prod\/agents:\n {2}2 node\(s\) built from rejected version 2026\.1128\.1: a-4, a-5 \(`vmss-prototype retire --pool agents --generation 2026\.1128\.1` replaces them\)\n {2}1 node\(s\) built from abandoned version 2026\.1126\.1: a-6 /,
    );
  });
});
