import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RetirementRecord } from '../../../shared/domain/retirement-record.js';
import { parseRetirementRecord, writeRetirementRecord } from '../../../shared/domain/retirement-record.js';

const RECORD: RetirementRecord = {
  run: 'run-1',
  node: 'k8s-pool2-vmss000001',
  instanceId: '1',
  priorCapacity: 6,
  startedAt: '2026-11-28T02:00:00.000Z',
};

void describe('retirement record', () => {
  void it('reads back what it wrote, with and without the surge instance', () => {
    assert.deepEqual(parseRetirementRecord(writeRetirementRecord(RECORD)), RECORD);
    const surged = { ...RECORD, surgeInstanceId: '7' };
    assert.deepEqual(parseRetirementRecord(writeRetirementRecord(surged)), surged);
  });

  void it('keeps the baseline and the capacity the surge asked for', () => {
    const asked = { ...RECORD, baseline: ['0', '1', '5'], capacityAsked: 7 };
    assert.deepEqual(parseRetirementRecord(writeRetirementRecord(asked)), asked);
    const empty = { ...RECORD, baseline: [] };
    assert.deepEqual(parseRetirementRecord(writeRetirementRecord(empty)), empty);
  });

  const cases: { name: string; value: string | undefined; expected: 'damaged' | undefined }[] = [
    { name: 'absent', value: undefined, expected: undefined },
    { name: 'cleared', value: '', expected: undefined },
    { name: 'not JSON', value: '{run', expected: 'damaged' },
    { name: 'not an object', value: '"run"', expected: 'damaged' },
    { name: 'no run', value: JSON.stringify({ ...RECORD, run: undefined }), expected: 'damaged' },
    { name: 'empty node', value: JSON.stringify({ ...RECORD, node: '' }), expected: 'damaged' },
    {
      name: 'capacity a string',
      value: JSON.stringify({ ...RECORD, priorCapacity: '6' }),
      expected: 'damaged',
    },
    {
      name: 'capacity negative',
      value: JSON.stringify({ ...RECORD, priorCapacity: -1 }),
      expected: 'damaged',
    },
    {
      name: 'capacity fractional',
      value: JSON.stringify({ ...RECORD, priorCapacity: 1.5 }),
      expected: 'damaged',
    },
    { name: 'baseline not a list', value: JSON.stringify({ ...RECORD, baseline: '1' }), expected: 'damaged' },
    {
      name: 'baseline with an empty id',
      value: JSON.stringify({ ...RECORD, baseline: ['1', ''] }),
      expected: 'damaged',
    },
    {
      name: 'capacity asked zero',
      value: JSON.stringify({ ...RECORD, capacityAsked: 0 }),
      expected: 'damaged',
    },
  ];
  for (const { name, value, expected } of cases) {
    void it(`${name} → ${String(expected)}`, () => assert.equal(parseRetirementRecord(value), expected));
  }
});
