import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { retiredInWindow, retiredInWindowRecord } from '../../../shared/domain/retired-in-window.js';

const OPENED = '2026-11-28T02:00:00.000Z';

void describe('retiredInWindow', () => {
  const cases: { record: string | undefined; openedAt: string; expected: number }[] = [
    { record: undefined, openedAt: OPENED, expected: 0 },
    { record: '', openedAt: OPENED, expected: 0 },
    { record: `${OPENED} pool-vmss000001`, openedAt: OPENED, expected: 1 },
    { record: `  ${OPENED}   a,b,c `, openedAt: OPENED, expected: 3 },
    // The same moment written another way is the same window.
    { record: '2026-11-28T02:00:00Z a,b', openedAt: OPENED, expected: 2 },
    // Another window's nodes count nothing in this one.
    { record: '2026-11-21T02:00:00.000Z a,b,c,d', openedAt: OPENED, expected: 0 },
    { record: `${OPENED}`, openedAt: OPENED, expected: 0 },
    { record: `${OPENED} ,,`, openedAt: OPENED, expected: 0 },
    { record: 'garbage a', openedAt: OPENED, expected: 0 },
    { record: 'garbage a', openedAt: 'garbage', expected: 0 },
  ];
  for (const { record, openedAt, expected } of cases) {
    void it(`${JSON.stringify(record)} in the window opened ${openedAt} → ${expected}`, () =>
      assert.equal(retiredInWindow(record, openedAt), expected));
  }
});

void describe('retiredInWindowRecord', () => {
  void it('adds in the same window, counts a node once, starts over in a new one', () => {
    assert.equal(retiredInWindowRecord(undefined, OPENED, 'a'), `${OPENED} a`);
    assert.equal(retiredInWindowRecord(`${OPENED} a`, OPENED, 'b'), `${OPENED} a,b`);
    // A retried write of the same node: still one.
    assert.equal(retiredInWindowRecord(`${OPENED} a,b`, OPENED, 'b'), `${OPENED} a,b`);
    assert.equal(retiredInWindowRecord('2026-11-21T02:00:00.000Z a,b,c', OPENED, 'd'), `${OPENED} d`);
  });
});
