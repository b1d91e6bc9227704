/**
 * The real-shell tests on a machine without bwrap (bwrap-gate.ts): run in a child process that sees no
 * bwrap (without-bwrap.ts), they skip saying what to install; under CI=true they fail naming the fix.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

function runWithoutBwrap(ci: boolean): { status: number | null; output: string } {
  const env = { ...process.env };
  delete env['CI'];
  delete env['NODE_TEST_CONTEXT'];
  if (ci) env['CI'] = 'true';
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      join(HERE, 'without-bwrap.js'),
      '--test',
      '--test-reporter=tap',
      join(HERE, 'real-shell.test.js'),
    ],
    { env, encoding: 'utf8', timeout: 120_000 },
  );
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

void describe('real-shell tests without bwrap', () => {
  void it('skip on a developer machine, saying what to install', () => {
    const { status, output } = runWithoutBwrap(false);
    assert.equal(status, 0, output);
    assert.match(output, /# SKIP bwrap not installed: apt-get install -y bubblewrap/);
    assert.match(output, /^# fail 0$/m);
    // The tests that need no shell still run.
    assert.match(output, /^\s*ok \d+ - .*→ staged$/m);
  });

  void it('fail under CI=true, naming the fix', () => {
    const { status, output } = runWithoutBwrap(true);
    assert.notEqual(status, 0, output);
    assert.match(output, /CI=true: .*'bwrap' is not installed.*apt-get install -y bubblewrap/);
    assert.doesNotMatch(output, /# SKIP bwrap not installed/);
  });
});
