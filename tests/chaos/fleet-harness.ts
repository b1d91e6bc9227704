/**
 * A fleet in one simulator: `subscriptions` × `clustersPerSubscription` × `poolsPerCluster`
 * pools of 3 nodes, every cluster in its own resource group, Compute's and ARM's per-subscription
 * throttling enforced (sim/arm/throttling.ts), and the product's schedule path: the refresh timer's
 * handler starts one `refresh-subscription:<s>` run per subscription on the local durable runner, which
 * admits the pools a few at a time. Reports what a night costs: pools refreshed and failed, 429s met,
 * ARM requests per pool, wall and simulated time, the peak of pool runs at once per subscription (the
 * admission's cap, counted from the runs' own start and end), and the process's peak memory.
 */
import type { InvocationContext } from '@azure/functions';

import type { OrchestrationStatus } from '../../cli/runner/index.js';
import type { DurableRunner } from '../../cli/runner/index.js';
import { handleRefreshSchedule } from '../../functions/triggers/refresh-schedule.timer.js';
import type { SubscriptionRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { OrchestrationClient } from '../../shared/application/singleton.js';
import { admissionShape } from '../../shared/domain/admission.js';
import type { ScenarioData } from '../e2e/harness.js';
import { startHarness } from '../e2e/harness.js';
import { fleetCluster, runnerOver } from './chaos-harness.js';

export interface FleetShape {
  readonly subscriptions: number;
  readonly clustersPerSubscription: number;
  readonly poolsPerCluster: number;
  /** VMSSP_MAX_POOLS_PER_SUBSCRIPTION. */
  readonly maxPoolsPerSubscription: number;
  /** VMSSP_MAX_PARALLEL_POOLS. */
  readonly maxParallelPools: number;
  /** Simulated seconds per wall second (the scaled clock); without it, the manual clock. */
  readonly timeFactor?: number;
  /**
   * The runner keeps each orchestrator in memory between its episodes instead of replaying its whole
   * history (the Durable extension's `extendedSessionsEnabled`).
   */
  readonly extendedSessions?: boolean;
}

/** Progress while the fleet refreshes: a line every `every` pool runs ended. */
export interface FleetProgress {
  readonly every: number;
  readonly print: (line: string) => void;
}

export interface FleetFigures {
  readonly pools: number;
  readonly refreshed: number;
  readonly failed: number;
  /** `cluster/pool: reason` of every pool (or cluster run) that failed. */
  readonly failures: readonly string[];
  readonly throttled: number;
  readonly armRequests: number;
  readonly armPerPool: number;
  readonly wallSeconds: number;
  readonly simulatedSeconds: number;
  /** The most pool runs of one subscription running at the same moment, and what admission allows. */
  readonly peakPoolsPerSubscription: number;
  readonly admitted: number;
  readonly peakRssMb: number;
  readonly peakHeapMb: number;
  /**
   * The most heap still in use after a full collection, sampled at each progress line when the process
   * runs with `--expose-gc` (the bench does): what the process needs, where the peaks above include
   * garbage V8 had not yet collected. Undefined without `--expose-gc` or progress lines.
   */
  readonly peakLiveHeapMb?: number;
}

/** Subscription GUIDs that differ in their first group only. */
export function subscriptionOf(index: number): string {
  return `${(0x5a000000 + index).toString(16)}-0000-4000-8000-00000000f1ee`;
}

function fleetScenario(shape: FleetShape): (scenario: ScenarioData) => void {
  return (scenario) => {
    (scenario as Record<string, unknown>)['region'] = { ...scenario.region, throttling: 'enforce' };
    scenario.clusters = Array.from({ length: shape.subscriptions * shape.clustersPerSubscription }, (_, c) =>
      fleetCluster(`f${String(c + 1).padStart(3, '0')}`, {
        pools: shape.poolsPerCluster,
        capacity: 3,
        subscriptionId: subscriptionOf(Math.floor(c / shape.clustersPerSubscription)),
      }),
    );
  };
}

/** The DurableClient calls the timer makes, over the local runner: a start returns, the run goes on. */
function clientOver(runner: DurableRunner, runs: Promise<OrchestrationStatus>[]): OrchestrationClient {
  return {
    async getStatus(instanceId) {
      const status = await runner.getStatus(instanceId);
      if (status === undefined) throw new Error(`instance ${instanceId} not found (404)`);
      return status;
    },
    startNew(name, options) {
      runs.push(runner.startOrchestration(name, options.input, options.instanceId));
      return Promise.resolve(options.instanceId);
    },
    raiseEvent() {
      return Promise.reject(new Error('raiseEvent is not used here'));
    },
  };
}

const quietContext = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as InvocationContext;

/** Builds the fleet, refreshes it through the schedule's path, and measures. */
export async function runFleet(shape: FleetShape, progress?: FleetProgress): Promise<FleetFigures> {
  const harness = await startHarness({
    scenario: fleetScenario(shape),
    ...(shape.timeFactor === undefined ? { clock: 'manual' as const } : { timeFactor: shape.timeFactor }),
    env: {
      VMSSP_MAX_POOLS_PER_SUBSCRIPTION: String(shape.maxPoolsPerSubscription),
      VMSSP_MAX_PARALLEL_POOLS: String(shape.maxParallelPools),
    },
  });
  let peakRss = 0;
  let peakHeap = 0;
  const sample = (): void => {
    const usage = process.memoryUsage();
    peakRss = Math.max(peakRss, usage.rss);
    peakHeap = Math.max(peakHeap, usage.heapUsed);
  };
  let peakLiveHeap: number | undefined;
  const collect = (globalThis as { gc?: () => void }).gc;
  const sampleLive = (): void => {
    if (collect === undefined) return;
    collect();
    peakLiveHeap = Math.max(peakLiveHeap ?? 0, process.memoryUsage().heapUsed);
  };
  const sampler = setInterval(sample, 250);
  try {
    const { settings } = harness.composition;
    const subscriptionOfCluster = new Map(
      settings.clusters.map((c) => [c.name, c.subscriptionId.toLowerCase()]),
    );
    const pools = shape.subscriptions * shape.clustersPerSubscription * shape.poolsPerCluster;
    const log = harness.sim.running.log;
    let simStart = harness.sim.clock.now();
    let wallStart = performance.now();
    const simHours = (): number => (harness.sim.clock.now() - simStart) / 3_600_000;
    // Pool runs of each subscription running now, and the most at once (counted, not timed).
    const running = new Map<string, Set<string>>();
    let peak = 0;
    let ended = 0;
    let endedFailed = 0;
    const runner = runnerOver(
      harness,
      (status) => {
        if (status.name !== 'refreshPool') return;
        const cluster = status.instanceId.split(':')[1] ?? '';
        const subscription = subscriptionOfCluster.get(cluster) ?? '';
        const set = running.get(subscription) ?? new Set<string>();
        running.set(subscription, set);
        if (status.runtimeStatus === 'Running' || status.runtimeStatus === 'Pending') {
          set.add(status.instanceId);
          peak = Math.max(peak, set.size);
        } else if (set.delete(status.instanceId)) {
          ended++;
          if (status.runtimeStatus !== 'Completed' || !isRefreshed(status.output)) endedFailed++;
          if (progress !== undefined && (ended % progress.every === 0 || ended === pools)) {
            sample();
            sampleLive();
            progress.print(progressLine(ended, pools, endedFailed, simHours(), wallStart, log, peakRss));
          }
        }
      },
      shape.extendedSessions === true,
    );
    log.reset();
    simStart = harness.sim.clock.now();
    wallStart = performance.now();
    const runs: Promise<OrchestrationStatus>[] = [];
    await handleRefreshSchedule(
      {
        isPastDue: false,
        schedule: { adjustForDST: false },
        scheduleStatus: { last: '', next: '', lastUpdated: '' },
      },
      clientOver(runner, runs),
      quietContext,
      {
        clusters: settings.clusters,
        admission: {
          maxPoolsPerSubscription: settings.maxPoolsPerSubscription,
          maxParallelPools: settings.maxParallelPools,
        },
      },
    );
    const subscriptionRuns = await Promise.all(runs);
    const wallSeconds = (performance.now() - wallStart) / 1000;
    const simulatedSeconds = (harness.sim.clock.now() - simStart) / 1000;
    sample();
    let refreshed = 0;
    const failures: string[] = [];
    for (const status of subscriptionRuns) {
      if (status.runtimeStatus !== 'Completed') {
        failures.push(`${status.instanceId}: ${status.failure?.ErrorMessage ?? status.runtimeStatus}`);
        continue;
      }
      for (const cluster of (status.output as SubscriptionRefreshResult).clusters) {
        if (cluster.outcome !== 'ran') {
          failures.push(`${cluster.cluster}: ${cluster.outcome}: ${cluster.reason}`);
          continue;
        }
        refreshed += cluster.pools.refreshed ?? 0;
        for (const pool of cluster.failed) failures.push(`${cluster.cluster}/${pool.pool}: ${pool.reason}`);
        const other = Object.entries(cluster.pools).filter(
          ([outcome]) => !['refreshed', 'failed'].includes(outcome),
        );
        for (const [outcome, count] of other)
          failures.push(`${cluster.cluster}: ${String(count)} ${outcome}`);
      }
    }
    const armRequests = log.count({ api: 'arm' });
    const admitted = admissionShape(settings.maxPoolsPerSubscription, settings.maxParallelPools);
    return {
      pools,
      refreshed,
      failed: pools - refreshed,
      failures,
      throttled: log.count({ api: 'arm', status: 429 }),
      armRequests,
      armPerPool: Math.round((armRequests / pools) * 10) / 10,
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      simulatedSeconds: Math.round(simulatedSeconds),
      peakPoolsPerSubscription: peak,
      admitted: admitted.poolsAtOnce,
      peakRssMb: Math.round(peakRss / 2 ** 20),
      peakHeapMb: Math.round(peakHeap / 2 ** 20),
      ...(peakLiveHeap === undefined ? {} : { peakLiveHeapMb: Math.round(peakLiveHeap / 2 ** 20) }),
    };
  } finally {
    clearInterval(sampler);
    await harness.stop();
  }
}

/** Whether a pool run's output says it refreshed the pool. */
function isRefreshed(output: unknown): boolean {
  return (output as { outcome?: unknown } | undefined)?.outcome === 'refreshed';
}

function progressLine(
  ended: number,
  pools: number,
  failed: number,
  simHours: number,
  wallStart: number,
  log: { count(filter: { api: 'arm'; status?: number }): number },
  peakRss: number,
): string {
  const wall = (performance.now() - wallStart) / 1000;
  return (
    `fleet: ${String(ended).padStart(String(pools).length)}/${pools} pool runs ended, ${failed} not refreshed, ` +
    `simulated ${simHours.toFixed(1)} h, wall ${wall.toFixed(0)} s, ` +
    `${log.count({ api: 'arm', status: 429 })} 429s, peak RSS ${Math.round(peakRss / 2 ** 20)} MB`
  );
}

/** The figures as one table row per line. */
export function fleetTable(shape: FleetShape, figures: FleetFigures): string {
  const rows: [string, string][] = [
    [
      'fleet',
      `${shape.subscriptions} subscriptions × ${shape.clustersPerSubscription} clusters × ${shape.poolsPerCluster} pools of 3 nodes`,
    ],
    [
      'admission',
      `${shape.maxPoolsPerSubscription} pools per subscription, ${shape.maxParallelPools} per cluster`,
    ],
    ['pools refreshed', `${figures.refreshed} of ${figures.pools}`],
    ['pools failed', String(figures.failed)],
    ['429s met', String(figures.throttled)],
    ['ARM requests per pool', `${figures.armPerPool} (${figures.armRequests} in all)`],
    ['peak pool runs per subscription', `${figures.peakPoolsPerSubscription} (admitted ${figures.admitted})`],
    ['simulated time', `${figures.simulatedSeconds} s (${(figures.simulatedSeconds / 3600).toFixed(1)} h)`],
    ['wall time', `${figures.wallSeconds} s`],
    [
      'peak memory (simulator + runner, one process)',
      `${figures.peakRssMb} MB RSS, ${figures.peakHeapMb} MB heap` +
        (figures.peakLiveHeapMb === undefined
          ? ''
          : `, ${figures.peakLiveHeapMb} MB heap in use after a full collection`),
    ],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}
