/**
 * The gate of the tests that need the simulator's real shell (sim/world/real-shell.ts), which runs in
 * bubblewrap: on a developer machine without `bwrap` they skip, saying what to install; under CI=true a
 * missing bwrap fails them, naming the fix (.ci/run installs it), as the status page's browser test does
 * with chromium.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';

import { BWRAP_MISSING, findBwrap } from '../../../sim/world/real-shell.js';

export const BWRAP_SKIP = 'bwrap not installed: apt-get install -y bubblewrap';

function inCi(): boolean {
  return process.env['CI'] === 'true';
}

/**
 * The first line of a test that needs the real shell: `if (skipWithoutBwrap(t)) return;`. True when the
 * test was skipped (no bwrap, not CI); under CI=true without bwrap it fails the test.
 */
export function skipWithoutBwrap(t: TestContext): boolean {
  if (findBwrap() !== null) return false;
  if (inCi()) assert.fail(`CI=true: ${BWRAP_MISSING}`);
  t.skip(BWRAP_SKIP);
  return true;
}

/**
 * The shell a host script should have run in: `real` with bwrap (and under CI=true, where a missing
 * bwrap must fail), else `modelled` — the fallback that keeps a longer test useful on a machine without
 * bubblewrap (it says so in the test's diagnostics).
 */
export function expectedShell(t: TestContext): 'real' | 'modelled' {
  if (findBwrap() !== null || inCi()) return 'real';
  t.diagnostic(`${BWRAP_SKIP}: host scripts ran in the modelled shell`);
  return 'modelled';
}
