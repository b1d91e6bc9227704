/**
 * Entry point of `npm run bench` (`node --expose-gc dist/tests/bench/index.js [--json] [name…]`): runs
 * every registered benchmark, or only those named on the command line, and prints tables.
 * `refresh --trace-arm` prints every ARM request of a pool's first and next refresh with the activity that
 * sent it instead of the refresh figures; `--seed=<n>` picks the jitter seed of that trace and of the
 * `jitter` bench (every seed 1–10 without it). With `--json`
 * it prints one JSON object on stdout instead (the figures below; progress and notes on stderr), for
 * machines comparing runs; `--json jitter commands` prints only the named benches' figures, each under
 * its name. Simulated figures come from a manual clock and do not vary between runs;
 * wall, CPU and memory figures do.
 */

import { newNodeReadyTable } from '../../sim/world/bootstrap-timing.js';
import { EXCLUDED_AS_POLLS } from './arm-polls.js';
import { measureClientCpuColdAndWarm } from './client-cpu.bench.js';
import { type CommandFigures, measureCommands, printCommands } from './commands.bench.js';
import { FLOOR_DEFINITION } from './donor-floor.js';
import { fleetFigures, printFleetFigures } from './fleet.bench.js';
import {
  ARM_BUDGET,
  ARM_GOAL,
  DONOR_OVERHEAD_GOAL_S,
  jitterFigures,
  jitterMax,
  printJitterFigures,
} from './jitter.bench.js';
import { kubeadmFigures, printKubeadmFigures } from './kubeadm.bench.js';
import { measureNodeReads, printNodeReads } from './node-reads.bench.js';
import { measurePlannerMemory, printPlannerMemory } from './planner-memory.bench.js';
import { measurePlannerRss, printPlannerRss } from './planner-rss.bench.js';
import {
  HEADLINE_JITTER_SEED,
  printArmTraces,
  printRefreshFigures,
  type RefreshFigures,
  refreshFigures,
} from './refresh.bench.js';
import { measureSelection, selectionBench } from './selection.bench.js';

/** `--trace-arm` (the refresh bench prints every ARM request instead of its figures) and `--seed=<n>`. */
export interface BenchOptions {
  readonly traceArm: boolean;
  readonly seed?: number;
}

export interface Bench {
  readonly name: string;
  run(options: BenchOptions): void | Promise<void>;
  /** The bench's figures as one JSON value, for `--json <name>…`; a bench without it prints tables only. */
  figures?(options: BenchOptions): Promise<unknown>;
}

const refreshBench: Bench = {
  name: 'refresh',
  async run(options) {
    if (options.traceArm) await printArmTraces(options.seed);
    else printRefreshFigures(await refreshFigures());
  },
  figures: () => refreshFigures(),
};

const clientCpuBench: Bench = {
  name: 'client-cpu',
  async run() {
    const { cold, warm } = await measureClientCpuColdAndWarm();
    for (const [label, figures] of [
      ['first run (empty compile cache)', cold],
      ['next run (compile cache filled)', warm],
    ] as const) {
      console.log(
        `\none CLI refresh, ${label} (child process tree, start-up to exit): ${figures.clientCpuS} s CPU ` +
          `(user + system, ${figures.cpuSource}; the process's own count at its exit event ${figures.exitEventCpuS} s), ` +
          `${figures.wallS} s wall, exit ${String(figures.exitCode)}; ` +
          `requests ARM ${figures.requests.arm}, Kubernetes ${figures.requests.kube}; the CLI ran its ${figures.cliEntry}`,
      );
      if (figures.cliEntry !== 'bundle') {
        console.log(
          '  not what a built install costs: the CLI bundle is missing or older than the last tsc -b ' +
            '(npm run build makes it; the compiled modules cost about twice its CPU, docs/scale.md)',
        );
      }
    }
  },
  figures: () => measureClientCpuColdAndWarm(),
};

const plannerMemoryBench: Bench = {
  name: 'planner-memory',
  async run() {
    printPlannerMemory(await measurePlannerMemory());
  },
};

const plannerRssBench: Bench = {
  name: 'planner-rss',
  async run() {
    printPlannerRss(await measurePlannerRss());
  },
};

const kubeadmBench: Bench = {
  name: 'kubeadm',
  async run() {
    printKubeadmFigures(await kubeadmFigures());
  },
  figures: () => kubeadmFigures(),
};

const fleetBench: Bench = {
  name: 'fleet',
  async run() {
    printFleetFigures(await fleetFigures((line) => console.log(line)));
  },
};

const jitterBench: Bench = {
  name: 'jitter',
  async run(options) {
    printJitterFigures(await jitterFigures(jitterSeeds(options)));
  },
  async figures(options) {
    const seeds = await jitterFigures(jitterSeeds(options));
    return {
      budget: ARM_BUDGET,
      goal: ARM_GOAL,
      overheadGoalS: DONOR_OVERHEAD_GOAL_S,
      max: jitterMax(seeds),
      seeds,
    };
  },
};

function jitterSeeds(options: BenchOptions): readonly number[] | undefined {
  return options.seed === undefined ? undefined : [options.seed];
}

/** A new node's scale-out → Ready per flavour, from our image and from the original (sim/world/bootstrap-timing.ts). */
const newNodeReadyBench: Bench = {
  name: 'new-node-ready',
  run() {
    console.log("\nnew node, scale-out → Ready and schedulable (s), from the simulator's timing model");
    for (const [flavour, { ours, original }] of Object.entries(newNodeReadyTable())) {
      console.log(
        `${flavour.padEnd(10)} ours ${String(ours).padStart(4)}  original ${String(original).padStart(4)}`,
      );
    }
  },
};

const nodeReadsBench: Bench = {
  name: 'node-reads',
  async run() {
    printNodeReads(await measureNodeReads());
  },
  figures: () => measureNodeReads(),
};

/** The CLI's doctor, plan, status and refresh --pool as child processes on a valid 20 000-node world. */
const commandsBench: Bench = {
  name: 'commands',
  async run() {
    printCommands(await measureCommands({ world: commandsWorld() }));
  },
  figures: () => measureCommands({ world: commandsWorld() }),
};

function commandsWorld(): 'missing-scale-sets' | 'valid' {
  return process.env['BENCH_COMMANDS_WORLD'] === 'missing-scale-sets' ? 'missing-scale-sets' : 'valid';
}

const BENCHES: readonly Bench[] = [
  selectionBench,
  refreshBench,
  jitterBench,
  newNodeReadyBench,
  kubeadmBench,
  clientCpuBench,
  plannerMemoryBench,
  plannerRssBench,
  fleetBench,
  nodeReadsBench,
  commandsBench,
];

function measured(figures: RefreshFigures | { readonly refused: string }): RefreshFigures | undefined {
  return 'refused' in figures ? undefined : figures;
}

/** The machine-readable summary: the headline figures, and the details they come from. */
async function jsonSummary(): Promise<Record<string, unknown>> {
  const progress = (text: string) => process.stderr.write(`bench: ${text}\n`);
  progress('selection at 5 000 and 20 000 nodes');
  const selection = Object.fromEntries(
    [5_000, 20_000].map((size) => {
      const row = measureSelection(size);
      return [
        `nodes${size / 1000}k`,
        {
          ms: Number((row.convertMs + row.groupMs + row.selectAllPoolsMs).toFixed(1)),
          peakRssMb: Math.round(row.peakRssMb),
        },
      ];
    }),
  );
  progress(
    'refresh of one pool (drain-and-stop, live; with and without jitter; default settings, and keep) and one cluster plan, manual clock',
  );
  const refresh = await refreshFigures();
  const live = measured(refresh.live);
  const liveNoJitter = measured(refresh.noJitter.live);
  progress('refresh of one pool and the next under seeded jitter, seeds 1–10 (default settings, keep, live)');
  const jitter = await jitterFigures();
  progress('a kubeadm pool: refresh (drain-and-stop, live) and a new node before and after');
  const kubeadm = await kubeadmFigures();
  progress('two CLI refreshes in child processes (empty, then filled compile cache)');
  const client = await measureClientCpuColdAndWarm();
  progress('the planner over a 20 000-node paged list, in child processes');
  const plannerMemory = await measurePlannerMemory();
  progress(
    'plan and status of every pool through the real Kubernetes adapter on 20 000 nodes, child processes',
  );
  const plannerRss = await measurePlannerRss();
  progress('a fleet of 1 000 pools over 5 subscriptions, manual clock (minutes)');
  const fleet = await fleetFigures(progress);
  progress('node reads of one pool refresh on a 20 000-node cluster (canary on)');
  const nodeReads = await measureNodeReads();
  progress(
    'doctor, plan, status and refresh --pool of the real CLI on a valid 20 000-node world, child processes',
  );
  const commands = await measureCommands();
  const drain = refresh.drainAndStop;
  return {
    clock: 'manual',
    latencyProfile: 'kamino-observed',
    // The headline figures draw each operation's time from the timing model (sim/world/timing.ts) with
    // this seed; noJitter holds the same figures with every operation at the profile's figure.
    jitterSeed: HEADLINE_JITTER_SEED,
    // The headline's settings: the product's defaults (the passed canary stays and one older node is
    // retired in its place); `keep` holds the figures with the canary kept and nothing retired.
    settings: { canaryAfterPass: 'keep-size' },
    node: process.version,
    donorOutOfServiceS: { drainAndStop: drain.donorOutOfServiceS, live: live?.donorOutOfServiceS ?? null },
    // The world's own durations the donor cannot avoid, and out of service less them (donor-floor.ts).
    donorFloorS: drain.donorFloor?.floorS ?? null,
    donorOverheadS: drain.donorFloor?.overheadS ?? null,
    donorFloor: drain.donorFloor,
    floorDefinition: FLOOR_DEFINITION,
    // Live capture takes the donor out of service 0 s, but freezes its root filesystem this long.
    donorFrozenS: { drainAndStop: drain.donorFrozenS, live: live?.donorFrozenS ?? null },
    donorCordonToReadyS: drain.donorCordonToReadyS,
    refreshTriggerToModelS: drain.refreshTriggerToModelS,
    refreshTriggerToPublishedS: drain.refreshTriggerToPublishedS,
    armRequests: drain.armRequests,
    liveArmRequests:
      live === undefined ? null : { total: live.armRequests.total, again: live.armRequests.again },
    noJitter: {
      donorOutOfServiceS: refresh.noJitter.drainAndStop.donorOutOfServiceS,
      donorFloorS: refresh.noJitter.drainAndStop.donorFloor?.floorS ?? null,
      donorOverheadS: refresh.noJitter.drainAndStop.donorFloor?.overheadS ?? null,
      armRequests: refresh.noJitter.drainAndStop.armRequests,
      liveArmRequests:
        liveNoJitter === undefined
          ? null
          : { total: liveNoJitter.armRequests.total, again: liveNoJitter.armRequests.again },
    },
    keep: {
      donorOutOfServiceS: refresh.keep.donorOutOfServiceS,
      donorOverheadS: refresh.keep.donorFloor?.overheadS ?? null,
      armRequests: refresh.keep.armRequests,
      kubeRequests: refresh.keep.kubeRequests,
    },
    armRequestsExcludingPollsLeavesOut: EXCLUDED_AS_POLLS,
    // The timing model's seeded jitter (sim/world/timing.ts), default settings: per seed the donor's time
    // out of service, its floor and the overhead over it, ARM requests of the first and next refresh
    // (with keep beside, and live capture's), Kubernetes requests; the largest over the seeds; the ARM
    // budgets the tests hold (keep), the goal for the defaults, and the overhead's goal.
    underJitter: {
      budget: ARM_BUDGET,
      goal: ARM_GOAL,
      overheadGoalS: DONOR_OVERHEAD_GOAL_S,
      max: jitterMax(jitter),
      seeds: jitter,
    },
    // Scale-out → Ready per flavour from our image and from the original (sim/world/bootstrap-timing.ts).
    newNodeReadyS: newNodeReadyTable(),
    kubeRequests: drain.kubeRequests,
    kubeRequestsNext: drain.kubeRequestsAgain,
    // The headline (keep-size, the default) over keep: one older node retired in the canary's place.
    keepSizeExtra: refresh.keepSizeExtra,
    historyEvents: drain.historyEvents,
    // Each run after the first (Node's compile cache filled); the first run's figure is in the details.
    clientCpuS: client.warm.clientCpuS,
    clientCpuColdS: client.cold.clientCpuS,
    selection,
    plannerListCallsPerClusterRun: refresh.plannerListCallsPerClusterRun,
    // The planner on 20 000 nodes / 40 pools, 500 a page: list requests, peak RSS and heap, paged vs whole list.
    plannerMemory20k: plannerMemory,
    // Peak RSS (MiB) on 20 000 nodes: plan and status over @kubernetes/client-node and HTTPS (goal ≤ 200),
    // beside the in-process fake's (forced collections); the details in plannerRss20k.
    plannerPeakRssMiB: {
      realAdapter: { plan: plannerRss.plan.peakRssMiB, status: plannerRss.status.peakRssMiB },
      fake: plannerMemory.paged.peakRssMb,
    },
    plannerRss20k: plannerRss,
    fleet: { shape: fleet.shape, ...fleet.figures, failures: fleet.figures.failures.slice(0, 20) },
    // Node-list pages one pool refresh asks for on 20 000 nodes, canary on; goal ≤ 2 × pagesPerFullListing.
    nodeListPagesPerPoolRefresh: nodeReads.nodeListPagesPerPoolRefresh,
    nodeReads20k: nodeReads,
    // The user's commands on 20 000 nodes (every pool's scale set in ARM): node-list pages counted by the
    // simulator, peak RSS and whole-tree CPU of each child; goals: refresh --pool ≤ 80 pages, ≤ 200 MiB.
    commands20k: {
      ...commands,
      // By command name (doctor, plan, status, refresh); each keeps its whole command line.
      commands: Object.fromEntries(
        commands.commands.map((run): [string, CommandFigures] => [run.command.split(' ')[0] ?? '', run]),
      ),
    },
    kubeadm: {
      donorOutOfServiceS: {
        drainAndStop: kubeadm.drainAndStop.donorOutOfServiceS,
        live: kubeadm.live.donorOutOfServiceS,
      },
      newNodeToReadyS: {
        before: kubeadm.newNodeToReady.before.seconds,
        after: kubeadm.newNodeToReady.after.seconds,
      },
    },
    details: {
      drainAndStop: drain,
      live: refresh.live,
      clientRefresh: client,
      kubeadm,
    },
  };
}

/** `--json <name>…`: each named bench's figures under its name, for comparing one part without the rest. */
async function namedFigures(
  names: readonly string[],
  options: BenchOptions,
): Promise<Record<string, unknown>> {
  const tablesOnly = names.filter(
    (name) => BENCHES.find((bench) => bench.name === name)?.figures === undefined,
  );
  if (tablesOnly.length > 0) {
    const withFigures = BENCHES.filter((bench) => bench.figures !== undefined).map((bench) => bench.name);
    throw new Error(
      `running benchmarks: ${tablesOnly.join(', ')} prints tables only; with --json name one of ${withFigures.join(', ')}, or none for every figure`,
    );
  }
  const figures: Record<string, unknown> = { clock: 'manual', node: process.version };
  for (const name of names) {
    const bench = BENCHES.find((candidate) => candidate.name === name);
    process.stderr.write(`bench: ${name}\n`);
    figures[name] = await bench?.figures?.(options);
  }
  return figures;
}

async function main(args: readonly string[]): Promise<void> {
  const json = args.includes('--json');
  const traceArm = args.includes('--trace-arm');
  const seedArg = args.find((arg) => arg.startsWith('--seed='));
  const seed = seedArg === undefined ? undefined : Number(seedArg.slice('--seed='.length));
  if (seed !== undefined && !(Number.isInteger(seed) && seed > 0))
    throw new Error(`running benchmarks: --seed takes a positive integer, not ${seedArg}`);
  const options: BenchOptions = { traceArm, ...(seed === undefined ? {} : { seed }) };
  const names = args.filter((arg) => arg !== '--json' && arg !== '--trace-arm' && arg !== seedArg);
  const unknown = names.filter((name) => !BENCHES.some((bench) => bench.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `running benchmarks: unknown bench ${unknown.join(', ')} (known: ${BENCHES.map((b) => b.name).join(', ')}; --json alone prints every figure as one object)`,
    );
  }
  if (json) {
    console.log(
      JSON.stringify(names.length === 0 ? await jsonSummary() : await namedFigures(names, options), null, 2),
    );
    return;
  }
  const selected = names.length === 0 ? BENCHES : BENCHES.filter((bench) => names.includes(bench.name));
  for (const bench of selected) {
    const start = performance.now();
    await bench.run(options);
    console.log(`bench ${bench.name} finished in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
