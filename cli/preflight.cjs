#!/usr/bin/env node
// The first thing every entry point a user runs does (`npm run demo`, `npm run sim`, `npm ci` through
// `prepare`, the `vmss-prototype` command): check the Node.js version before anything that needs a newer
// one is compiled or loaded. @kubernetes/client-node 2 (undici) crashes on Node 20 with "Cannot read
// properties of undefined (reading 'bind')" after a minute of building; this says what to do at once.
// Plain CommonJS in old syntax on purpose: it must run, and explain, on whatever Node.js the user has.
//
//   node cli/preflight.cjs            exits 1 with one line when this Node.js is too old
//   node cli/preflight.cjs --build    then builds (tsc -b: only what changed, then the CLI's bundle) when
//                                     TypeScript is installed
/* global __dirname */
'use strict';

const MINIMUM = { major: 22, minor: 19, patch: 0 };
const MINIMUM_TEXT = '22.19';
const FIX =
  'install Node.js 22 or 24 (LTS) and run the command again, e.g. without root: ' +
  '`npm install --prefix ~/.node22 node@22 && export PATH=~/.node22/node_modules/.bin:$PATH`';

/** The problem with a Node.js version (`v20.19.5` or `20.19.5`), or null when it is new enough. */
function nodeVersionProblem(version) {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(version));
  if (match === null) return `cannot read the Node.js version "${String(version)}"`;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  const patch = Number(match[3]);
  const newEnough =
    major !== MINIMUM.major
      ? major > MINIMUM.major
      : minor !== MINIMUM.minor
        ? minor > MINIMUM.minor
        : patch >= MINIMUM.patch;
  return newEnough ? null : `this is Node.js v${major}.${minor}.${patch}`;
}

/** The one line printed for a too-old Node.js (null when it is new enough). */
function versionMessage(version, program) {
  const problem = nodeVersionProblem(version);
  if (problem === null) return null;
  return `${program}: needs Node.js ${MINIMUM_TEXT} or newer (${problem}): ${FIX}`;
}

/** Exits the process with code 1 and the one-line fix when this Node.js is too old. */
function exitUnlessSupported(program) {
  const message = versionMessage(process.version, program);
  if (message === null) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/**
 * `tsc -b` when the compiler is installed: it rebuilds only when a source changed. A production install
 * (`npm ci --omit=dev`) has no compiler and ships dist/ prebuilt, so there is nothing to do then.
 */
function buildIfPossible(root) {
  let compiler;
  try {
    compiler = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    return 0;
  }
  // Said first: the first build (after `npm ci`) takes about a minute and prints nothing while it works.
  process.stderr.write(
    'vmss-prototype: building dist/ (tsc -b, then the CLI bundle; about a minute the first time, ' +
      'seconds when little changed)\n',
  );
  const compiled = runNode(root, [compiler, '-b']);
  if (compiled !== 0) return compiled;
  // Then the CLI's bundle (skipped when it is current or esbuild is missing): the launcher prefers it.
  return runNode(root, [require('path').join(__dirname, 'bundle-cli.cjs')]);
}

/** Runs a script with this Node.js in `root`; its exit status (1 when it was killed). */
function runNode(root, args) {
  const result = require('child_process').spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  return result.status === null ? 1 : result.status;
}

module.exports = { nodeVersionProblem, versionMessage, exitUnlessSupported, MINIMUM_TEXT };

if (require.main === module) {
  exitUnlessSupported('vmss-prototype');
  if (process.argv.includes('--build')) {
    process.exitCode = buildIfPossible(require('path').join(__dirname, '..'));
  }
}
