// Tables wrap long cells within a width instead of cutting them; durations read 2d2h5m8s everywhere.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CommandResult } from '../../cli/commands.js';
import { DEFAULT_WIDTH, formatSeconds, render, table, wrap } from '../../cli/output.js';

const LONG_REASON =
  'scale set rg-K8s-Prod/aks-nodepool1-12345678-vmss is managed by AKS (tag aks-managed-poolName): AKS rewrites ' +
  'the scale set model on node pool operations and its support policy forbids direct edits to agent nodes';

/** Text without any whitespace: what must survive wrapping, whatever the line breaks. */
function squash(text: string): string {
  return text.replaceAll(/\s+/g, '');
}

void describe('wrap', () => {
  const cases: readonly (readonly [string, number, string[]])[] = [
    ['short', 10, ['short']],
    ['two words here', 9, ['two words', 'here']],
    ['a b c d', 3, ['a b', 'c d']],
    ['abcdefghij', 4, ['abcd', 'efgh', 'ij']],
    ['x abcdefghij y', 4, ['x', 'abcd', 'efgh', 'ij y']],
    ['see rg-prod/pool-vmss now', 12, ['see rg-prod/', 'pool-vmss', 'now']],
  ];
  for (const [text, width, lines] of cases) {
    void it(`${JSON.stringify(text)} at ${width}`, () => assert.deepEqual(wrap(text, width), lines));
  }
});

void describe('table', () => {
  void it('aligns columns and leaves a narrow table as it is', () => {
    assert.equal(
      table(
        ['A', 'BB'],
        [
          ['xyz', '1'],
          ['q', '22'],
        ],
      ),
      'A    BB\nxyz  1\nq    22',
    );
  });

  void it('wraps the long column within the width and keeps every word', () => {
    const rows = [
      ['prod', 'aks-nodepool1-12345678-vmss', 'refused', LONG_REASON],
      [
        'prod',
        'k8s-pool1-12345678-vmss',
        'planned',
        'k8s-pool1-12345678-vmss000001 is Ready longest (2d2h1m)',
      ],
    ];
    const text = table(['CLUSTER', 'POOL', 'OUTCOME', 'REASON'], rows, { width: 90 });
    const lines = text.split('\n');
    for (const line of lines) assert.ok(line.length <= 90, `${line.length}: ${line}`);
    assert.ok(lines.length > 3, 'the reason wraps onto continuation lines');
    // Only the reason wraps, so each row's text reads on in order across its lines.
    assert.ok(squash(text).includes(squash(LONG_REASON)));
    assert.ok(squash(text).includes(squash(rows[1]?.join('') ?? '')));
    // Names are never split: a column is narrowed no further than its longest word.
    assert.ok(lines.some((line) => line.includes('aks-nodepool1-12345678-vmss')));
    // Continuation lines leave the other columns blank and start the wrapped text in its column.
    const reasonColumn = (lines[0] ?? '').indexOf('REASON');
    assert.ok(lines.slice(2).some((line) => line.startsWith(' '.repeat(reasonColumn)) && line.trim() !== ''));
  });

  void it('fits files and pipes into DEFAULT_WIDTH by default', () => {
    const text = table(['POOL', 'REASON'], [['agents', LONG_REASON.repeat(3)]]);
    for (const line of text.split('\n')) assert.ok(line.length <= DEFAULT_WIDTH, line);
    assert.equal(squash(text), squash(`POOL REASON agents ${LONG_REASON.repeat(3)}`));
  });

  void it('is wider than asked rather than splitting a word that cannot fit', () => {
    const id = 'x'.repeat(70);
    const text = table(['A', 'B'], [[id, id]], { width: 60 });
    assert.ok(text.includes(id));
  });
});

void describe('formatSeconds', () => {
  const cases: readonly (readonly [number | undefined, string])[] = [
    [undefined, '-'],
    [0, '0s'],
    [59, '59s'],
    [60, '1m'],
    [3_600, '1h'],
    [5_400, '1h30m'],
    [180_652, '2d2h10m52s'],
    [86_400 * 3, '3d'],
    [12.6, '13s'],
  ];
  for (const [seconds, text] of cases) {
    void it(`${seconds} → ${text}`, () => assert.equal(formatSeconds(seconds), text));
  }
});

void describe('render', () => {
  void it('shows the donor out of service in the operator format and the whole reason', () => {
    const result: CommandResult = {
      kind: 'refresh',
      failures: [],
      clusters: [
        {
          cluster: 'prod',
          pools: [
            {
              cluster: 'prod',
              pool: 'agents',
              outcome: 'refused',
              reason: LONG_REASON,
              donorOutOfServiceSeconds: 331,
            },
          ],
        },
      ],
    };
    const text = render(result, { width: 90 });
    assert.match(text, /\b5m31s\b/);
    assert.doesNotMatch(text, /331s|…/);
    assert.ok(squash(text).includes(squash(LONG_REASON)));
  });
});

void describe('render: release', () => {
  void it("a release that took over a gone process's lease says so", () => {
    const holderGone = { runId: 'run-dead', host: 'laptop', pid: 31337 };
    const result = (dryRun: boolean): CommandResult => ({
      kind: 'release',
      dryRun,
      failures: [],
      pools: [
        {
          cluster: 'prod',
          pool: 'agents',
          outcome: dryRun ? 'planned' : 'released',
          actions: ['give node n1 back: uncordon it'],
          kept: [],
          failures: [],
          holderGone,
        },
      ],
    });
    assert.match(
      render(result(false)).replaceAll(/\s+/g, ' '),
      /the run's process 31337 on laptop is gone \(run run-dead\): its lease was taken over at once, not after it expired give node n1 back/,
    );
    assert.match(render(result(true)).replaceAll(/\s+/g, ' '), /its lease would be taken over at once/);
  });
});

void describe("render: what gives back a dead run's node", () => {
  const refresh = (pool: Record<string, unknown>): CommandResult => ({
    kind: 'refresh',
    failures: [],
    clusters: [
      { cluster: 'prod', pools: [{ cluster: 'prod', pool: 'agents', reason: 'why', ...pool } as never] },
    ],
  });
  const ADVICE =
    /`vmss-prototype release --pool agents` gives back what a dead run of the pool holds \(its node first\): at once when that run was a refresh on this machine whose process is gone, otherwise once its lease expired \(within 15 minutes\); so does any later refresh of the pool, and the function app's reaper/;

  void it('a refresh held by another run, or failed after planning, says it', () => {
    const busy = render(refresh({ outcome: 'busy' })).replaceAll(/\s+/g, ' ');
    assert.match(busy, /if the run holding it is dead: /);
    assert.match(busy, ADVICE);
    const failed = render(
      refresh({ outcome: 'failed', failure: { step: 'waiting-for-power-off', message: 'gone' } }),
    ).replaceAll(/\s+/g, ' ');
    assert.match(failed, /if its node is still held \(see `vmss-prototype status`\): /);
    assert.match(failed, ADVICE);
  });

  void it('a refresh that held nothing says nothing of it', () => {
    for (const pool of [
      { outcome: 'refreshed' },
      { outcome: 'refused' },
      { outcome: 'failed', failure: { step: 'planning', message: 'no access' } },
    ]) {
      assert.doesNotMatch(render(refresh(pool)), /vmss-prototype release/, JSON.stringify(pool));
    }
  });
});
