/**
 * CPU of one CLI refresh, as a user's process pays it: `vmss-prototype refresh --pool …` runs in a child
 * process against a simulator in this process (manual clock). The figure is the whole process tree as
 * `/usr/bin/time` sees it: user + system of the CLI process and of every child it waited for, start-up,
 * module loading and exit included, measured from outside (GNU time's `%U`/`%S`, from the `wait4` rusage
 * of its child: https://man7.org/linux/man-pages/man2/wait4.2.html). Without `/usr/bin/time`, the same
 * rusage is read as the growth of this process's `cutime` + `cstime` in `/proc/self/stat` across the
 * waited-for child (https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html). The process's own
 * `process.cpuUsage()` at its `exit` event is reported beside it: it misses the exit itself and any child.
 * The simulator's CPU is this process's and is not counted.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { POOL1, sampleScenario } from '../e2e/harness.js';

const CLI = fileURLToPath(new URL('../../../cli/vmss-prototype.cjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The launcher's choice (cli/bundle-cli.cjs `cliEntry`), read the way the launcher reads it. */
const bundleCli = createRequire(import.meta.url)('../../../cli/bundle-cli.cjs') as {
  cliEntry: (root: string) => string;
  BUNDLE_DIR: string;
  ENTRY: string;
};

/**
 * What the CLI child loaded: the bundle, or the ~1 800 compiled modules when the bundle is missing or older
 * than the last `tsc -b`. The modules cost about twice the bundle's CPU (1.9–2.1 s against 0.93–1.15 s for
 * the same refresh on a quiet machine, docs/scale.md): a figure measured on them is not what a user's
 * command costs after `npm run build`.
 */
export type CliEntryKind = 'bundle' | 'compiled modules';

export function cliEntryKind(): CliEntryKind {
  const bundle = join(ROOT, bundleCli.BUNDLE_DIR, bundleCli.ENTRY);
  return bundleCli.cliEntry(ROOT) === bundle ? 'bundle' : 'compiled modules';
}

// Appends `{"user":µs,"system":µs}` to the file named by VMSSP_BENCH_CPU_FILE when the process exits.
const REPORTER = `import { appendFileSync } from 'node:fs';
process.on('exit', () => {
  const file = process.env.VMSSP_BENCH_CPU_FILE;
  if (file) appendFileSync(file, JSON.stringify(process.cpuUsage()) + '\\n');
});
`;

/** How `clientCpuS` was measured. */
export type ClientCpuSource = '/usr/bin/time' | '/proc/self/stat cutime+cstime';

export interface ClientCpuFigures {
  /** User + system CPU of the CLI's whole process tree, from outside (`cpuSource`). */
  readonly clientCpuS: number;
  readonly cpuSource: ClientCpuSource;
  /** What the launcher loaded (cliEntryKind): only `bundle` is what a built install runs. */
  readonly cliEntry: CliEntryKind;
  /** What the CLI process counted itself at its `exit` event (`process.cpuUsage()`): no exit, no children. */
  readonly exitEventCpuS: number;
  readonly exitCode: number | null;
  readonly wallS: number;
  /**
   * Requests the CLI made (counted by the simulator): the client's CPU grows with them (≈ 2 ms of CPU
   * per Kubernetes request through @kubernetes/client-node on this machine, docs/scale.md).
   */
  readonly requests: { readonly arm: number; readonly kube: number };
}

export const GNU_TIME = '/usr/bin/time';

/** True when `/usr/bin/time` takes GNU time's `-f` and `-o` (BusyBox and BSD builds may not). */
export function gnuTimeWorks(): boolean {
  const probe = spawnSync(GNU_TIME, ['-f', '%U %S', '-o', '/dev/null', process.execPath, '-e', '0'], {
    stdio: 'ignore',
  });
  return probe.error === undefined && probe.status === 0;
}

/** Linux's USER_HZ, the unit of `/proc/<pid>/stat` times: 100 on every architecture (it is ABI). */
const CLOCK_TICKS_PER_SECOND = 100;

/** This process's waited-for children's user + system CPU so far, in seconds (fields 16 and 17 of its stat). */
export function childrenCpuS(): number {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch (error) {
    throw new Error(
      'bench: measuring the CLI process tree needs GNU time at /usr/bin/time or Linux /proc/self/stat; ' +
        'install GNU time (e.g. apt-get install time)',
      { cause: error },
    );
  }
  // The command name (field 2) may hold spaces and parentheses: count fields from after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [cutime, cstime] = [Number(fields[13]), Number(fields[14])];
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime))
    throw new Error(`bench: cannot read cutime and cstime from /proc/self/stat: ${stat.slice(0, 200)}`);
  return (cutime + cstime) / CLOCK_TICKS_PER_SECOND;
}

/** User + system seconds from GNU time's `-o` file (`%U %S` on its last line; a signal adds a line before it). */
function parseGnuTime(text: string): number {
  const last = text.trim().split('\n').at(-1) ?? '';
  const match = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(last.trim());
  if (match === null) throw new Error(`bench: cannot read /usr/bin/time's output: ${JSON.stringify(text)}`);
  return Number(match[1]) + Number(match[2]);
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
    const timeFile = join(dir, 'time.txt');
    const cpuSource: ClientCpuSource = gnuTimeWorks() ? '/usr/bin/time' : '/proc/self/stat cutime+cstime';
    const cli = [
      CLI,
      'refresh',
      '--pool',
      POOL1,
      '--sim-connect',
      connection,
      '--state-dir',
      join(dir, 'runs'),
    ];
    const [command, args] =
      cpuSource === '/usr/bin/time'
        ? [GNU_TIME, ['-f', '%U %S', '-o', timeFile, process.execPath, ...cli]]
        : [process.execPath, cli];
    const entry = cliEntryKind();
    const childrenBefore = childrenCpuS();
    sim.running.log.reset();
    const start = performance.now();
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(command, args, {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: {
          ...process.env,
          NODE_OPTIONS: `--import=${pathToFileURL(reporter).href}`,
          VMSSP_BENCH_CPU_FILE: cpuFile,
          NODE_COMPILE_CACHE: compileCache,
        },
      });
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
    const { byApi } = sim.running.log.snapshot();
    const treeCpuS =
      cpuSource === '/usr/bin/time'
        ? parseGnuTime(await readFile(timeFile, 'utf8'))
        : childrenCpuS() - childrenBefore;
    const usages = (await readFile(cpuFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { user: number; system: number });
    const micros = usages.reduce((sum, usage) => sum + usage.user + usage.system, 0);
    return {
      clientCpuS: Number(treeCpuS.toFixed(2)),
      cpuSource,
      cliEntry: entry,
      exitEventCpuS: Number((micros / 1e6).toFixed(2)),
      exitCode,
      wallS: Number(wallS.toFixed(1)),
      requests: { arm: byApi.arm ?? 0, kube: byApi.kube ?? 0 },
    };
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
