// The launcher (cli/vmss-prototype.cjs) sets V8's heap growing factor for the command it starts: the old
// generation grows by 50 % after a full collection instead of up to 4 times (docs/scale.md, "The
// commands at 20 000 nodes"); VMSSP_HEAP_GROWING_PERCENT changes it, 0 leaves V8's own choice. Seen from
// outside: V8's own trace of the limit it sets after a full collection (`--trace-gc-verbose`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LAUNCHER = join(ROOT, 'cli', 'vmss-prototype.cjs');

let work: string;
let collectAtExit: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-launcher-'));
  collectAtExit = join(work, 'collect-at-exit.cjs');
  // One full collection as the command ends, so that V8 sets (and traces) a new old-generation limit.
  await writeFile(collectAtExit, "process.on('exit', () => globalThis.gc());\n");
});

after(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The growing factors V8 traced for the old generation while `--version` ran. */
function tracedFactors(env: NodeJS.ProcessEnv): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--trace-gc-verbose', '--require', collectAtExit, LAUNCHER, '--version'],
      { cwd: ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024, env },
      (error, stdout) => {
        if (error !== null) return reject(new Error(`vmss-prototype --version: ${error.message}`));
        resolve(
          [...stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)$/gm)].map((match) => match[1] ?? ''),
        );
      },
    );
  });
}

void describe('the launcher', () => {
  void it('grows the old generation by 50 % after a full collection, unless told otherwise', async () => {
    const { VMSSP_HEAP_GROWING_PERCENT: _unset, ...env } = process.env;
    const factors = await tracedFactors(env);
    assert.ok(factors.length > 0, 'V8 traced the limit it set');
    assert.deepEqual(new Set(factors), new Set(['1.5']));

    assert.deepEqual(
      new Set(await tracedFactors({ ...env, VMSSP_HEAP_GROWING_PERCENT: '20' })),
      new Set(['1.2']),
    );
    const own = await tracedFactors({ ...env, VMSSP_HEAP_GROWING_PERCENT: '0' });
    assert.ok(own.length > 0 && !own.includes('1.5'), `V8's own factor: ${own.join(', ')}`);
  });

  void it('refuses a growing percent that is not a whole number up to 400, naming the variable', async () => {
    for (const value of ['fifty', '50%', '-5', '401']) {
      await assert.rejects(tracedFactors({ ...process.env, VMSSP_HEAP_GROWING_PERCENT: value }), (error) => {
        assert.match(
          String(error),
          /VMSSP_HEAP_GROWING_PERCENT must be a whole number of percent from 0 to 400/,
        );
        return true;
      });
    }
  });
});
