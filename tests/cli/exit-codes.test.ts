// Exit codes: 0 done; 1 a run failed, or the pool or node the operator named was refused or skipped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CommandResult } from '../../cli/commands.js';
import { exitCodeOf } from '../../cli/exit-codes.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { RetirementOutcome } from '../../shared/application/retirement-contracts.js';

type Outcome = PoolRefreshResult['outcome'];

function result(outcomes: readonly Outcome[], failures = 0): CommandResult {
  return {
    kind: 'refresh',
    failures: Array.from({ length: failures }, (_, i) => ({ instanceId: `refresh:c${i}`, message: 'boom' })),
    clusters: [
      {
        cluster: 'prod',
        pools: outcomes.map((outcome, i) => ({ cluster: 'prod', pool: `p${i}`, outcome, reason: outcome })),
      },
    ],
  };
}

void describe('exitCodeOf', () => {
  const cases: readonly (readonly [string, CommandResult, { pool?: string; node?: string }, 0 | 1])[] = [
    ['status is always 0', { kind: 'status', clusters: [] }, {}, 0],
    [
      'auto mode: refused and skipped pools are decisions',
      result(['refreshed', 'refused', 'skipped', 'up-to-date']),
      {},
      0,
    ],
    ['auto mode: a failed pool', result(['refreshed', 'failed']), {}, 1],
    ['a run that did not complete', result([], 1), {}, 1],
    ['named pool refreshed', result(['refreshed']), { pool: 'p0' }, 0],
    ['named pool up to date', result(['up-to-date']), { pool: 'p0' }, 0],
    ['named pool with no candidate is skipped: a decision', result(['skipped']), { pool: 'p0' }, 0],
    ['named pool refused', result(['refused']), { pool: 'p0' }, 1],
    ['named pool planned (plan)', result(['planned']), { pool: 'p0' }, 0],
    ['named node refreshed', result(['refreshed']), { pool: 'p0', node: 'n' }, 0],
    ['named node planned (plan)', result(['planned']), { pool: 'p0', node: 'n' }, 0],
    ['named node outside the pool (skipped)', result(['skipped']), { pool: 'p0', node: 'n' }, 1],
    ['named node refused', result(['refused']), { pool: 'p0', node: 'n' }, 1],
    ['named node failed', result(['failed']), { pool: 'p0', node: 'n' }, 1],
  ];
  for (const [name, given, options, code] of cases) {
    void it(`${name} → ${code}`, () => assert.equal(exitCodeOf(given, options), code));
  }
});

function retired(outcome: RetirementOutcome, failures = 0): CommandResult {
  return {
    kind: 'retire',
    failures: Array.from({ length: failures }, () => ({ instanceId: 'retire:prod:p', message: 'boom' })),
    pools: [{ cluster: 'prod', pool: 'p', outcome, reason: outcome, nodes: [] }],
  };
}

void describe('exitCodeOf: retire (like rollback: the operator named the pool)', () => {
  const cases: readonly (readonly [RetirementOutcome, 0 | 1])[] = [
    ['retired', 0],
    ['planned', 0],
    ['nothing-due', 0],
    ['closed', 0],
    ['given-back', 1],
    ['refused', 1],
    ['busy', 1],
  ];
  for (const [outcome, code] of cases) {
    void it(`${outcome} → ${code}`, () => assert.equal(exitCodeOf(retired(outcome), { pool: 'p' }), code));
  }
  void it('a run that did not complete → 1', () => {
    assert.equal(
      exitCodeOf(
        { kind: 'retire', pools: [], failures: [{ instanceId: 'retire:prod:p', message: 'x' }] },
        { pool: 'p' },
      ),
      1,
    );
    assert.equal(exitCodeOf(retired('retired', 1), { pool: 'p' }), 1);
  });
});
