// The result table's reason column never collapses to one word a line: at any terminal width it keeps
// REASON_MIN characters, the other columns give way, and below that the rows become stacked records.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { REASON_MIN, table, wrap } from '../../cli/table.js';

const HEADER = ['CLUSTER', 'POOL', 'OUTCOME', 'DONOR', 'CAPTURE', 'REASON'];
const REASON =
  'k8s-pool1-12345678-vmss000001 is Ready longest (2d2h3m44s, last patched 2026-11-24T20:05:26.000Z) among 2 ' +
  'candidate(s) in rg-k8s-prod/k8s-pool1-12345678-vmss';
const ROWS = [
  ['prod', 'k8s-pool1-12345678-vmss', 'planned', 'k8s-pool1-12345678-vmss000001', 'drain-and-stop', REASON],
  ['prod', 'k8s-pool2-12345678-vmss', 'skipped', '-', '-', 'up to date'],
];

function squash(text: string): string {
  return text.replaceAll(/\s+/g, '');
}

/** The lines holding the first row's reason, in either layout. */
function reasonLines(text: string): string[] {
  const lines = text.split('\n');
  const header = lines[0] ?? '';
  if (header.startsWith('CLUSTER  ')) {
    const at = header.indexOf('REASON');
    const rows = lines.slice(1);
    const end = rows.findIndex((line, index) => index > 0 && !line.startsWith(' '));
    return rows.slice(0, end).map((line) => line.slice(at).trim());
  }
  const start = lines.findIndex((line) => line.startsWith('REASON:'));
  const end = lines.indexOf('', start);
  return lines
    .slice(start, end)
    .map((line) => line.replace(/^REASON:/, '').trim())
    .filter((line) => line !== '');
}

void describe('table at terminal widths', () => {
  const cases: readonly (readonly [number, 'columns' | 'stacked'])[] = [
    [120, 'columns'],
    [80, 'stacked'],
    [60, 'stacked'],
    [40, 'stacked'],
  ];
  for (const [width, layout] of cases) {
    void it(`${width} columns: ${layout}, the reason at least ${REASON_MIN} wide, nothing cut`, () => {
      const text = table(HEADER, ROWS, { width });
      const lines = text.split('\n');
      for (const line of lines) assert.ok(line.length <= width, `${line.length} > ${width}: ${line}`);
      assert.equal(lines[0]?.startsWith('CLUSTER  POOL'), layout === 'columns', text);
      if (layout === 'columns') {
        assert.ok(width - (lines[0] ?? '').indexOf('REASON') >= REASON_MIN, text);
      } else {
        assert.match(text, /^CLUSTER: +prod$/m);
        assert.match(text, /^REASON: +up to date$/m);
      }
      const reason = reasonLines(text);
      assert.equal(squash(reason.join(' ')), squash(REASON));
      // Never one word a line: the reason's lines are full, not a word each.
      const perLine = REASON.length / reason.length;
      assert.ok(perLine >= REASON_MIN - 6, `${perLine.toFixed(1)} characters a line:\n${text}`);
      assert.doesNotMatch(text, /…/);
    });
  }

  void it('a stacked record keeps a name longer than the line whole', () => {
    const id = 'x'.repeat(70);
    const text = table(['A', 'B'], [[id, id]], { width: 60 });
    assert.equal(text, `A: ${id}\nB: ${id}`);
  });

  void it('a table that fits is not touched', () => {
    assert.equal(table(['A', 'REASON'], [['x', 'short']], { width: 40 }), 'A  REASON\nx  short');
  });
});

void describe('wrap splits a name longer than the line after a "-"', () => {
  const cases: readonly (readonly [string, number, string[]])[] = [
    ['k8s-pool1-12345678-vmss000001', 24, ['k8s-pool1-12345678-', 'vmss000001']],
    ['abcdefghij', 4, ['abcd', 'efgh', 'ij']],
  ];
  for (const [text, width, lines] of cases) {
    void it(`${text} at ${width}`, () => assert.deepEqual(wrap(text, width), lines));
  }
});
