/**
 * The way out of an interrupted refresh (docs/cli.md#after-an-interrupted-run), as a user runs it: a CLI
 * `refresh` is SIGKILLed holding its donor, `release` gives back what it held, and the next `refresh`
 * starts at once (it is not refused as "already Running"); `--resume` of the run given back says it is over
 * and what starts a new one. Real CLI processes against a simulator in this process (manual clock).
 * VMSSP_TRANSCRIPT=<file> writes the commands and their output there.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import type { ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';
import { POOL2, sampleScenario } from './harness.js';

const CLI = CLI_ENTRY;
const TRANSCRIPT = process.env['VMSSP_TRANSCRIPT'];

interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI; `killWhen` SIGKILLs it once its stderr so far matches. Killed after 3 minutes anyway. */
function cli(args: readonly string[], killWhen?: RegExp): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (killWhen?.test(stderr) === true) child.kill('SIGKILL');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ran = { code, signal, stdout, stderr };
      void record(args, ran).then(() => resolve(ran), reject);
    });
  });
}

async function record(args: readonly string[], ran: Ran): Promise<void> {
  if (TRANSCRIPT === undefined) return;
  const shown = args.map((arg) =>
    arg.replace(/^--sim-connect=.*/, '--sim-connect=…').replace(/^--state-dir=.*/, '--state-dir=…'),
  );
  const end = ran.signal === null ? `exit ${String(ran.code)}` : `killed (${ran.signal})`;
  await appendFile(TRANSCRIPT, `$ vmss-prototype ${shown.join(' ')}\n${ran.stderr}${ran.stdout}[${end}]\n\n`);
}

void describe('kill → release → refresh', { timeout: 10 * 60_000 }, () => {
  void it('starts the new refresh at once, and a resume of the given-back run says it is over', async () => {
    const sim = await startSimulatorSession({ scenarioPath: sampleScenario(), clock: 'manual' });
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-after-release-'));
    try {
      const connection = join(dir, 'connection.json');
      await writeConnectionFile(connection, connectionOf(sim.running));
      const source = [`--sim-connect=${connection}`, `--state-dir=${join(dir, 'state')}`];

      const killed = await cli(['refresh', `--pool=${POOL2}`, ...source], /: snapshotting/);
      assert.equal(killed.signal, 'SIGKILL', `the refresh was killed holding its donor\n${killed.stderr}`);

      const released = await cli(['release', `--pool=${POOL2}`, ...source, '--json']);
      assert.equal(released.code, 0, `${released.stdout}\n${released.stderr}`);
      const [result] = (JSON.parse(released.stdout) as { pools: ReleasePoolResult[] }).pools;
      assert.equal(result?.outcome, 'released', released.stdout);

      const resumed = await cli(['refresh', `--resume=refresh:prod:${POOL2}`, ...source]);
      assert.equal(resumed.code, 2, resumed.stderr);
      assert.match(
        resumed.stderr,
        /that run is over \(Terminated: its pool was given back by vmss-prototype release/,
      );
      assert.match(
        resumed.stderr,
        new RegExp(`vmss-prototype refresh --pool ${POOL2}\` starts a new one at once`),
      );

      const again = await cli(['refresh', `--pool=${POOL2}`, ...source]);
      assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
      assert.doesNotMatch(again.stderr, /already (?:Running|Pending)/);
      assert.match(again.stdout, /refreshed|updated|version/i, again.stdout);
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
