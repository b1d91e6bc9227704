// The test phase's time budget (tests/check-budget.mjs, run by .ci/run after `npm test`): it must fail
// CI, naming the file or the total, when a run's times pass 3 minutes for one file or 20 in all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../tests/check-budget.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'check-budget-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function check(
  times: { totalSeconds: number; files: Record<string, number> },
  ...flags: string[]
): { status: number | null; out: string } {
  const path = join(dir, `times-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(times));
  const result = spawnSync(process.execPath, [SCRIPT, ...flags, path], { encoding: 'utf8' });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

const WITHIN = { 'e2e/refresh': 62.4, 'real-engine/real-engine-3': 137.8, 'shared/domain/canary': 0.2 };

void describe('the test time budget check', () => {
  void it('passes a run within the budget and prints the total and the slowest file', () => {
    const { status, out } = check({ totalSeconds: 725, files: WITHIN });
    assert.equal(status, 0, out);
    assert.match(out, /test budget: 725 s of 1200 s; slowest file real-engine\/real-engine-3 138 s of 180 s/);
  });

  void it('fails on one file over 3 minutes, naming it and the fix', () => {
    // A deliberately slowed file: e2e/refresh at 200 s, the total still within.
    const { status, out } = check({ totalSeconds: 790, files: { ...WITHIN, 'e2e/refresh': 200 } });
    assert.equal(status, 1, out);
    assert.match(
      out,
      /tests\/e2e\/refresh\.test\.ts took 200 s, over the 180 s budget for one file: shard it or share its simulator/,
    );
    assert.doesNotMatch(out, /real-engine-3/, 'a file within the budget is not named');
  });

  void it('fails on a total over 20 minutes', () => {
    const { status, out } = check({ totalSeconds: 1201, files: WITHIN });
    assert.equal(status, 1, out);
    assert.match(out, /the test phase took 1201 s, over the 1200 s budget/);
  });

  void it('names the same problems and exits 0 with --report-only', () => {
    const { status, out } = check({ totalSeconds: 1300, files: { 'e2e/refresh': 200 } }, '--report-only');
    assert.equal(status, 0, out);
    assert.match(out, /over the 1200 s budget/);
    assert.match(out, /tests\/e2e\/refresh\.test\.ts took 200 s/);
    assert.match(out, /report only, not enforced/);
  });

  void it('fails when there are no times to check', () => {
    const result = spawnSync(process.execPath, [SCRIPT, join(dir, 'missing.json')], { encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /missing\.json is missing; run npm test first/);
  });
});
