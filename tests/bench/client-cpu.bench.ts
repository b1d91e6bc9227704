/**
 * CPU of one CLI refresh, as a user's process pays it: `vmss-prototype refresh --pool …` runs in a child
 * process against a simulator in this process (manual clock), and the child reports its own user + system
 * CPU when it exits (a preloaded module; module loading is included, which is the point). The simulator's
 * CPU is this process's and is not counted.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { POOL1, sampleScenario } from '../e2e/harness.js';

const CLI = fileURLToPath(new URL('../../../cli/vmss-prototype.cjs', import.meta.url));

// Appends `{"user":µs,"system":µs}` to the file named by VMSSP_BENCH_CPU_FILE when the process exits.
const REPORTER = `import { appendFileSync } from 'node:fs';
process.on('exit', () => {
  const file = process.env.VMSSP_BENCH_CPU_FILE;
  if (file) appendFileSync(file, JSON.stringify(process.cpuUsage()) + '\\n');
});
`;

export interface ClientCpuFigures {
  readonly clientCpuS: number;
  readonly exitCode: number | null;
  readonly wallS: number;
}

/**
 * One CLI refresh with Node's compile cache in `compileCache` (empty: a first run, paying to compile
 * every module; filled by an earlier run: what each later run pays).
 */
export async function measureClientCpu(compileCache: string): Promise<ClientCpuFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-bench-cpu-'));
  const sim = await startSimulatorSession({ scenarioPath: sampleScenario(), clock: 'manual' });
  try {
    const connection = join(dir, 'connection.json');
    await writeConnectionFile(connection, connectionOf(sim.running));
    const reporter = join(dir, 'cpu-reporter.mjs');
    await writeFile(reporter, REPORTER);
    const cpuFile = join(dir, 'cpu.ndjson');
    const start = performance.now();
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [CLI, 'refresh', '--pool', POOL1, '--sim-connect', connection, '--state-dir', join(dir, 'runs')],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: {
            ...process.env,
            NODE_OPTIONS: `--import=${pathToFileURL(reporter).href}`,
            VMSSP_BENCH_CPU_FILE: cpuFile,
            NODE_COMPILE_CACHE: compileCache,
          },
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code !== 0)
          console.error(`bench: the CLI refresh exited ${String(code)}:\n${stderr.slice(-2000)}`);
        resolve(code);
      });
    });
    const wallS = (performance.now() - start) / 1000;
    const usages = (await readFile(cpuFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { user: number; system: number });
    const micros = usages.reduce((sum, usage) => sum + usage.user + usage.system, 0);
    return { clientCpuS: Number((micros / 1e6).toFixed(2)), exitCode, wallS: Number(wallS.toFixed(1)) };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A first CLI refresh (empty compile cache) and the next one (the cache the first left). */
export async function measureClientCpuColdAndWarm(): Promise<{
  readonly cold: ClientCpuFigures;
  readonly warm: ClientCpuFigures;
}> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'vmssp-bench-compile-cache-'));
  try {
    const cold = await measureClientCpu(cacheDir);
    const warm = await measureClientCpu(cacheDir);
    return { cold, warm };
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}
