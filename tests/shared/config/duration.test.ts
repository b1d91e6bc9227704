// Table tests for duration parsing and formatting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatDuration, MAX_DURATION_SECONDS, parseDuration } from '../../../shared/config/duration.js';

const VALID: readonly (readonly [string | number, number])[] = [
  ['90', 90],
  ['0', 0],
  ['90s', 90],
  ['15m', 900],
  ['1h', 3600],
  ['2d', 172_800],
  ['1h30m', 5400],
  ['1d2h3m4s', 93_784],
  ['1.5h', 5400],
  ['0.5m', 30],
  ['0.1h', 360],
  [' 10m ', 600],
  ['0s', 0],
  [300, 300],
  [0, 0],
  [String(MAX_DURATION_SECONDS), MAX_DURATION_SECONDS],
];

const INVALID: readonly (readonly [string | number, RegExp])[] = [
  ['', /empty/],
  ['   ', /empty/],
  ['-5', /negative/],
  ['-1h', /negative/],
  [-1, /negative/],
  ['5ms', /unit "ms" is not one of s, m, h, d/],
  ['2w', /unit "w"/],
  ['1H', /not a number with an optional unit/],
  ['h', /not a number/],
  ['1h 30m', /not a number/],
  ['30m1h', /largest first/],
  ['1h1h', /largest first/],
  ['1.5s', /whole number of seconds/],
  [1.5, /whole number of seconds/],
  ['1e3', /unit "e"/],
  ['PT1H', /not a number/],
  [String(MAX_DURATION_SECONDS + 1), /exceeds/],
  ['100000000d', /exceeds/],
  [Number.NaN, /finite/],
  [Number.POSITIVE_INFINITY, /finite/],
];

void describe('parseDuration accepts', () => {
  for (const [input, seconds] of VALID) {
    void it(`${JSON.stringify(input)} → ${seconds}s`, () => {
      assert.deepEqual(parseDuration(input), { ok: true, seconds });
    });
  }
});

void describe('parseDuration rejects', () => {
  for (const [input, problem] of INVALID) {
    void it(JSON.stringify(String(input)), () => {
      const result = parseDuration(input);
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.problem, problem);
    });
  }
});

void describe('formatDuration', () => {
  const cases: readonly (readonly [number, string])[] = [
    [0, '0s'],
    [59, '59s'],
    [300, '5m'],
    [5400, '1h30m'],
    [93_784, '1d2h3m4s'],
    [30 * 86_400, '30d'],
  ];
  for (const [seconds, text] of cases) {
    void it(`${seconds} → ${text} and back`, () => {
      assert.equal(formatDuration(seconds), text);
      assert.deepEqual(parseDuration(text), { ok: true, seconds });
    });
  }
});
