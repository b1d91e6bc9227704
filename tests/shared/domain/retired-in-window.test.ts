import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { retiredInWindow, retiredInWindowRecord } from '../../../shared/domain/retired-in-window.js';

const OPENED = '2026-11-28T02:00:00.000Z';

void describe('retiredInWindow', () => {
  const cases: { record: string | undefined; openedAt: string; expected: number }[] = [
    { record: undefined, openedAt: OPENED, expected: 0 },
    { record: '', openedAt: OPENED, expected: 0 },
    { record: `${OPENED} 1`, openedAt: OPENED, expected: 1 },
    { record: `  ${OPENED}   3 `, openedAt: OPENED, expected: 3 },
    // The same moment written another way is the same window.
    { record: '2026-11-28T02:00:00Z 2', openedAt: OPENED, expected: 2 },
    // Another window's count counts nothing in this one.
    { record: '2026-11-21T02:00:00.000Z 4', openedAt: OPENED, expected: 0 },
    { record: `${OPENED}`, openedAt: OPENED, expected: 0 },
    { record: `${OPENED} -1`, openedAt: OPENED, expected: 0 },
    { record: `${OPENED} 1.5`, openedAt: OPENED, expected: 0 },
    { record: 'garbage 2', openedAt: OPENED, expected: 0 },
    { record: 'garbage 2', openedAt: 'garbage', expected: 0 },
  ];
  for (const { record, openedAt, expected } of cases) {
    void it(`${JSON.stringify(record)} in the window opened ${openedAt} → ${expected}`, () =>
      assert.equal(retiredInWindow(record, openedAt), expected));
  }
});

void describe('retiredInWindowRecord', () => {
  void it('counts on in the same window, starts over in a new one', () => {
    assert.equal(retiredInWindowRecord(undefined, OPENED), `${OPENED} 1`);
    assert.equal(retiredInWindowRecord(`${OPENED} 1`, OPENED), `${OPENED} 2`);
    assert.equal(retiredInWindowRecord('2026-11-21T02:00:00.000Z 4', OPENED), `${OPENED} 1`);
  });
});
