// Table tests for the one RFC 3339 parser (offsets, fractions, leap years, out-of-range fields).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isRfc3339, parseRfc3339 } from '../../../shared/domain/rfc3339.js';

void describe('parseRfc3339', () => {
  const cases: { value: string; expected: string | undefined }[] = [
    { value: '2026-11-20T10:00:00Z', expected: '2026-11-20T10:00:00.000Z' },
    { value: '2026-11-20t10:00:00z', expected: '2026-11-20T10:00:00.000Z' },
    { value: '2026-11-20T12:00:00+02:00', expected: '2026-11-20T10:00:00.000Z' },
    { value: '2026-11-20T05:30:00-04:30', expected: '2026-11-20T10:00:00.000Z' },
    { value: '2026-11-20T10:00:00.123456789Z', expected: '2026-11-20T10:00:00.123Z' },
    { value: '2026-11-20T10:00:00.5Z', expected: '2026-11-20T10:00:00.500Z' },
    { value: '2024-02-29T00:00:00Z', expected: '2024-02-29T00:00:00.000Z' },
    { value: '2000-02-29T00:00:00Z', expected: '2000-02-29T00:00:00.000Z' },
    { value: '1900-02-29T00:00:00Z', expected: undefined },
    { value: '0099-01-01T00:00:00Z', expected: '0099-01-01T00:00:00.000Z' },
    { value: '2026-11-20T10:00:00', expected: undefined },
  ];
  for (const { value, expected } of cases) {
    void it(`${value} → ${expected ?? 'invalid'}`, () => {
      const ms = parseRfc3339(value);
      assert.equal(ms === undefined ? undefined : new Date(ms).toISOString(), expected);
    });
  }
});

void describe('isRfc3339', () => {
  for (const [value, expected] of [
    ['2026-11-20T10:00:00Z', true],
    ['2026-11-20T10:00:00.123+01:00', true],
    ['2026-02-30T10:00:00Z', false],
    ['2026-11-20 10:00:00Z', false],
    ['yesterday', false],
  ] as const) {
    void it(`${value} → ${expected}`, () => assert.equal(isRfc3339(value), expected));
  }
});
