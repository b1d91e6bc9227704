import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ClusterNode } from '../../../shared/domain/cluster-node.js';
import {
  finishPoolFold,
  foldPoolMember,
  type SelectionFoldLimits,
  startPoolFold,
} from '../../../shared/domain/pool-selection-fold.js';
import {
  groupNodesByScaleSet,
  type PoolImageFacts,
  type PoolSelectionInput,
  type PrototypeSelection,
  selectPrototypeNodeForPool,
} from '../../../shared/domain/prototype-selection.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { DEFAULT_SELECTION_POLICY } from '../../../shared/domain/selection-policy.js';
import { aNode, DAY, DEFAULT_POOL, HOUR, NOW, secondsBefore } from '../../builders/node.js';

const IMAGE: PoolImageFacts = { version: '2026.1112.0900', patchedAt: new Date(secondsBefore(10 * DAY)) };
const OTHER_POOL: ScaleSetRef = { ...DEFAULT_POOL, name: 'k8s-pool-b' };

/** A deterministic mixed pool: candidates, patch-blocked, unhealthy, too recent, and another pool's nodes. */
function mixedNodes(count: number, kind: (i: number) => number): ClusterNode[] {
  return Array.from({ length: count }, (_, i) => {
    const roll = kind(i);
    const readySince = secondsBefore(((i * 7919) % 97) * HOUR + HOUR * 2);
    switch (roll) {
      case 0:
        return aNode({ instanceId: i, readySince, lastPatch: secondsBefore(((i * 31) % 9) * DAY + 60) });
      case 1:
        return aNode({ instanceId: i, readySince, lastPatch: secondsBefore(45 * DAY) });
      case 2:
        return aNode({ instanceId: i, readySince, lastPatch: null });
      case 3:
        return aNode({ instanceId: i, readySince, unschedulable: true });
      case 4:
        return aNode({ instanceId: i, readySince: secondsBefore(60) });
      default:
        return aNode({ pool: OTHER_POOL, instanceId: i, readySince });
    }
  });
}

/** The fold over `pageSize` pages, judging only the pool's members, as the cluster planner does. */
function folded(
  nodes: readonly ClusterNode[],
  input: PoolSelectionInput,
  limits: SelectionFoldLimits,
  pageSize: number,
) {
  const fold = startPoolFold(input, limits);
  let listed = 0;
  for (let offset = 0; offset < nodes.length; offset += pageSize) {
    for (const node of nodes.slice(offset, offset + pageSize)) {
      listed += 1;
      if (node.providerId?.includes(`/${input.pool.scaleSet.name}/`) === true) foldPoolMember(fold, node);
    }
  }
  return finishPoolFold(fold, listed - fold.members);
}

/** What a plan takes from a selection: the same whatever gathered it. */
function decisionOf(selection: PrototypeSelection) {
  return {
    outcome: selection.outcome,
    chosen: selection.chosen,
    reason: selection.reason,
    candidateCount: selection.candidateCount,
    poolNodeCount: selection.poolNodeCount,
    nodesOutsidePool: selection.nodesOutsidePool,
    rejectionCounts: selection.rejectionCounts,
    fallback: selection.fallback,
  };
}

const input = (overrides: Partial<PoolSelectionInput> = {}): PoolSelectionInput => ({
  pool: { scaleSet: DEFAULT_POOL },
  policy: DEFAULT_SELECTION_POLICY,
  image: IMAGE,
  now: NOW,
  ...overrides,
});

const CASES: {
  name: string;
  nodes: ClusterNode[];
  input: PoolSelectionInput;
  outcome: PrototypeSelection['outcome'];
}[] = [
  {
    name: 'candidates on every page',
    nodes: mixedNodes(400, (i) => i % 6),
    input: input(),
    outcome: 'chosen',
  },
  {
    name: 'too few candidates (minimumCandidates above the kept limit)',
    nodes: mixedNodes(300, (i) => (i % 50 === 0 ? 0 : 1 + (i % 5))),
    input: input({ policy: { ...DEFAULT_SELECTION_POLICY, minimumCandidates: 7 } }),
    outcome: 'too-few-candidates',
  },
  {
    name: 'none patched after the image, no maximum image age',
    nodes: mixedNodes(300, (i) => 1 + (i % 5)),
    input: input(),
    outcome: 'no-newer-patch',
  },
  {
    name: 'the maximum image age fallback waives the patch rules of the best blocked nodes',
    nodes: mixedNodes(300, (i) => 1 + (i % 5)),
    input: input({
      image: { version: 'old', patchedAt: new Date(secondsBefore(40 * DAY)) },
      policy: { ...DEFAULT_SELECTION_POLICY, maximumImageAgeSeconds: 30 * DAY },
    }),
    outcome: 'chosen',
  },
  {
    name: 'nothing healthy',
    nodes: mixedNodes(200, (i) => 3 + (i % 3)),
    input: input(),
    outcome: 'no-eligible-node',
  },
  {
    name: 'no member at all',
    nodes: mixedNodes(50, () => 5),
    input: input(),
    outcome: 'no-eligible-node',
  },
];

const LIMITS: SelectionFoldLimits = { candidates: 3, verdicts: 10 };

void describe('folding node pages into a pool selection', () => {
  for (const testCase of CASES) {
    for (const pageSize of [1, 7, 500]) {
      void it(`${testCase.name}, pages of ${pageSize}: the same decision as the whole list`, () => {
        const whole = selectPrototypeNodeForPool(groupNodesByScaleSet(testCase.nodes), testCase.input);
        const { selection, verdictsOmitted } = folded(testCase.nodes, testCase.input, LIMITS, pageSize);
        assert.equal(whole.outcome, testCase.outcome);
        assert.equal(whole.fallback.used, testCase.name.includes('fallback'));
        assert.deepEqual(decisionOf(selection), decisionOf(whole));
        // The best candidates, in rank order, as far as the fold kept them.
        const kept = Math.max(LIMITS.candidates, testCase.input.policy.minimumCandidates);
        assert.deepEqual(selection.candidates, whole.candidates.slice(0, kept));
        // Every verdict kept is the whole list's verdict of that node, in list order.
        const byName = new Map(whole.verdicts.map((verdict) => [verdict.name, verdict]));
        for (const verdict of selection.verdicts) assert.deepEqual(verdict, byName.get(verdict.name));
        const order = whole.verdicts.map((verdict) => verdict.name);
        const keptOrder = selection.verdicts.map((verdict) => order.indexOf(verdict.name));
        assert.deepEqual(
          keptOrder,
          [...keptOrder].sort((a, b) => a - b),
        );
        assert.equal(selection.verdicts.length + verdictsOmitted, whole.poolNodeCount);
      });
    }
  }

  void it('keeps at most the limits, however large the pool', () => {
    const nodes = mixedNodes(5_000, (i) => i % 3);
    const { selection, verdictsOmitted, nodes: kept } = folded(nodes, input(), LIMITS, 500);
    assert.ok(selection.candidates.length <= LIMITS.candidates);
    // The first verdicts, plus the best candidates' and best blocked nodes' where they come later.
    assert.ok(selection.verdicts.length <= LIMITS.verdicts + 2 * LIMITS.candidates);
    assert.equal(selection.verdicts.length + verdictsOmitted, selection.poolNodeCount);
    assert.ok(kept.size <= 2 * LIMITS.candidates);
    assert.ok(selection.chosen !== undefined && kept.has(selection.chosen.name), 'the donor object is kept');
  });

  void it('keeps the verdict and object of a node named by the operator, wherever it is listed', () => {
    const nodes = mixedNodes(400, (i) => i % 6);
    const named = nodes[397];
    assert.ok(named !== undefined && named.providerId?.includes(DEFAULT_POOL.name));
    const { selection, nodes: kept } = folded(
      nodes,
      input(),
      { ...LIMITS, keepNames: new Set([named.name]) },
      100,
    );
    assert.ok(selection.verdicts.some((verdict) => verdict.name === named.name));
    assert.equal(kept.get(named.name), named);
  });

  void it('the fallback turns the kept verdicts of patch-blocked nodes into waived candidates', () => {
    const nodes = mixedNodes(60, (i) => 1 + (i % 2));
    const fallbackInput = input({
      image: { version: 'old', patchedAt: new Date(secondsBefore(40 * DAY)) },
      policy: { ...DEFAULT_SELECTION_POLICY, maximumImageAgeSeconds: 30 * DAY },
    });
    const { selection } = folded(nodes, fallbackInput, LIMITS, 10);
    assert.equal(selection.fallback.used, true);
    // Not only the best ones: the first verdicts shown are waived too, and none is left a patch rejection.
    const waived = selection.verdicts.filter((v) => v.status === 'candidate' && v.waived !== undefined);
    assert.ok(waived.length > LIMITS.candidates, `${waived.length} waived verdicts`);
    assert.ok(
      selection.verdicts.every(
        (v) =>
          v.status === 'candidate' ||
          !['patch-not-newer-than-image', 'missing-patch-annotation'].includes(v.rule),
      ),
    );
  });
});
