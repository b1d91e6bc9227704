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

/** The checked-in times the run is set against: the fast tier took 25 s of CPU at the usual speed. */
const REFERENCE = join(dir, 'reference.json');
writeFileSync(REFERENCE, JSON.stringify({ seconds: {}, cpuSeconds: { 'fast tier': 25 } }));

function check(
  times: { totalSeconds: number; files: Record<string, number>; cpu?: Record<string, number> },
  ...flags: string[]
): { status: number | null; out: string } {
  const path = join(dir, `times-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(times));
  const result = spawnSync(process.execPath, [SCRIPT, ...flags, path, REFERENCE], { encoding: 'utf8' });
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

  void it("sets the times against the machine's speed that hour, read from the fast tier's CPU", () => {
    // The same suite on a machine 1.6 times slower (the fast tier: 40 s of CPU, 25 s checked in).
    const slow = check({
      totalSeconds: 1500,
      files: { ...WITHIN, 'real-engine/real-engine-3': 250 },
      cpu: { 'fast tier': 40 },
    });
    assert.equal(slow.status, 0, slow.out);
    assert.match(
      slow.out,
      /test budget: 938 s of 1200 s \(40\.0 s CPU for the fast tier against 25 s checked in: the machine ran 1\.60 times slower; 1500 s of wall time\)/,
    );
    assert.match(slow.out, /slowest file real-engine\/real-engine-3 156 s of 180 s/);
    // A grown suite on a machine at its usual speed (or faster) is held to its wall time.
    const grown = check({ totalSeconds: 1300, files: WITHIN, cpu: { 'fast tier': 22 } });
    assert.equal(grown.status, 1, grown.out);
    assert.match(grown.out, /the test phase took 1300 s, over the 1200 s budget/);
    // A machine three times slower is credited twice at most.
    const crawl = check({ totalSeconds: 3000, files: WITHIN, cpu: { 'fast tier': 75 } });
    assert.equal(crawl.status, 1, crawl.out);
    assert.match(
      crawl.out,
      /the test phase took 1500 s \(.*2\.00 times slower; 3000 s of wall time\), over the 1200 s budget/,
    );
    const file = check({ totalSeconds: 800, files: { 'e2e/refresh': 400 }, cpu: { 'fast tier': 50 } });
    assert.equal(file.status, 1, file.out);
    assert.match(
      file.out,
      /tests\/e2e\/refresh\.test\.ts took 200 s at the usual speed \(400 s of wall time\), over the 180 s budget/,
    );
  });

  void it('names the same problems and exits 0 with --report-only', () => {
    const { status, out } = check({ totalSeconds: 1300, files: { 'e2e/refresh': 200 } }, '--report-only');
    assert.equal(status, 0, out);
    assert.match(out, /over the 1200 s budget/);
    assert.match(out, /tests\/e2e\/refresh\.test\.ts took 200 s/);
    assert.match(out, /report only, not enforced \(--report-only\)/);
  });

  void it('fails when there are no times to check', () => {
    const result = spawnSync(process.execPath, [SCRIPT, join(dir, 'missing.json')], { encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /missing\.json is missing; run npm test first/);
  });
});
