// The test suite's time budget, checked by CI after `npm test` (.ci/run): fails when the last run's total
// wall time passes 20 minutes or one test file passes 3 minutes, naming each, so that growth is dealt
// with when it happens (shard the file, share its simulator) rather than when CI stops fitting.
// It reads dist/test-times.json, which tests/run-tiers.mjs writes at the end of every run.
//
//   node tests/check-budget.mjs [--report-only] [times.json]
//
// --report-only prints the same problems and exits 0 (CI used it until the suite fit the budget; a local
// run over a loaded machine may want it). CI runs it without (docs/conventions.md, "The suite's time budget").
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ROOT } from './test-files.mjs';

export const TOTAL_BUDGET_SECONDS = 20 * 60;
export const FILE_BUDGET_SECONDS = 3 * 60;

const reportOnly = process.argv.includes('--report-only');
const path =
  process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? join(ROOT, 'dist', 'test-times.json');
if (!existsSync(path)) {
  console.error(`test budget: ${relative(ROOT, path)} is missing; run npm test first`);
  process.exit(1);
}
const measured = JSON.parse(readFileSync(path, 'utf8'));
const problems = [];
if (measured.totalSeconds > TOTAL_BUDGET_SECONDS) {
  problems.push(
    `the test phase took ${Math.round(measured.totalSeconds)} s, over the ${TOTAL_BUDGET_SECONDS} s budget`,
  );
}
for (const [file, seconds] of Object.entries(measured.files).sort((a, b) => b[1] - a[1])) {
  if (seconds > FILE_BUDGET_SECONDS) {
    problems.push(
      `tests/${file}.test.ts took ${Math.round(seconds)} s, over the ${FILE_BUDGET_SECONDS} s budget for one file: shard it or share its simulator`,
    );
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`test budget: ${problem}`);
  if (reportOnly) console.error('test budget: report only, not enforced yet (docs/conventions.md)');
  process.exit(reportOnly ? 0 : 1);
}
const slowest = Object.entries(measured.files).sort((a, b) => b[1] - a[1])[0];
console.log(
  `test budget: ${Math.round(measured.totalSeconds)} s of ${TOTAL_BUDGET_SECONDS} s; slowest file ${slowest?.[0] ?? '-'} ${Math.round(slowest?.[1] ?? 0)} s of ${FILE_BUDGET_SECONDS} s`,
);
