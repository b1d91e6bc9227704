// `npm run test:times`: merges the times of the last run (dist/test-times.json, written by
// tests/run-tiers.mjs) into tests/test-times.json, the checked-in file that orders the next runs (the
// longest first, and which short files share a process): the jobs that run replace their times, the others keep theirs, and a job whose test file
// is gone is dropped. Run it after a run of the files that were added or grew, and commit the result.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { allTestFiles, keyOf, ROOT } from './test-files.mjs';

const FAST_KEY = 'fast tier';
const file = join(ROOT, 'tests', 'test-times.json');
const measured = JSON.parse(readFileSync(join(ROOT, 'dist', 'test-times.json'), 'utf8'));
const knownFile = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
const known = knownFile.seconds ?? {};
const knownCpu = knownFile.cpuSeconds ?? {};
const fileKeys = allTestFiles().map(keyOf);
// A group's key is its first file's (tests/run-tiers.mjs): kept while that file is.
const jobs = new Set([FAST_KEY, ...fileKeys, ...fileKeys.map((key) => `group/${key}`)]);
const merged = { ...known };
for (const [key, value] of Object.entries(measured.jobs)) merged[key] = Math.round(value);
const mergedCpu = { ...knownCpu };
for (const [key, value] of Object.entries(measured.cpu ?? {})) {
  if (Number.isFinite(value)) mergedCpu[key] = Math.round(value);
}
// A file that ran in a group: its own tests' time (which decides whether it stays in one), and no CPU of
// its own (its group's is the group key's).
for (const [key, value] of Object.entries(measured.groupFiles ?? {})) {
  merged[key] = Math.round(value);
  delete mergedCpu[key];
}
const seconds = Object.fromEntries(
  Object.entries(merged)
    .filter(([key]) => jobs.has(key))
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
);
writeFileSync(
  file,
  `${JSON.stringify(
    {
      about:
        'Wall and CPU seconds per test job, from the last run of each (npm run test:times merges a run in); unknown jobs start first; CPU over wall is the share of a CPU a job is given when the suite decides how many run at once',
      seconds,
      cpuSeconds: Object.fromEntries(
        Object.keys(seconds)
          .filter((key) => mergedCpu[key] !== undefined)
          .map((key) => [key, mergedCpu[key]]),
      ),
    },
    null,
    2,
  )}\n`,
);
const ran = Object.keys(measured.jobs).length;
console.log(
  `test:times: ${ran} jobs measured, ${Object.keys(seconds).length} written to tests/test-times.json`,
);
