// The test suite's time budget, checked by CI after `npm test` (.ci/run): fails when the last run's total
// wall time passes 20 minutes or one test file passes 3 minutes, naming each, so that growth is dealt
// with when it happens (shard the file, share its simulator) rather than when CI stops fitting.
// It reads dist/test-times.json, which tests/run-tiers.mjs writes at the end of every run.
//
//   node tests/check-budget.mjs [--report-only] [times.json [reference.json]]
//
// The budget is for the suite on this machine kind at its usual speed, not for the machine's hour: CI's
// machines have run the same suite at 1.0 to 1.7 times the CPU seconds of another hour (docs/conventions.md,
// "The suite's time budget"). The fast tier (one process, pure computation, no waits) is the yardstick:
// its CPU seconds in this run over those checked in (tests/test-times.json, `cpuSeconds['fast tier']`)
// say how much slower the machine ran, and the wall times are divided by that (at most 2) before they
// are compared. A machine as fast or faster is held to the wall times as they are. Growth of the suite
// shows in its wall time, not in the fast tier's CPU: it still fails. Without the fast tier in the run (a
// run of some files) the wall times are compared as they are.
//
// --report-only prints the same problems and exits 0 (for a local run on a machine busy with other work).
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ROOT } from './test-files.mjs';

export const TOTAL_BUDGET_SECONDS = 20 * 60;
export const FILE_BUDGET_SECONDS = 3 * 60;
const FAST_KEY = 'fast tier';
const MAX_SLOWDOWN = 2;

const reportOnly = process.argv.includes('--report-only');
const [timesPath, referencePath] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const path = timesPath ?? join(ROOT, 'dist', 'test-times.json');
if (!existsSync(path)) {
  console.error(`test budget: ${relative(ROOT, path)} is missing; run npm test first`);
  process.exit(1);
}
const measured = JSON.parse(readFileSync(path, 'utf8'));
const reference = JSON.parse(readFileSync(referencePath ?? join(ROOT, 'tests', 'test-times.json'), 'utf8'));

const fastCpu = measured.cpu?.[FAST_KEY];
const fastCpuReference = reference.cpuSeconds?.[FAST_KEY];
const slowdown =
  typeof fastCpu === 'number' && typeof fastCpuReference === 'number' && fastCpuReference > 0
    ? Math.min(Math.max(fastCpu / fastCpuReference, 1), MAX_SLOWDOWN)
    : 1;
const speed =
  slowdown === 1
    ? ''
    : ` (${fastCpu.toFixed(1)} s CPU for the fast tier against ${fastCpuReference} s checked in: the machine ran ` +
      `${slowdown.toFixed(2)} times slower; ${Math.round(measured.totalSeconds)} s of wall time)`;
const atUsualSpeed = (seconds) => seconds / slowdown;

const problems = [];
const total = atUsualSpeed(measured.totalSeconds);
if (total > TOTAL_BUDGET_SECONDS) {
  problems.push(
    `the test phase took ${Math.round(total)} s${speed}, over the ${TOTAL_BUDGET_SECONDS} s budget`,
  );
}
for (const [file, seconds] of Object.entries(measured.files).sort((a, b) => b[1] - a[1])) {
  if (atUsualSpeed(seconds) > FILE_BUDGET_SECONDS) {
    problems.push(
      `tests/${file}.test.ts took ${Math.round(atUsualSpeed(seconds))} s` +
        `${slowdown === 1 ? '' : ` at the usual speed (${Math.round(seconds)} s of wall time)`}, over the ` +
        `${FILE_BUDGET_SECONDS} s budget for one file: shard it or share its simulator`,
    );
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`test budget: ${problem}`);
  if (reportOnly) console.error('test budget: report only, not enforced (--report-only)');
  process.exit(reportOnly ? 0 : 1);
}
const slowest = Object.entries(measured.files).sort((a, b) => b[1] - a[1])[0];
console.log(
  `test budget: ${Math.round(total)} s of ${TOTAL_BUDGET_SECONDS} s${speed}; slowest file ` +
    `${slowest?.[0] ?? '-'} ${Math.round(atUsualSpeed(slowest?.[1] ?? 0))} s of ${FILE_BUDGET_SECONDS} s`,
);
