/**
 * `vmss-prototype release` on the machine of a refresh whose process is gone: the refresh holds
 * the pool as the CLI does (runner `cli` on this host, its pid on the lease) and is SIGKILLed holding its
 * donor. `release` — a real CLI process, simulated time stopped (manual clock), the lease still live — sees
 * that pid gone, says so, and gives everything back at once instead of after the lease expired.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import type { ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';
import { checkInvariants, takeBefore } from '../chaos/invariants.js';
import { runChild } from './fixtures/crash-sweep.js';
import { POOL2, sampleScenario } from './harness.js';

const CLI = CLI_ENTRY;
/** This machine as a holder identity writes it (characters it does not allow replaced). */
const HOST = hostname()
  .replaceAll(/[^A-Za-z0-9_.:-]/g, '-')
  .slice(0, 80);

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

void describe('release after a refresh’s process died on this machine', { timeout: 5 * 60_000 }, () => {
  void it('takes the pool over at once, saying the process is gone, and gives everything back', async () => {
    const sim = await startSimulatorSession({ scenarioPath: sampleScenario(), clock: 'manual' });
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-gone-'));
    try {
      const running = sim.running;
      const before = takeBefore(running);
      const connection = join(dir, 'connection.json');
      await writeConnectionFile(connection, connectionOf(running));
      const killed = await runChild(
        [connection, join(dir, 'state'), `refresh:prod:${POOL2}`, 'step:snapshotting', POOL2, '{}'],
        { ...process.env, CRASH_RUNNER_AS_CLI: '1' },
      );
      assert.equal(killed.signal, 'SIGKILL', killed.stderr);
      const deathMs = running.clock.nowMs();
      const source = [`--sim-connect=${connection}`, `--pool=${POOL2}`];

      // What would be done, in words: the process named, the take-over, the donor.
      const planned = await cli(['release', ...source, '--dry-run']);
      assert.equal(planned.code, 0, `${planned.stdout}\n${planned.stderr}`);
      const text = planned.stdout.replaceAll(/\s+/g, ' ');
      assert.match(
        text,
        new RegExp(
          `the run's process \\d+ on ${HOST.replaceAll('.', '\\.')} is gone \\(run \\S+\\): its lease would be taken over at once`,
        ),
      );
      assert.match(text, /would give node \S+ back/);

      const released = await cli(['release', ...source, '--json']);
      assert.equal(released.code, 0, `${released.stdout}\n${released.stderr}`);
      const [result] = (JSON.parse(released.stdout) as { pools: ReleasePoolResult[] }).pools;
      assert.equal(result?.outcome, 'released', released.stdout);
      assert.equal(result.holderGone?.host, HOST);
      assert.ok((result.holderGone?.pid ?? 0) > 0);
      // Long before the dead run's lease would have expired (15 minutes after its last renewal).
      const minutes = (running.clock.nowMs() - deathMs) / 60_000;
      assert.ok(minutes < 5, `released ${minutes.toFixed(1)} simulated minutes after the death`);
      const broken = checkInvariants(running, before).filter((check) => !check.ok);
      assert.deepEqual(broken, [], 'everything the dead run held is given back');
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
