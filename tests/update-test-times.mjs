// `npm run test:times`: copies the times of the last full `npm test` (dist/test-times.json, written by
// tests/run-tiers.mjs) into tests/test-times.json, the checked-in file that orders the next runs (the
// longest first). Run it after a full run when files were added or grew, and commit the result.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './test-files.mjs';

const measured = JSON.parse(readFileSync(join(ROOT, 'dist', 'test-times.json'), 'utf8'));
const seconds = Object.fromEntries(
  Object.entries(measured.jobs)
    .map(([key, value]) => [key, Math.round(value)])
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
);
const file = join(ROOT, 'tests', 'test-times.json');
writeFileSync(
  file,
  `${JSON.stringify({ about: 'Wall seconds per test job of the last full run: npm run test:times', seconds }, null, 2)}\n`,
);
console.log(`test:times: ${Object.keys(seconds).length} jobs written to tests/test-times.json`);
