// The launcher (cli/vmss-prototype.cjs) keeps Node's compile cache, so a command's second run does not
// compile its modules again; NODE_COMPILE_CACHE moves it and NODE_DISABLE_COMPILE_CACHE turns it off.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LAUNCHER = join(ROOT, 'cli', 'vmss-prototype.cjs');

function help(env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LAUNCHER, '--help'], { cwd: ROOT, timeout: 60_000, env }, (error) => {
      resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : -1);
    });
  });
}

/** Every file under `dir`, recursively (none when it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

void describe('the launcher’s compile cache', () => {
  void it('is kept under node_modules/.cache by default, and not written when disabled', async () => {
    const { NODE_DISABLE_COMPILE_CACHE: _off, NODE_COMPILE_CACHE: _dir, ...env } = process.env;
    const cache = join(ROOT, 'node_modules', '.cache', 'vmss-prototype', 'compile-cache');
    await rm(cache, { recursive: true, force: true });
    assert.equal(await help(env), 0);
    assert.ok((await filesUnder(cache)).length > 0, 'compiled modules cached for the next run');

    const dir = await mkdtemp(join(tmpdir(), 'vmssp-compile-cache-'));
    try {
      const disabled = join(dir, 'disabled');
      assert.equal(await help({ ...env, NODE_COMPILE_CACHE: disabled, NODE_DISABLE_COMPILE_CACHE: '1' }), 0);
      assert.deepEqual(await filesUnder(disabled), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
