import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RetirementPace } from '../../../shared/domain/convergence.js';
import {
  describeGenerationCounts,
  describeRetirementPace,
  generationOrder,
  retirementPaceOf,
} from '../../../shared/domain/convergence.js';
import type { RetirementSettings } from '../../../shared/domain/retirement.js';

const SATURDAY_2AM = { schedule: '0 0 2 * * sat', durationSeconds: 2 * 3600 };

function settings(overrides: Partial<RetirementSettings['policy']> = {}, enabled = true): RetirementSettings {
  return {
    enabled,
    policy: { keepGenerations: 1, budget: { nodes: 1 }, windows: [SATURDAY_2AM], surge: true, ...overrides },
    drainTimeoutSeconds: 900,
  };
}

void describe('retirementPaceOf', () => {
  const cases: { name: string; input: Parameters<typeof retirementPaceOf>[0]; expected: RetirementPace }[] = [
    {
      name: 'inside a window: what the record says it used, when it closes',
      input: {
        settings: settings(),
        capacity: 6,
        record: '2026-11-28T02:00:00.000Z 1',
        now: new Date('2026-11-28T03:00:00Z'),
      },
      expected: {
        enabled: true,
        budget: { nodes: 1 },
        budgetAllowed: 1,
        usedInWindow: 1,
        windowed: true,
        windowOpen: { openedAt: '2026-11-28T02:00:00.000Z', closesAt: '2026-11-28T04:00:00.000Z' },
        nextWindowAt: '2026-12-05T02:00:00.000Z',
      },
    },
    {
      name: "outside: last window's count is not used, the next window is named",
      input: {
        settings: settings({ budget: { percent: 20 } }),
        capacity: 6,
        record: '2026-11-21T02:00:00.000Z 2',
        now: new Date('2026-11-27T12:00:00Z'),
      },
      expected: {
        enabled: true,
        budget: { percent: 20 },
        budgetAllowed: 2,
        usedInWindow: 0,
        windowed: true,
        nextWindowAt: '2026-11-28T02:00:00.000Z',
      },
    },
    {
      name: 'a window opened after the record: it starts at nothing used',
      input: {
        settings: settings(),
        capacity: 3,
        record: '2026-11-21T02:00:00.000Z 1',
        now: new Date('2026-11-28T02:30:00Z'),
      },
      expected: {
        enabled: true,
        budget: { nodes: 1 },
        budgetAllowed: 1,
        usedInWindow: 0,
        windowed: true,
        windowOpen: { openedAt: '2026-11-28T02:00:00.000Z', closesAt: '2026-11-28T04:00:00.000Z' },
        nextWindowAt: '2026-12-05T02:00:00.000Z',
      },
    },
    {
      name: 'no windows: any time, no next window',
      input: {
        settings: settings({ windows: [] }, false),
        capacity: 4,
        now: new Date('2026-11-27T12:00:00Z'),
      },
      expected: { enabled: false, budget: { nodes: 1 }, budgetAllowed: 1, usedInWindow: 0, windowed: false },
    },
  ];
  for (const { name, input, expected } of cases) {
    void it(name, () => assert.deepEqual(retirementPaceOf(input), expected));
  }
});

void describe('describeRetirementPace', () => {
  const NOW = new Date('2026-11-28T03:00:00Z');
  const base: RetirementPace = {
    enabled: true,
    budget: { nodes: 1 },
    budgetAllowed: 1,
    usedInWindow: 1,
    windowed: true,
    windowOpen: { openedAt: '2026-11-28T02:00:00.000Z', closesAt: '2026-11-28T04:00:00.000Z' },
  };
  const cases: { name: string; pace: RetirementPace; expected: string }[] = [
    { name: 'off', pace: { ...base, enabled: false }, expected: 'retirement: off' },
    {
      name: 'in a window closing today',
      pace: base,
      expected: 'retirement: budget 1 node per window, 1 used in the window open until 04:00 UTC',
    },
    {
      name: 'in a window closing tomorrow',
      pace: {
        ...base,
        budget: { percent: 50 },
        budgetAllowed: 3,
        usedInWindow: 0,
        windowOpen: { openedAt: '2026-11-28T02:00:00.000Z', closesAt: '2026-11-29T01:00:00.000Z' },
      },
      expected:
        'retirement: budget 50% (3 nodes) per window, 0 used in the window open until 2026-11-29 01:00 UTC',
    },
    {
      name: 'between windows',
      pace: {
        enabled: true,
        budget: { nodes: 2 },
        budgetAllowed: 2,
        usedInWindow: 0,
        windowed: true,
        nextWindowAt: '2026-12-05T02:00:00.000Z',
      },
      expected: 'retirement: budget 2 nodes per window; next window 2026-12-05 02:00 UTC',
    },
    {
      name: 'no window ahead',
      pace: { enabled: true, budget: { nodes: 1 }, budgetAllowed: 1, usedInWindow: 0, windowed: true },
      expected: 'retirement: budget 1 node per window; no window opens in the next 8 days',
    },
    {
      name: 'without windows',
      pace: { enabled: true, budget: { nodes: 1 }, budgetAllowed: 1, usedInWindow: 0, windowed: false },
      expected: 'retirement: budget 1 node per run, at any time (no windows)',
    },
  ];
  for (const { name, pace, expected } of cases) {
    void it(name, () => assert.equal(describeRetirementPace(pace, NOW), expected));
  }
});

void describe('generationOrder and describeGenerationCounts', () => {
  void it('the newest first, then versions newest to oldest, then the rest by name', () => {
    assert.deepEqual(
      generationOrder(['unknown', '2026.1120.3', 'unlabelled', '2026.1127.1', '2026.1101.10'], '2026.1120.3'),
      ['2026.1120.3', '2026.1127.1', '2026.1101.10', 'unknown', 'unlabelled'],
    );
    assert.deepEqual(generationOrder(['2026.905.1', '2026.1127.1']), ['2026.1127.1', '2026.905.1']);
    assert.deepEqual(generationOrder(['unknown'], '2026.1127.1'), ['unknown']);
  });
  void it('reads without colour', () => {
    assert.equal(
      describeGenerationCounts({ '2026.1120.3': 2, '2026.1127.1': 4, unknown: 0 }),
      '2026.1127.1: 4 nodes, 2026.1120.3: 2 nodes',
    );
    assert.equal(describeGenerationCounts({ unknown: 1 }), 'unknown: 1 node');
    assert.equal(describeGenerationCounts({}), 'no nodes');
  });
});
