import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  budgetNodes,
  planRetirement,
  type RetirementInput,
  type RetirementNode,
} from '../../../shared/domain/retirement.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const GENERATIONS = [
  { name: '2026.1127.100000', publishedAt: '2026-11-27T10:00:00Z' },
  { name: '2026.1120.100000', publishedAt: '2026-11-20T10:00:00Z' },
  { name: '2026.1110.100000', publishedAt: '2026-11-10T10:00:00Z' },
];
const [NEWEST, MIDDLE, OLDEST] = GENERATIONS.map((generation) => generation.name);

function node(
  name: string,
  generation: string | undefined,
  overrides: Partial<RetirementNode> = {},
): RetirementNode {
  return {
    name,
    generation: generation ?? 'unknown',
    createdAt: '2026-11-01T00:00:00Z',
    ready: true,
    unschedulable: false,
    annotations: {},
    podsNotToDisrupt: [],
    ...overrides,
  };
}

/** A 6-node pool with 3 generations, 2 nodes each; budget 1 node, surge on, no windows. */
function input(overrides: Partial<RetirementInput> = {}): RetirementInput {
  return {
    policy: { keepGenerations: 1, budget: { nodes: 1 }, windows: [], surge: true },
    nodes: [
      node('n-new-1', NEWEST),
      node('n-new-2', NEWEST),
      node('n-mid-1', MIDDLE, { createdAt: '2026-11-21T00:00:00Z' }),
      node('n-mid-2', MIDDLE, { createdAt: '2026-11-20T12:00:00Z' }),
      node('n-old-1', OLDEST),
      node('n-old-2', OLDEST),
    ],
    generations: GENERATIONS,
    capacity: 6,
    retiring: 0,
    now: NOW,
    ...overrides,
  };
}

function names(decision: ReturnType<typeof planRetirement>, which: 'retire' | 'waiting'): string[] {
  return decision.kind === 'plan' ? decision[which].map((retiree) => retiree.node) : [];
}

void describe('budgetNodes', () => {
  const cases: { budget: { nodes: number } | { percent: number }; capacity: number; expected: number }[] = [
    { budget: { nodes: 2 }, capacity: 10, expected: 2 },
    { budget: { percent: 10 }, capacity: 6, expected: 1 },
    { budget: { percent: 25 }, capacity: 10, expected: 3 },
    { budget: { percent: 0 }, capacity: 10, expected: 0 },
  ];
  for (const { budget, capacity, expected } of cases) {
    void it(`${JSON.stringify(budget)} of ${capacity} is ${expected}`, () => {
      assert.equal(budgetNodes(budget, capacity), expected);
    });
  }
});

void describe('planRetirement', () => {
  void it('retires the oldest generation first, its oldest node first, within the budget', () => {
    const decision = planRetirement(input());
    assert.deepEqual(names(decision, 'retire'), ['n-old-1']);
    assert.deepEqual(names(decision, 'waiting'), ['n-old-2', 'n-mid-2', 'n-mid-1']);
  });

  void it('counts the nodes already retiring against the budget', () => {
    assert.deepEqual(names(planRetirement(input({ retiring: 1 })), 'retire'), []);
    const wide = input({ policy: { ...input().policy, budget: { percent: 50 } }, retiring: 1 });
    assert.deepEqual(names(planRetirement(wide), 'retire'), ['n-old-1', 'n-old-2']);
  });

  void it('keeps the newest N generations', () => {
    const keepTwo = input({ policy: { ...input().policy, keepGenerations: 2 } });
    const decision = planRetirement(keepTwo);
    assert.deepEqual([...names(decision, 'retire'), ...names(decision, 'waiting')], ['n-old-1', 'n-old-2']);
  });

  void it('retires by age when asked', () => {
    const byAge = input({
      policy: { budget: { nodes: 10 }, windows: [], surge: true, olderThanSeconds: 10 * 86_400 },
    });
    assert.deepEqual(names(planRetirement(byAge), 'retire'), ['n-old-1', 'n-old-2']);
  });

  void it('treats nodes of the original image as the oldest, aged by their creation', () => {
    const withOriginal = input({ nodes: [...input().nodes, node('n-orig', undefined)] });
    assert.deepEqual(names(planRetirement(withOriginal), 'retire'), ['n-orig']);
  });

  void it('retires one generation on demand, whatever the age and keep rules and windows', () => {
    const onDemand = input({
      onlyGeneration: MIDDLE,
      policy: {
        ...input().policy,
        keepGenerations: 3,
        windows: [{ schedule: '0 0 2 * * sat', durationSeconds: 60 }],
      },
    });
    const decision = planRetirement(onDemand);
    assert.deepEqual([...names(decision, 'retire'), ...names(decision, 'waiting')], ['n-mid-2', 'n-mid-1']);
  });

  void it('keeps marked nodes and says which mark', () => {
    const marked = input({
      nodes: [
        node('n-new', NEWEST),
        node('a', OLDEST, { annotations: { 'vmss-prototype.io/do-not-retire': 'true' } }),
        node('b', OLDEST, { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
        node('c', OLDEST, {
          annotations: { 'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true' },
        }),
        node('d', OLDEST, { podsNotToDisrupt: ['db/primary-0'] }),
        node('e', OLDEST, { unschedulable: true }),
        node('f', OLDEST, { ready: false }),
        node('g', OLDEST, { keptFor: 'the donor of the version just published' }),
      ],
    });
    const decision = planRetirement(marked);
    assert.equal(decision.kind, 'plan');
    if (decision.kind !== 'plan') return;
    assert.deepEqual(decision.retire, []);
    assert.deepEqual(
      decision.kept.map((entry) => `${entry.node}: ${entry.why}`),
      [
        'a: annotation vmss-prototype.io/do-not-retire',
        'b: annotation karpenter.sh/do-not-disrupt',
        'c: annotation cluster-autoscaler.kubernetes.io/scale-down-disabled (the cluster-autoscaler keeps it too)',
        'd: pod db/primary-0 carries karpenter.sh/do-not-disrupt',
        'e: cordoned by someone else: left to them',
        'f: not Ready: retiring it would not keep capacity, left to the node lifecycle',
        'g: the donor of the version just published',
      ],
    );
  });

  void it('without surge, retires only Ready nodes above the pool capacity', () => {
    const noSurge = input({ policy: { ...input().policy, surge: false, budget: { nodes: 3 } } });
    assert.deepEqual(names(planRetirement(noSurge), 'retire'), [], 'six Ready nodes, capacity six');
    const oneSpare = input({
      policy: { ...input().policy, surge: false, budget: { nodes: 3 } },
      capacity: 5,
    });
    assert.deepEqual(names(planRetirement(oneSpare), 'retire'), ['n-old-1']);
  });

  void it('acts only in a window, and says when the next opens', () => {
    const windowed = input({
      policy: { ...input().policy, windows: [{ schedule: '0 0 2 * * sat', durationSeconds: 4 * 3600 }] },
    });
    assert.deepEqual(planRetirement(windowed), {
      kind: 'closed',
      reason: 'no retirement window is open',
      nextWindowAt: '2026-11-28T02:00:00.000Z',
    });
    assert.deepEqual(
      names(planRetirement({ ...windowed, now: new Date('2026-11-28T03:00:00Z') }), 'retire'),
      ['n-old-1'],
    );
  });

  void it('converges: once only the newest generation is left, nothing is due', () => {
    const converged = input({ nodes: [node('a', NEWEST), node('b', NEWEST)] });
    assert.deepEqual(planRetirement(converged), {
      kind: 'plan',
      retire: [],
      waiting: [],
      kept: [],
      budget: { allowed: 1, inUse: 0 },
    });
  });
});
