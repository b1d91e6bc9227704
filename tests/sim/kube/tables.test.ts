import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { humanDuration, wantsTable } from '../../../sim/kube/tables.js';

void describe('humanDuration like kubectl AGE', () => {
  const cases: { seconds: number; expected: string }[] = [
    { seconds: -5, expected: '<invalid>' },
    { seconds: 0, expected: '0s' },
    { seconds: 119, expected: '119s' },
    { seconds: 150, expected: '2m30s' },
    { seconds: 600, expected: '10m' },
    { seconds: 3 * 3600 + 120, expected: '3h2m' },
    { seconds: 10 * 3600, expected: '10h' },
    { seconds: 3 * 86400 + 3600, expected: '3d1h' },
    { seconds: 30 * 86400, expected: '30d' },
    { seconds: 3 * 365 * 86400 + 86400, expected: '3y1d' },
  ];
  for (const { seconds, expected } of cases) {
    void it(`${seconds}s → ${expected}`, () => {
      assert.equal(humanDuration(seconds * 1000), expected);
    });
  }
});

void describe('Table negotiation', () => {
  const cases: { accept: string | undefined; expected: boolean }[] = [
    { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json', expected: true },
    { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', expected: true },
    { accept: 'application/json', expected: false },
    { accept: undefined, expected: false },
  ];
  for (const { accept, expected } of cases) {
    void it(`${String(accept)} → ${expected}`, () => {
      assert.equal(wantsTable(accept), expected);
    });
  }
});
