// `npm run test:fast`: the checks to run while working, in about 90 s on two busy cores — lint of the
// files that changed (ESLint's cache skips what it already passed), and the unit and fake-world
// orchestration tests. No simulator, Azurite, browser, Bicep or child processes: those, the end-to-end,
// chaos, explorer, bench, security and infra tests, and the full lint run in `npm test`, before pushing.
// The package script compiles first (`tsc -b`: the type check, and the tests run from dist/).
//
//   node tests/fast-suite.mjs            format check and lint of the changed files, then the tests
//   node tests/fast-suite.mjs --list     print the test files and exit
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join, relative } from 'node:path';

import { fastTestFiles, ROOT } from './test-files.mjs';

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** A regular file (not a directory or a symbolic link, such as an untracked link to a toolchain). */
function isFile(path) {
  try {
    return lstatSync(join(ROOT, path)).isFile();
  } catch {
    return false;
  }
}

const LINTED = /\.(ts|js|cjs|mjs)$/;

/**
 * The files changed since the branch left main (committed or not, and new ones), or `.` (every file) when
 * git cannot tell. ESLint's cache then skips those it already passed unchanged.
 */
function changedFiles() {
  if (git(['rev-parse', '--is-inside-work-tree'])?.trim() !== 'true') return ['.'];
  const base = ['main', 'origin/main']
    .map((ref) => git(['merge-base', 'HEAD', ref])?.trim())
    .find((hash) => hash !== undefined && hash !== '');
  const lists = [
    base === undefined ? '' : (git(['diff', '--name-only', '--diff-filter=d', base, 'HEAD']) ?? ''),
    git(['diff', '--name-only', '--diff-filter=d', 'HEAD']) ?? '',
    git(['ls-files', '--others', '--exclude-standard']) ?? '',
  ];
  const changed = new Set(
    lists
      .join('\n')
      .split('\n')
      .filter((path) => path !== '' && isFile(path)),
  );
  return [...changed].sort();
}

function run(label, command, args) {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.error !== undefined) throw result.error;
  console.error(`test:fast: ${label} ${result.status === 0 ? 'passed' : 'failed'} in ${seconds} s`);
  return result.status ?? 1;
}

const tests = fastTestFiles();
if (process.argv.includes('--list')) {
  for (const file of tests) console.log(relative(ROOT, file));
  process.exit(0);
}

const changed = changedFiles();
const everything = changed.length === 1 && changed[0] === '.';
const what = (files) => (everything ? 'of every file' : `of ${files.length} changed files`);
const failed = [];
const check = (label, command, args) => {
  if (run(label, command, args) !== 0) failed.push(label);
};

if (changed.length > 0) {
  const prettier = join(ROOT, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
  check(`format check ${what(changed)}`, process.execPath, [
    prettier,
    '--check',
    '--ignore-unknown',
    '--cache',
    '--cache-location',
    'dist/.prettiercache',
    '--log-level',
    'warn',
    ...changed,
  ]);
}
const linted = everything ? changed : changed.filter((path) => LINTED.test(path));
if (linted.length === 0) {
  console.error('test:fast: lint skipped: no source file changed since main');
} else {
  const eslint = join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const cache = ['--cache', '--cache-strategy', 'content', '--cache-location', 'dist/.eslintcache'];
  check(`lint ${what(linted)}`, process.execPath, [
    eslint,
    '--max-warnings',
    '0',
    '--no-warn-ignored',
    ...cache,
    ...linted,
  ]);
}
// One process for every file (`--experimental-test-isolation=none`): loading the SDKs once instead of once
// per file is most of the time saved (about 50 s instead of 4 minutes for the same files on a busy two-core
// machine). A test that fails only here leaks state into the next file: run it alone to tell.
check(`${tests.length} test files`, process.execPath, [
  '--test',
  '--experimental-test-isolation=none',
  '--test-timeout=300000',
  '--test-reporter=dot',
  ...tests.map((file) => relative(ROOT, file)),
]);
if (failed.length > 0) console.error(`test:fast: failed: ${failed.join(', ')}`);
process.exit(failed.length === 0 ? 0 : 1);
