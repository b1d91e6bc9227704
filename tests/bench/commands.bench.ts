/**
 * The user's commands at 20 000 nodes: the real CLI (`cli/vmss-prototype.cjs`) runs `doctor`, `plan`,
 * `status` and `refresh --pool` as child processes against a simulator in this process (manual clock)
 * whose `prod` cluster is grown to 20 000 nodes with every filler pool's scale set in ARM
 * (large-cluster.ts: a valid world). Per command: the node-list pages the simulated API server served
 * (counted by the simulator from its request log, not by the client), how many of them were a listing of
 * every node and how many a pool's selected pages, where in the command they were read (the step the CLI
 * last announced on stderr; "before the run" is the preconditions and refresh's permission preflight),
 * the child's peak RSS and whole-tree CPU (GNU time's `%M`, `%U` + `%S`: the `wait4` rusage of the tree;
 * the CLI is one process, so its peak RSS is the tree's) and the exit code.
 *
 * Goals (issue 49), reported, never asserted: a whole `refresh --pool` at most 80 node-list pages,
 * preflight included, and every command at most 200 MiB. `BENCH_COMMANDS_WORLD=missing-scale-sets`
 * measures the world whose filler pools have no scale set instead (what the orchestration benches use).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { PAGE_SIZE } from '../../shared/adapters/kubernetes/client-node-connection.js';
import { writeConnectionFile } from '../../sim/connection.js';
import type { LoggedRequest } from '../../sim/world/request-log.js';
import { POOL1, sampleScenario } from '../e2e/harness.js';
import { childrenCpuS, GNU_TIME, gnuTimeWorks } from './client-cpu.bench.js';
import { growCluster, LARGE_CLUSTER_NODES } from './large-cluster.js';

const CLI = fileURLToPath(new URL('../../../cli/vmss-prototype.cjs', import.meta.url));

export const COMMAND_GOALS = { refreshPoolNodeListPages: 80, peakRssMiB: 200 } as const;

export type CommandWorld = 'valid' | 'missing-scale-sets';

export interface CommandFigures {
  /** The arguments after `vmss-prototype` (the simulator's and state dir's left out). */
  readonly command: string;
  readonly exitCode: number | null;
  readonly wallS: number;
  /** User + system CPU of the whole process tree (GNU time), or of the waited-for children (/proc). */
  readonly cpuS: number;
  /** The largest process of the tree's peak RSS (GNU time `%M`), or the CLI's own at its exit. */
  readonly peakRssMiB: number;
  /** Node-list requests the simulated API server served to the command. */
  readonly nodeListPages: number;
  /** Of them, pages of a listing of every node (no selector). */
  readonly fullListingPages: number;
  /** Listings of every node started (a first page without `continue`). */
  readonly fullListings: number;
  /** Of them, pages selected by label (a pool's nodes). */
  readonly selectedPages: number;
  /** Node-list pages per step the CLI announced (`before the run`: preconditions and preflight). */
  readonly pagesByStep: Readonly<Record<string, number>>;
  readonly requests: { readonly arm: number; readonly kube: number };
  /** What the command reported, in a few words (pools read, outcome…). */
  readonly result: string;
}

export interface CommandsFigures {
  readonly world: CommandWorld;
  readonly nodes: number;
  readonly pageSize: number;
  readonly pagesPerFullListing: number;
  readonly goals: typeof COMMAND_GOALS;
  readonly cpuSource: '/usr/bin/time' | '/proc/self/stat cutime+cstime';
  /** Wall time of growing the cluster (the simulator's work, not a command's). */
  readonly growS: number;
  readonly commands: readonly CommandFigures[];
}

const BEFORE_THE_RUN = 'before the run';

/** A few words of what the command printed on stdout (`--json`). */
function resultOf(args: readonly string[], stdout: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return `no JSON result (${stdout.length} bytes on stdout)`;
  }
  const value = parsed as {
    kind?: string;
    ok?: boolean;
    checks?: readonly { result: string }[];
    clusters?: readonly {
      pools: readonly { outcome?: string }[];
      unreadable?: readonly unknown[];
    }[];
  };
  const pools = value.clusters?.flatMap((cluster) => cluster.pools) ?? [];
  if (value.kind === 'doctor') {
    const ok = value.checks?.filter((check) => check.result === 'ok').length ?? 0;
    return `${ok}/${value.checks?.length ?? 0} checks ok`;
  }
  if (value.kind === 'status') {
    const unreadable = value.clusters?.flatMap((cluster) => cluster.unreadable ?? []).length ?? 0;
    return `${pools.length} pools read, ${unreadable} unreadable`;
  }
  const outcomes = new Map<string, number>();
  for (const pool of pools) outcomes.set(pool.outcome ?? '?', (outcomes.get(pool.outcome ?? '?') ?? 0) + 1);
  return [...outcomes].map(([outcome, count]) => `${count} ${outcome}`).join(', ') || args.join(' ');
}

/** `%U %S %M` from GNU time's `-o` file (its last line; a signal adds a line before it). */
function parseTime(text: string): { cpuS: number; maxRssKiB: number } {
  const last = text.trim().split('\n').at(-1) ?? '';
  const match = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+)$/.exec(last.trim());
  if (match === null) throw new Error(`bench: cannot read /usr/bin/time's output: ${JSON.stringify(text)}`);
  return { cpuS: Number(match[1]) + Number(match[2]), maxRssKiB: Number(match[3]) };
}

interface RunContext {
  readonly dir: string;
  readonly connection: string;
  readonly compileCache: string;
  readonly gnuTime: boolean;
  readonly subscribe: (listener: (request: LoggedRequest) => void) => () => void;
}

async function runCommand(context: RunContext, args: readonly string[]): Promise<CommandFigures> {
  const timeFile = join(context.dir, 'time.txt');
  const cli = [
    CLI,
    ...args,
    '--json',
    '--sim-connect',
    context.connection,
    '--state-dir',
    join(context.dir, `runs-${args[0] ?? 'x'}`),
  ];
  const [command, commandArgs] = context.gnuTime
    ? [GNU_TIME, ['-f', '%U %S %M', '-o', timeFile, process.execPath, ...cli]]
    : [process.execPath, cli];
  let step = BEFORE_THE_RUN;
  const pagesByStep: Record<string, number> = {};
  const counts = { pages: 0, full: 0, listings: 0, selected: 0, arm: 0, kube: 0 };
  const stop = context.subscribe((request) => {
    if (request.api === 'arm') counts.arm += 1;
    else counts.kube += 1;
    if (request.api !== 'kube' || request.operation !== 'nodes:list') return;
    const query = new URLSearchParams(request.target?.query ?? '');
    counts.pages += 1;
    pagesByStep[step] = (pagesByStep[step] ?? 0) + 1;
    if (query.has('labelSelector') || query.has('fieldSelector')) counts.selected += 1;
    else {
      counts.full += 1;
      if (!query.has('continue')) counts.listings += 1;
    }
  });
  const childrenBefore = context.gnuTime ? 0 : childrenCpuS();
  const start = performance.now();
  let stdout = '';
  let stderrTail = '';
  let maxRssKiB: number;
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_COMPILE_CACHE: context.compileCache },
    });
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stderrTail = (stderrTail + text).slice(-4000);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        // `--json` progress: one object per line, `{"event":"progress",…,"step":"planning",…}`.
        if (!line.startsWith('{')) continue;
        try {
          const event = JSON.parse(line) as { event?: string; orchestration?: string; step?: string };
          if (event.event === 'progress' && event.step !== undefined)
            step = `${event.orchestration ?? '?'}: ${event.step}`;
        } catch {
          // Not a progress object: ignore.
        }
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 900_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  stop();
  const wallS = (performance.now() - start) / 1000;
  let cpuS: number;
  if (context.gnuTime) {
    const time = parseTime(await readFile(timeFile, 'utf8'));
    cpuS = time.cpuS;
    maxRssKiB = time.maxRssKiB;
  } else {
    cpuS = childrenCpuS() - childrenBefore;
    maxRssKiB = Number.NaN;
  }
  if (exitCode !== 0)
    process.stderr.write(
      `bench: vmss-prototype ${args.join(' ')} exited ${String(exitCode)}:\n${stderrTail}\n`,
    );
  return {
    command: args.join(' '),
    exitCode,
    wallS: Number(wallS.toFixed(1)),
    cpuS: Number(cpuS.toFixed(2)),
    peakRssMiB: Math.round(maxRssKiB / 1024),
    nodeListPages: counts.pages,
    fullListingPages: counts.full,
    fullListings: counts.listings,
    selectedPages: counts.selected,
    pagesByStep,
    requests: { arm: counts.arm, kube: counts.kube },
    result: resultOf(args, stdout),
  };
}

/** The commands of one user, in the order they would run them: check, look, then refresh one pool. */
export const COMMANDS: readonly (readonly string[])[] = [
  ['doctor'],
  ['plan'],
  ['status'],
  ['refresh', '--pool', POOL1],
];

export async function measureCommands(
  options: {
    readonly nodes?: number;
    readonly world?: CommandWorld;
    readonly commands?: typeof COMMANDS;
  } = {},
): Promise<CommandsFigures> {
  const nodes = options.nodes ?? LARGE_CLUSTER_NODES;
  const world = options.world ?? 'valid';
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-bench-commands-'));
  const sim = await startSimulatorSession({ scenarioPath: sampleScenario(), clock: 'manual' });
  try {
    const connection = join(dir, 'connection.json');
    await writeConnectionFile(connection, connectionOf(sim.running));
    const gnuTime = gnuTimeWorks();
    const context: RunContext = {
      dir,
      connection,
      compileCache: join(dir, 'compile-cache'),
      gnuTime,
      subscribe: (listener) => sim.running.log.subscribe(listener),
    };
    // Fills the compile cache on the sample's few nodes first, as any run after a user's first would find it.
    await runCommand(context, ['plan', '--pool', POOL1]);
    const growStart = performance.now();
    const clusterNodes = growCluster(sim.running, nodes, { scaleSets: world === 'valid' });
    const growS = Number(((performance.now() - growStart) / 1000).toFixed(1));
    const commands: CommandFigures[] = [];
    for (const args of options.commands ?? COMMANDS) commands.push(await runCommand(context, args));
    return {
      world,
      nodes: clusterNodes,
      pageSize: PAGE_SIZE,
      pagesPerFullListing: Math.ceil(clusterNodes / PAGE_SIZE),
      goals: COMMAND_GOALS,
      cpuSource: gnuTime ? '/usr/bin/time' : '/proc/self/stat cutime+cstime',
      growS,
      commands,
    };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function printCommands(figures: CommandsFigures): void {
  console.log(
    `\nthe CLI's commands on a ${figures.nodes}-node cluster (${figures.world} world; ${figures.pageSize} nodes ` +
      `a page, ${figures.pagesPerFullListing} pages a listing of every node), each a child process; goals: ` +
      `refresh --pool ≤ ${figures.goals.refreshPoolNodeListPages} node-list pages, ≤ ${figures.goals.peakRssMiB} MiB`,
  );
  for (const run of figures.commands) {
    console.log(
      `${run.command.padEnd(40)} exit ${String(run.exitCode)}, node-list pages ${run.nodeListPages} ` +
        `(${run.fullListings} listings of every node = ${run.fullListingPages} pages, ${run.selectedPages} selected), ` +
        `peak RSS ${run.peakRssMiB} MiB, CPU ${run.cpuS} s, ${run.wallS} s wall; ${run.result}`,
    );
    const steps = Object.entries(run.pagesByStep)
      .map(([step, pages]) => `${step} ${pages}`)
      .join('; ');
    if (steps !== '') console.log(`${''.padEnd(40)} pages by step: ${steps}`);
  }
}
