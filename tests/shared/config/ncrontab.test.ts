// Table tests for NCRONTAB schedule validation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ncrontabProblem } from '../../../shared/config/ncrontab.js';

void describe('ncrontabProblem', () => {
  const valid = [
    '0 0 3 * * *',
    '0 */5 * * * *',
    '30 15 2-4 1,15 jan-jun mon-fri',
    '0 0 0 * * 0',
    '0 0 12 31 Dec Sat',
    '0 0 1-23/2 * * *',
  ];
  for (const expression of valid)
    void it(`accepts ${expression}`, () => assert.equal(ncrontabProblem(expression), undefined));

  const invalid: readonly (readonly [string, RegExp])[] = [
    ['0 3 * * *', /5 fields, not 6/],
    ['0 0 0 3 * * *', /7 fields/],
    ['', /1 field,/],
    ['60 0 3 * * *', /second field "60"/],
    ['0 60 3 * * *', /minute field/],
    ['0 0 24 * * *', /hour field "24"/],
    ['0 0 3 0 * *', /day of month field "0"/],
    ['0 0 3 32 * *', /day of month/],
    ['0 0 3 * 13 *', /month field "13"/],
    ['0 0 3 * * 7', /day of week field "7"/],
    ['0 0 3 * foo *', /"foo" is not a value/],
    ['0 0 5-3 * * *', /runs backwards/],
    ['0 */0 * * * *', /step "0"/],
    ['0 0 1,,2 * * *', /empty entry/],
    ['0 0 1-2-3 * * *', /not a value or a range/],
    ['00:05:00', /TimeSpan/],
  ];
  for (const [expression, problem] of invalid) {
    void it(`rejects ${JSON.stringify(expression)}`, () =>
      assert.match(ncrontabProblem(expression) ?? '', problem));
  }
});
