import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { GenerationNode } from '../../../shared/domain/generations.js';
import {
  DEFAULT_GENERATION_POLICY,
  generationsBehind,
  instanceGeneration,
  planGenerations,
  UNKNOWN_GENERATION,
} from '../../../shared/domain/generations.js';

const DEFINITION = '/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/galleries/gal/images/pool';
const RETAINED = ['2026.1101.10000', '2026.1110.10000', '2026.1120.10000'];

void describe('instanceGeneration', () => {
  const cases: readonly [string, Parameters<typeof instanceGeneration>[0], string][] = [
    [
      'a pinned version',
      { imageId: `${DEFINITION}/versions/2026.1110.10000`, definitionId: DEFINITION },
      '2026.1110.10000',
    ],
    [
      'latest, resolved by ARM',
      { imageId: DEFINITION, exactVersion: '2026.1120.10000', definitionId: DEFINITION },
      '2026.1120.10000',
    ],
    [
      'latest, from the OS disk',
      {
        imageId: DEFINITION,
        diskImageVersionId: `${DEFINITION}/versions/2026.1101.10000`,
        definitionId: DEFINITION,
      },
      '2026.1101.10000',
    ],
    ['a marketplace image', { definitionId: DEFINITION }, UNKNOWN_GENERATION],
    [
      'a version of another definition',
      {
        imageId:
          '/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/galleries/gal/images/other/versions/1.0.0',
        definitionId: DEFINITION,
      },
      UNKNOWN_GENERATION,
    ],
  ];
  for (const [name, input, expected] of cases)
    void it(name, () => assert.equal(instanceGeneration(input), expected));
});

void describe('generationsBehind', () => {
  const cases: readonly [string, string, number][] = [
    ['2026.1120.10000', '2026.1120.10000', 0],
    ['2026.1110.10000', '2026.1120.10000', 1],
    ['2026.1101.10000', '2026.1120.10000', 2],
    [UNKNOWN_GENERATION, '2026.1120.10000', 3],
    // After a rollback to 1110, a node on 1120 is ahead, not behind.
    ['2026.1120.10000', '2026.1110.10000', 0],
  ];
  for (const [node, current, behind] of cases) {
    void it(`${node} with ${current} current: ${behind}`, () =>
      assert.equal(generationsBehind(node, current, RETAINED), behind));
  }
});

void describe('planGenerations', () => {
  const nodes: GenerationNode[] = [
    { name: 'current', generation: '2026.1120.10000', label: '2026.1120.10000' },
    { name: 'one-behind', generation: '2026.1110.10000' },
    {
      name: 'two-behind',
      generation: '2026.1101.10000',
      label: '2026.1101.10000',
      taint: 'PreferNoSchedule',
    },
    { name: 'market', generation: UNKNOWN_GENERATION },
  ];

  void it('labels what is not labelled yet and, without a policy, taints nothing (and removes our taint)', () => {
    const changes = planGenerations({
      nodes,
      currentVersion: '2026.1120.10000',
      retainedVersions: RETAINED,
      policy: DEFAULT_GENERATION_POLICY,
    });
    assert.deepEqual(changes, [
      { node: 'one-behind', label: '2026.1110.10000', behind: 1 },
      { node: 'two-behind', taint: { action: 'remove' }, behind: 2 },
      { node: 'market', label: UNKNOWN_GENERATION, behind: 3 },
    ]);
  });

  void it('taints nodes more than K generations behind with the configured effect', () => {
    const changes = planGenerations({
      nodes,
      currentVersion: '2026.1120.10000',
      retainedVersions: RETAINED,
      policy: { maxGenerationsBehind: 1, taintEffect: 'NoSchedule' },
    });
    assert.deepEqual(
      changes.map((change) => [change.node, change.taint]),
      [
        ['one-behind', undefined],
        ['two-behind', { action: 'add', effect: 'NoSchedule' }],
        ['market', { action: 'add', effect: 'NoSchedule' }],
      ],
    );
  });

  void it('a marketplace model: nothing is behind, no taint applies', () => {
    const changes = planGenerations({
      nodes,
      retainedVersions: RETAINED,
      policy: { maxGenerationsBehind: 0, taintEffect: 'PreferNoSchedule' },
    });
    assert.ok(changes.every((change) => change.taint === undefined || change.taint.action === 'remove'));
  });
});
