// Table tests for choosing which image versions to prune and why.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  type ImageVersionProvisioningState,
  type PrunableImageVersion,
  type PruneInput,
  type PrunePlan,
  selectVersionsToPrune,
} from '../../../shared/domain/pruning.js';

function v(
  name: string,
  state: ImageVersionProvisioningState = 'Succeeded',
  excludeFromLatest = false,
): PrunableImageVersion {
  return { name, provisioningState: state, excludeFromLatest };
}

interface Case {
  readonly name: string;
  readonly input: PruneInput;
  readonly keep: readonly string[];
  readonly delete: readonly string[];
}

const show = (plan: PrunePlan) => ({
  keep: plan.keep.map((d) => `${d.name}:${d.reason}`),
  delete: plan.delete.map((d) => `${d.name}:${d.reason}`),
});

const CASES: readonly Case[] = [
  { name: 'nothing to prune', input: { versions: [], history: 3 }, keep: [], delete: [] },
  {
    name: 'keeps the newest history Succeeded versions, deletes older ones oldest first',
    input: {
      versions: [
        v('2026.1101.0'),
        v('2026.1122.143059'),
        v('2026.1015.0'),
        v('2026.1120.0'),
        v('2026.901.0'),
      ],
      history: 3,
    },
    keep: ['2026.1122.143059:within-history', '2026.1120.0:within-history', '2026.1101.0:within-history'],
    delete: ['2026.901.0:beyond-history', '2026.1015.0:beyond-history'],
  },
  {
    name: 'kamino versions are older history',
    input: { versions: [v('2021.12.31'), v('2022.101.0'), v('2021.05.19'), v('2022.102.0')], history: 3 },
    keep: ['2022.102.0:within-history', '2022.101.0:within-history', '2021.12.31:within-history'],
    delete: ['2021.05.19:beyond-history'],
  },
  {
    name: 'never deletes the pinned version, which also takes its history place',
    input: {
      versions: [v('2026.1101.0'), v('2026.1102.0'), v('2026.1103.0')],
      history: 1,
      pinnedVersion: '2026.1101.0',
    },
    keep: ['2026.1103.0:within-history', '2026.1101.0:pinned'],
    delete: ['2026.1102.0:beyond-history'],
  },
  {
    name: 'pinned newest version counts toward history',
    input: { versions: [v('2026.1101.0'), v('2026.1102.0')], history: 1, pinnedVersion: '2026.1102.0' },
    keep: ['2026.1102.0:pinned'],
    delete: ['2026.1101.0:beyond-history'],
  },
  {
    name: 'never deletes in-flight versions',
    input: {
      versions: [
        v('2026.1101.0'),
        v('2026.1102.0'),
        v('2026.1103.0', 'Creating', true),
        v('2026.1001.0', 'Deleting'),
        v('2026.1002.0', 'Updating'),
        v('2026.1003.0', 'Migrating'),
      ],
      history: 1,
    },
    keep: [
      '2026.1103.0:in-flight',
      '2026.1102.0:within-history',
      '2026.1003.0:in-flight',
      '2026.1002.0:in-flight',
      '2026.1001.0:in-flight',
    ],
    delete: ['2026.1101.0:beyond-history'],
  },
  {
    name: 'deletes failed versions older than a Succeeded one',
    input: {
      versions: [v('2026.1101.0', 'Failed'), v('2026.1102.0'), v('2026.1103.0', 'Failed'), v('2026.1104.0')],
      history: 3,
    },
    keep: ['2026.1104.0:within-history', '2026.1102.0:within-history'],
    delete: ['2026.1101.0:failed', '2026.1103.0:failed'],
  },
  {
    name: 'keeps the newest failed version while its retry is pending, deletes older failures',
    input: {
      versions: [v('2026.1102.0'), v('2026.1103.0', 'Failed'), v('2026.1104.0', 'Failed')],
      history: 3,
    },
    keep: ['2026.1104.0:newest-failed-retry', '2026.1102.0:within-history'],
    delete: ['2026.1103.0:failed'],
  },
  {
    name: 'a version awaiting promotion is kept and does not take a history place',
    input: {
      versions: [v('2026.1101.0'), v('2026.1102.0'), v('2026.1103.0', 'Succeeded', true)],
      history: 2,
    },
    keep: ['2026.1103.0:awaiting-promotion', '2026.1102.0:within-history', '2026.1101.0:within-history'],
    delete: [],
  },
  {
    name: 'a rolled-back (excluded) older version is ordinary history',
    input: {
      versions: [v('2026.1101.0'), v('2026.1102.0', 'Succeeded', true), v('2026.1103.0')],
      history: 2,
    },
    keep: ['2026.1103.0:within-history', '2026.1102.0:within-history'],
    delete: ['2026.1101.0:beyond-history'],
  },
  {
    name: 'protected versions are kept whatever their state',
    input: {
      versions: [v('2026.1101.0', 'Failed'), v('2026.1102.0'), v('2026.1103.0'), v('2026.1104.0')],
      history: 1,
      protectedVersions: ['2026.1101.0', '2026.1102.0'],
    },
    keep: ['2026.1104.0:within-history', '2026.1102.0:protected', '2026.1101.0:protected'],
    delete: ['2026.1103.0:beyond-history'],
  },
  {
    name: 'unrecognised names are never deleted',
    input: { versions: [v('2026.1101.0'), v('2026.1102.0'), v('weird')], history: 1 },
    keep: ['2026.1102.0:within-history', 'weird:unrecognised-name'],
    delete: ['2026.1101.0:beyond-history'],
  },
  {
    name: 'only failed versions: the newest waits for its retry',
    input: { versions: [v('2026.1101.0', 'Failed'), v('2026.1102.0', 'Failed')], history: 3 },
    keep: ['2026.1102.0:newest-failed-retry'],
    delete: ['2026.1101.0:failed'],
  },
];

void describe('selectVersionsToPrune', () => {
  for (const testCase of CASES) {
    void it(testCase.name, () => {
      assert.deepEqual(show(selectVersionsToPrune(testCase.input)), {
        keep: testCase.keep,
        delete: testCase.delete,
      });
    });
  }

  void it('is deterministic whatever the input order', () => {
    const versions = [
      v('2026.1101.0'),
      v('2026.1102.0', 'Failed'),
      v('2021.05.19'),
      v('2026.1103.0'),
      v('2026.1104.0', 'Creating'),
    ];
    const expected = show(selectVersionsToPrune({ versions, history: 1 }));
    assert.deepEqual(
      show(selectVersionsToPrune({ versions: [...versions].reverse(), history: 1 })),
      expected,
    );
  });

  const invalid: readonly (readonly [string, PruneInput, RegExp])[] = [
    ['history 0', { versions: [], history: 0 }, /history 0 is not an integer in 1–50/],
    ['history 51', { versions: [], history: 51 }, /history 51/],
    ['history 1.5', { versions: [], history: 1.5 }, /history 1.5/],
    ['duplicate names', { versions: [v('1.0.0'), v('1.0.0')], history: 1 }, /version 1.0.0 is listed twice/],
  ];
  for (const [name, input, problem] of invalid) {
    void it(`rejects ${name}`, () => assert.throws(() => selectVersionsToPrune(input), problem));
  }
});
