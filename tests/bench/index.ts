/**
 * Entry point of `npm run bench` (`node --expose-gc dist/tests/bench/index.js [--json] [name…]`): runs
 * every registered benchmark, or only those named on the command line, and prints tables. With `--json`
 * it prints one JSON object on stdout instead (the figures below; progress and notes on stderr), for
 * machines comparing runs. Simulated figures come from a manual clock and do not vary between runs;
 * wall, CPU and memory figures do.
 */

import { measureClientCpuColdAndWarm } from './client-cpu.bench.js';
import { kubeadmFigures, printKubeadmFigures } from './kubeadm.bench.js';
import { measureNodeReads, printNodeReads } from './node-reads.bench.js';
import { measurePlannerMemory, printPlannerMemory } from './planner-memory.bench.js';
import { printRefreshFigures, type RefreshFigures, refreshFigures } from './refresh.bench.js';
import { measureSelection, selectionBench } from './selection.bench.js';

export interface Bench {
  readonly name: string;
  run(): void | Promise<void>;
}

const refreshBench: Bench = {
  name: 'refresh',
  async run() {
    printRefreshFigures(await refreshFigures());
  },
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
        `\none CLI refresh, ${label} (child process, module loading included): ${figures.clientCpuS} s CPU ` +
          `(user + system), ${figures.wallS} s wall, exit ${String(figures.exitCode)}`,
      );
    }
  },
};

const plannerMemoryBench: Bench = {
  name: 'planner-memory',
  async run() {
    printPlannerMemory(await measurePlannerMemory());
  },
};

const kubeadmBench: Bench = {
  name: 'kubeadm',
  async run() {
    printKubeadmFigures(await kubeadmFigures());
  },
};

const nodeReadsBench: Bench = {
  name: 'node-reads',
  async run() {
    printNodeReads(await measureNodeReads());
  },
};

const BENCHES: readonly Bench[] = [
  selectionBench,
  refreshBench,
  kubeadmBench,
  clientCpuBench,
  plannerMemoryBench,
  nodeReadsBench,
];

function measured(figures: RefreshFigures | { readonly refused: string }): RefreshFigures | undefined {
  return 'refused' in figures ? undefined : figures;
}

/** The machine-readable summary: the figures issue 14 asks for, and the details they come from. */
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
  progress('refresh of one pool (drain-and-stop, live) and one cluster plan, manual clock');
  const refresh = await refreshFigures();
  const live = measured(refresh.live);
  progress('a kubeadm pool: refresh (drain-and-stop, live) and a new node before and after');
  const kubeadm = await kubeadmFigures();
  progress('two CLI refreshes in child processes (empty, then filled compile cache)');
  const client = await measureClientCpuColdAndWarm();
  progress('the planner over a 20 000-node paged list, in child processes');
  const plannerMemory = await measurePlannerMemory();
  progress('node reads of one pool refresh on a 20 000-node cluster (canary on)');
  const nodeReads = await measureNodeReads();
  const drain = refresh.drainAndStop;
  return {
    clock: 'manual',
    latencyProfile: 'kamino-observed',
    node: process.version,
    donorOutOfServiceS: { drainAndStop: drain.donorOutOfServiceS, live: live?.donorOutOfServiceS ?? null },
    donorCordonToReadyS: drain.donorCordonToReadyS,
    refreshTriggerToModelS: drain.refreshTriggerToModelS,
    armRequests: drain.armRequests,
    kubeRequests: drain.kubeRequests,
    // canary.afterPass keep-size (the default) over keep: one older node retired in the canary's place.
    keepSizeExtra: refresh.keepSizeExtra,
    historyEvents: drain.historyEvents,
    // Each run after the first (Node's compile cache filled); the first run's figure is in the details.
    clientCpuS: client.warm.clientCpuS,
    clientCpuColdS: client.cold.clientCpuS,
    selection,
    plannerListCallsPerClusterRun: refresh.plannerListCallsPerClusterRun,
    // The planner on 20 000 nodes / 40 pools, 500 a page: list requests, peak RSS and heap, paged vs whole list.
    plannerMemory20k: plannerMemory,
    // Node-list pages one pool refresh asks for on 20 000 nodes, canary on; goal ≤ 2 × pagesPerFullListing.
    nodeListPagesPerPoolRefresh: nodeReads.nodeListPagesPerPoolRefresh,
    nodeReads20k: nodeReads,
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

async function main(args: readonly string[]): Promise<void> {
  const json = args.includes('--json');
  const names = args.filter((arg) => arg !== '--json');
  const unknown = names.filter((name) => !BENCHES.some((bench) => bench.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `running benchmarks: unknown bench ${unknown.join(', ')} (known: ${BENCHES.map((b) => b.name).join(', ')}; --json prints them all as one object)`,
    );
  }
  if (json) {
    if (names.length > 0) throw new Error('running benchmarks: --json measures every figure; name no bench');
    console.log(JSON.stringify(await jsonSummary(), null, 2));
    return;
  }
  const selected = names.length === 0 ? BENCHES : BENCHES.filter((bench) => names.includes(bench.name));
  for (const bench of selected) {
    const start = performance.now();
    await bench.run();
    console.log(`bench ${bench.name} finished in ${((performance.now() - start) / 1000).toFixed(1)} s`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
