import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SdkAction } from '../../../cli/runner/durable-internals.js';
import { findDivergence, flattenActions, recordAction } from '../../../cli/runner/non-determinism.js';
import type { RecordedAction } from '../../../cli/runner/store.js';

const activity = (name: string, input?: string): RecordedAction => ({ type: 'CallActivity', name, input });
const timer = (fireAt: string): RecordedAction => ({ type: 'CreateTimer', fireAt });

void describe('findDivergence', () => {
  const cases: {
    name: string;
    recorded: RecordedAction[];
    replayed: RecordedAction[];
    expected?: RegExp;
    index?: number;
  }[] = [
    { name: 'identical', recorded: [activity('a', '1')], replayed: [activity('a', '1')] },
    { name: 'replay adds new actions', recorded: [activity('a')], replayed: [activity('a'), activity('b')] },
    { name: 'nothing recorded yet', recorded: [], replayed: [activity('a')] },
    {
      name: 'different activity name',
      recorded: [activity('a'), activity('cordonNode')],
      replayed: [activity('a'), activity('drainNode')],
      index: 1,
      expected:
        /differs in name: history recorded CallActivity 'cordonNode'.*replay produced CallActivity 'drainNode'/,
    },
    {
      name: 'different input',
      recorded: [activity('a', '"n1"')],
      replayed: [activity('a', '"n2"')],
      index: 0,
      expected: /differs in input/,
    },
    {
      name: 'different kind',
      recorded: [timer('2026-01-01T00:00:00.000Z')],
      replayed: [activity('a')],
      index: 0,
      expected: /differs in type, name, fireAt/,
    },
    {
      name: 'different timer fire time',
      recorded: [timer('2026-01-01T00:00:00.000Z')],
      replayed: [timer('2026-01-01T00:00:01.000Z')],
      index: 0,
      expected: /differs in fireAt/,
    },
    {
      name: 'replay stops early',
      recorded: [activity('a'), activity('b')],
      replayed: [activity('a')],
      index: 1,
      expected: /is missing: history recorded CallActivity 'b', the replay stopped after 1 action/,
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const divergence = findDivergence(c.recorded, c.replayed);
      if (c.expected === undefined) {
        assert.equal(divergence, undefined);
      } else {
        assert.ok(divergence !== undefined);
        assert.equal(divergence.index, c.index);
        assert.match(divergence.difference, c.expected);
      }
    });
  }
});

void describe('flattenActions and recordAction', () => {
  void it('flattens WhenAll/WhenAny trees in child order and normalises inputs', () => {
    const actions: SdkAction[][] = [
      [
        { actionType: 0, functionName: 'list', input: '"pool"' },
        {
          actionType: 12,
          compoundActions: [
            { actionType: 0, functionName: 'drain', input: { node: 'n1' } },
            {
              actionType: 11,
              compoundActions: [
                { actionType: 5, fireAt: new Date('2026-01-01T00:00:00Z'), isCanceled: true },
                { actionType: 6, externalEventName: 'approval' },
              ],
            },
          ],
        },
        { actionType: 2, functionName: 'child', input: { a: 1 }, instanceId: 'p:3' },
      ],
    ];
    assert.deepEqual(flattenActions(actions).map(recordAction), [
      { type: 'CallActivity', name: 'list', input: '"pool"' },
      { type: 'CallActivity', name: 'drain', input: '{"node":"n1"}' },
      { type: 'CreateTimer', fireAt: '2026-01-01T00:00:00.000Z' },
      { type: 'WaitForExternalEvent', name: 'approval' },
      { type: 'CallSubOrchestrator', name: 'child', input: '{"a":1}', instanceId: 'p:3' },
    ]);
  });
});
