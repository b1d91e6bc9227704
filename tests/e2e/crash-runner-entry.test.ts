/**
 * The crash runner's bundle (fixtures/crash-runner-entry.ts): the crash sweeps' children run one bundled
 * file of the current compile, and it is the crash runner.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { basename, dirname, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { COMPILED_CRASH_RUNNER, crashRunnerEntry } from './fixtures/crash-runner-entry.js';

const DIST = fileURLToPath(new URL('../../', import.meta.url));

void describe('the crash runner bundle', () => {
  void it('is one file of this compile under dist/test-bundles/, built once per process', async () => {
    const entry = await crashRunnerEntry();
    assert.notEqual(entry, COMPILED_CRASH_RUNNER, 'esbuild is installed: the children run the bundle');
    assert.equal(relative(DIST, dirname(dirname(entry))), 'test-bundles');
    assert.equal(basename(entry), 'crash-runner.mjs');
    const compiledAt = Math.trunc(statSync(`${DIST}/tsconfig.tsbuildinfo`).mtimeMs);
    assert.equal(basename(dirname(entry)), `crash-runner-${compiledAt}`, 'keyed by the last compile');
    assert.equal(await crashRunnerEntry(), entry);
  });

  void it('is the crash runner: without arguments it prints its usage and exits 2', async () => {
    const run = spawnSync(process.execPath, [await crashRunnerEntry()], { encoding: 'utf8' });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /^usage: crash-runner <connection\.json> <state-dir>/);
  });
});
