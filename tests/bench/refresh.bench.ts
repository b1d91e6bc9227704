/**
 * Cost of one pool refresh on the simulator with the `kamino-observed` latency profile (with the timing
 * model's seeded jitter for the headline figures, and without it beside them), on a manual
 * clock: simulated time moves only when the runner waits on a durable timer (and when an ARM poll
 * stands for a wait a real client would make), so every simulated figure is the same on any machine
 * and under any load. Wall and CPU figures are printed beside them and do vary.
 *
 * Donor figures are observed from outside, on the simulated API server's node objects (not taken from
 * the product's own result): cordon → uncordon, and cordon → Ready and schedulable again.
 * kamino's published run: 243 s cordon to uncordon, about 45 CLI calls.
 */
import { replayWithSdk } from '../../cli/runner/durable-internals.js';
import { HistoryEventType } from '../../cli/runner/history.js';
import { ORCHESTRATORS } from '../../functions/orchestrations/index.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { KubeObject } from '../../sim/contracts.js';
import type { RequestCount } from '../../sim/world/request-log.js';
import type { Harness, HarnessOptions } from '../e2e/harness.js';
import { POOL1, startHarness } from '../e2e/harness.js';
import { type ArmPollSplit, EXCLUDED_AS_POLLS, splitArmPolls } from './arm-polls.js';
import { type ArmTraceEntry, createArmTracer, printArmTrace } from './arm-trace.js';
import { type DonorFloor, FLOOR_DEFINITION, watchDonorTimeline } from './donor-floor.js';
import { frozenSeconds, watchRun } from './run-watch.js';

const REPLAYS = 20;

/**
 * The seed of the headline figures' jitter (sim/world/timing.ts): every long operation takes its own drawn
 * time, as a real cloud's do, rather than exactly the profile's figure, which a wait tuned to the profile
 * would hit every time. The figures without jitter are printed beside them.
 */
export const HEADLINE_JITTER_SEED = 1;

/** The sample scenario with jitter on, drawn from `seed`. */
export function withJitterSeed(seed: number): NonNullable<HarnessOptions['scenario']> {
  return (scenario) => {
    scenario['seed'] = seed;
    const latency = (scenario['latency'] ?? {}) as Record<string, unknown>;
    scenario['latency'] = { ...latency, jitter: true };
  };
}

export type CaptureModeFigure = 'drain-and-stop' | 'live';

export interface RefreshFigures {
  readonly pool: string;
  readonly captureMode: CaptureModeFigure;
  readonly outcome: string;
  /** Cordon → uncordon of the donor (0 when it was never cordoned). */
  readonly donorOutOfServiceS: number;
  /** Cordon → Ready and schedulable again (0 when it never left service). */
  readonly donorCordonToReadyS: number;
  /**
   * The donor's floor (donor-floor.ts: drain, prep pod, stop and start as the world took them) and the
   * overhead over it; null when the donor was not stopped (live capture).
   */
  readonly donorFloor: DonorFloor | null;
  /** Evictions the run asked for. */
  readonly evictions: number;
  /**
   * Start of the run → the scale set's first write: the stop record's tag of a drain-and-stop capture, a
   * canary pin (a later refresh, or a kubeadm pool), or the publication's model update.
   */
  readonly refreshTriggerToModelS: number | null;
  /**
   * Start of the run → the new version published: the model points to the image definition (`latest`,
   * for every new instance, not pinned) and `latest` resolves to the run's version.
   */
  readonly refreshTriggerToPublishedS: number | null;
  /** Simulated seconds the donor's root filesystem stayed frozen (live capture's fsfreeze; 0 when never). */
  readonly donorFrozenS: number;
  readonly refreshS: number;
  /**
   * `total`, `excludingPolls` and the polls it leaves out (arm-polls.ts), request by request: this refresh,
   * the pool's first (it creates the gallery and the image definition). `again`: the next refresh of the same pool, from the same donor by name, where both exist:
   * what every later refresh costs.
   */
  readonly armRequests: ArmPollSplit & { readonly again: number };
  /** ARM requests per operation of the next refresh (`armRequests.again`). */
  readonly armByOperationAgain: Readonly<Record<string, number>>;
  /** ARM requests per operation (every status), most first: where the budget goes. */
  readonly armByOperation: Readonly<Record<string, number>>;
  readonly kubeRequests: number;
  /** Kubernetes requests of the next refresh (`armRequests.again`'s). */
  readonly kubeRequestsAgain: number;
  /** Of them, reads of the pool lease (the cancel watch and the fences share one per activity). */
  readonly kubeLeaseReads: number;
  readonly historyEvents: number;
  readonly historyKb: number;
  /**
   * Activities that failed and were retried (name: error), from the history: none on a quiet machine.
   * A wall-clock request deadline met on an overloaded one shows here, naming why the figures moved.
   */
  readonly failedActivities: readonly string[];
  readonly replayCpuMs: number;
  readonly wallS: number;
  /** Every ARM request of the first and the next refresh with the activity that sent it (`traceArm`). */
  readonly armTrace?: { readonly first: ArmTraceEntry[]; readonly next: ArmTraceEntry[] };
}

interface NodeSample {
  readonly atMs: number;
  readonly unschedulable: boolean;
  readonly ready: boolean;
}

/** Every change of a node's schedulability or readiness, in simulated time. */
function watchNodes(harness: Harness, cluster: string): { samples: Map<string, NodeSample[]>; stop(): void } {
  const handle = harness.sim.running.world.clusters.get(cluster);
  if (handle === undefined) throw new Error(`bench: no cluster ${cluster} in the scenario`);
  const samples = new Map<string, NodeSample[]>();
  const clock = harness.sim.running.clock;
  const stop = handle.world.store.subscribe((event) => {
    if (event.resource !== 'nodes') return;
    const node = event.object as KubeObject & {
      spec?: { unschedulable?: boolean };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const name = node.metadata.name;
    const list = samples.get(name) ?? [];
    const sample: NodeSample = {
      atMs: clock.nowMs(),
      unschedulable: node.spec?.unschedulable === true,
      ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    };
    const last = list.at(-1);
    if (last?.unschedulable !== sample.unschedulable || last.ready !== sample.ready) list.push(sample);
    samples.set(name, list);
  });
  return { samples, stop };
}

/** Cordon → uncordon and cordon → Ready-and-schedulable, in seconds, from a node's samples. */
function donorFigures(samples: readonly NodeSample[]): {
  outOfService: number;
  toReady: number;
  cordonAtMs?: number;
  uncordonAtMs?: number;
} {
  const cordonIndex = samples.findIndex((s) => s.unschedulable || !s.ready);
  const cordon = samples[cordonIndex];
  if (cordon === undefined) return { outOfService: 0, toReady: 0 };
  const later = samples.slice(cordonIndex + 1);
  const uncordon = later.find((s) => !s.unschedulable);
  const back = later.find((s) => !s.unschedulable && s.ready);
  const seconds = (sample: NodeSample | undefined) =>
    sample === undefined ? Number.NaN : Math.round((sample.atMs - cordon.atMs) / 1000);
  return {
    outOfService: seconds(uncordon),
    toReady: seconds(back),
    cordonAtMs: cordon.atMs,
    ...(uncordon === undefined ? {} : { uncordonAtMs: uncordon.atMs }),
  };
}

/** ARM requests per operation, statuses merged, most first; a marketplace listing named by what it is. */
function armByOperation(entries: readonly RequestCount[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const entry of entries) {
    if (entry.api !== 'arm') continue;
    const operation = /\/artifacttypes\/vmimage\//i.test(entry.operation)
      ? 'GET marketplace image versions'
      : entry.operation.replace(/^Microsoft\.Compute\//, '');
    counts.set(operation, (counts.get(operation) ?? 0) + entry.count);
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/**
 * One refresh of `pool`. `afterPass`: what becomes of the passed canary. The refresh's own figures are
 * measured with `keep` (the canary stays, nothing else happens), comparable across rounds and with kamino;
 * the default `keep-size` then retires one older node in the canary's place, a retirement measured apart
 * (keepSizeFigures).
 */
export async function measureRefresh(
  pool: string,
  captureMode: CaptureModeFigure,
  scenario?: HarnessOptions['scenario'],
  afterPass: 'keep' | 'keep-size' = 'keep',
  options: { readonly traceArm?: boolean } = {},
): Promise<RefreshFigures | { readonly refused: string }> {
  let refused: string | undefined;
  let harness: Harness;
  const tracer = options.traceArm === true ? createArmTracer() : undefined;
  try {
    harness = await startHarness({
      clock: 'manual',
      ...(tracer === undefined ? {} : { onEvent: tracer.onEvent }),
      ...(scenario === undefined ? {} : { scenario }),
      settings: (cluster) => {
        cluster.capture = { ...cluster.capture, mode: captureMode };
        const promotion = (cluster['promotion'] ?? {}) as { canary?: Record<string, unknown> };
        cluster['promotion'] = { ...promotion, canary: { ...promotion.canary, afterPass } };
      },
    });
  } catch (error) {
    // A capture mode this build does not have is refused by the settings: reported, not measured.
    refused = error instanceof Error ? error.message.replace(/\s+/g, ' ').slice(0, 300) : String(error);
    return { refused: refused ?? 'refused' };
  }
  try {
    const world = harness.sim.running.world;
    const clock = harness.sim.running.clock;
    const nodes = watchNodes(harness, 'prod');
    const timeline = watchDonorTimeline(harness, 'prod');
    world.log.reset();
    const watch = watchRun(world, clock, pool);
    const stopFirstTrace = tracer?.start(world, clock, pool);
    const instanceId = `bench-${pool}-${captureMode}`;
    const simStart = clock.nowMs();
    const wallStart = performance.now();
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool, trigger: 'bench' },
      instanceId,
    );
    const wallMs = performance.now() - wallStart;
    const endedAtMs = clock.nowMs();
    nodes.stop();
    timeline.stop();
    watch.stop();
    const firstTrace = stopFirstTrace?.();
    if (status.runtimeStatus !== 'Completed')
      throw new Error(`bench refresh failed: ${JSON.stringify(status.failure)}`);
    const result = status.output as PoolRefreshResult;
    const log = world.log.snapshot();
    const sinceStart = (atMs: number | undefined) =>
      atMs === undefined ? null : Math.round((atMs - simStart) / 1000);
    const donor = donorFigures(result.donor === undefined ? [] : (nodes.samples.get(result.donor) ?? []));
    const floor =
      result.donor === undefined || donor.cordonAtMs === undefined || donor.uncordonAtMs === undefined
        ? undefined
        : timeline.floorOf(result.donor, donor.cordonAtMs, donor.uncordonAtMs);
    const history = (await harness.runner.getHistory(instanceId)) ?? [];
    const orchestrator = ORCHESTRATORS[ORCHESTRATION.refreshPool];
    if (orchestrator === undefined) throw new Error('bench: refreshPool is not registered');
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < REPLAYS; i++) {
      await replayWithSdk(orchestrator, {
        instanceId,
        parentInstanceId: undefined,
        functionName: ORCHESTRATION.refreshPool,
        history,
        input: status.input,
        log: () => undefined,
      });
    }
    const cpu = process.cpuUsage(cpuStart);

    // The next refresh of the pool: the gallery and the definition exist now.
    world.log.reset();
    const stopNextTrace = tracer?.start(world, clock, pool);
    const again = await harness.run(
      ORCHESTRATION.refreshPool,
      {
        cluster: 'prod',
        pool,
        trigger: 'bench',
        ...(result.donor === undefined ? {} : { node: result.donor }),
      },
      `${instanceId}-again`,
    );
    const againResult = again.output as PoolRefreshResult | undefined;
    if (again.runtimeStatus !== 'Completed' || againResult?.outcome !== 'refreshed')
      throw new Error(
        `bench: the next refresh did not refresh: ${JSON.stringify(again.failure ?? again.output)}`,
      );
    const logAgain = world.log.snapshot();
    const nextTrace = stopNextTrace?.();
    return {
      pool,
      captureMode,
      outcome: result.outcome,
      donorOutOfServiceS: donor.outOfService,
      donorCordonToReadyS: donor.toReady,
      donorFloor: floor ?? null,
      evictions: log.entries
        .filter((e) => e.api === 'kube' && e.operation.startsWith('pods/eviction:'))
        .reduce((sum, e) => sum + e.count, 0),
      refreshTriggerToModelS: sinceStart(watch.modelChangedAtMs()),
      refreshTriggerToPublishedS: sinceStart(
        result.version === undefined ? undefined : watch.publishedAtMs(result.version.id),
      ),
      donorFrozenS: result.donor === undefined ? 0 : frozenSeconds(world, result.donor, simStart, endedAtMs),
      refreshS: Math.round((endedAtMs - simStart) / 1000),
      armRequests: { ...splitArmPolls(watch.armRequests()), again: logAgain.byApi.arm ?? 0 },
      armByOperation: armByOperation(log.entries),
      armByOperationAgain: armByOperation(logAgain.entries),
      kubeRequests: log.byApi.kube ?? 0,
      kubeRequestsAgain: logAgain.byApi.kube ?? 0,
      kubeLeaseReads: log.entries
        .filter((e) => e.api === 'kube' && e.operation === 'leases:get')
        .reduce((sum, e) => sum + e.count, 0),
      historyEvents: history.length,
      historyKb: Math.round(Buffer.byteLength(JSON.stringify(history)) / 1024),
      failedActivities: history
        .filter((event) => event.EventType === HistoryEventType.TaskFailed)
        .map((event) => {
          const scheduled = history.find(
            (other) =>
              other.EventType === HistoryEventType.TaskScheduled && other.EventId === event.TaskScheduledId,
          );
          return `${scheduled?.Name ?? '?'}: ${event.FailureDetails?.ErrorMessage ?? event.Reason ?? '?'}`;
        }),
      replayCpuMs: Number(((cpu.user + cpu.system) / 1000 / REPLAYS).toFixed(1)),
      wallS: Number((wallMs / 1000).toFixed(1)),
      ...(firstTrace === undefined || nextTrace === undefined
        ? {}
        : { armTrace: { first: firstTrace, next: nextTrace } }),
    };
  } finally {
    await harness.stop();
  }
}

/** Node list calls of one cluster run (every pool planned), from the simulated API server's log. */
export async function measurePlannerListCalls(): Promise<number> {
  const harness = await startHarness({ clock: 'manual' });
  try {
    const world = harness.sim.running.world;
    world.log.reset();
    const status = await harness.run(
      ORCHESTRATION.refreshCluster,
      { cluster: 'prod', dryRun: true, trigger: 'bench' },
      'bench-plan-cluster',
    );
    if (status.runtimeStatus !== 'Completed')
      throw new Error(`bench cluster plan failed: ${JSON.stringify(status.failure)}`);
    return world.log
      .snapshot()
      .entries.filter((e) => e.api === 'kube' && e.operation === 'nodes:list')
      .reduce((sum, e) => sum + e.count, 0);
  } finally {
    await harness.stop();
  }
}

/** What `canary.afterPass: keep-size` (the default) adds to a refresh: one older node retired in the canary's place. */
export interface KeepSizeFigures {
  readonly armRequests: number;
  readonly kubeRequests: number;
  readonly refreshS: number;
}

export interface RefreshFigureSet {
  /**
   * With the timing model's jitter, seed HEADLINE_JITTER_SEED, and the default settings
   * (`canary.afterPass: keep-size`): the headline.
   */
  drainAndStop: RefreshFigures;
  live: RefreshFigures | { readonly refused: string };
  /** The same drain-and-stop refresh with `keep` (the canary stays, nothing retired), beside it. */
  keep: RefreshFigures;
  /** The same without jitter: every operation takes exactly the profile's figure. */
  noJitter: { drainAndStop: RefreshFigures; live: RefreshFigures | { readonly refused: string } };
  plannerListCallsPerClusterRun: number;
  keepSizeExtra: KeepSizeFigures;
}

export async function refreshFigures(): Promise<RefreshFigureSet> {
  const jitter = withJitterSeed(HEADLINE_JITTER_SEED);
  const measured = async (
    captureMode: 'drain-and-stop',
    scenario: HarnessOptions['scenario'],
    afterPass: 'keep' | 'keep-size',
  ): Promise<RefreshFigures> => {
    const figures = await measureRefresh(POOL1, captureMode, scenario, afterPass);
    if ('refused' in figures) throw new Error(`bench: drain-and-stop refused: ${figures.refused}`);
    return figures;
  };
  const drainAndStop = await measured('drain-and-stop', jitter, 'keep-size');
  const keep = await measured('drain-and-stop', jitter, 'keep');
  const live = await measureRefresh(POOL1, 'live', jitter, 'keep-size');
  const drainAndStopNoJitter = await measured('drain-and-stop', undefined, 'keep-size');
  const liveNoJitter = await measureRefresh(POOL1, 'live', undefined, 'keep-size');
  const plannerListCallsPerClusterRun = await measurePlannerListCalls();
  return {
    drainAndStop,
    live,
    keep,
    noJitter: { drainAndStop: drainAndStopNoJitter, live: liveNoJitter },
    plannerListCallsPerClusterRun,
    // On the next refresh: the first tests in a canary scale set of its own (the pool's model still
    // holds its bootstrap, docs/design.md#canary), which leaves keep-size nothing to keep.
    keepSizeExtra: {
      armRequests: drainAndStop.armRequests.again - keep.armRequests.again,
      kubeRequests: drainAndStop.kubeRequestsAgain - keep.kubeRequestsAgain,
      refreshS: drainAndStop.refreshS - keep.refreshS,
    },
  };
}

/** The donor's floor and the overhead over it (donor-floor.ts), when it was stopped. */
export function floorText(row: RefreshFigures): string {
  const floor = row.donorFloor;
  return floor === null
    ? ''
    : `floor ${floor.floorS} s (drain ${floor.drainS}, prep pod ${floor.prepPodS}, stop ${floor.stopS}, ` +
        `start ${floor.startS}), overhead ${floor.overheadS} s, `;
}

/** The donor's filesystem freeze, when it had one (live capture: out of service 0 s, but frozen). */
export function frozenText(row: RefreshFigures): string {
  return row.donorFrozenS > 0 || row.captureMode === 'live'
    ? `filesystem frozen ${row.donorFrozenS} s, `
    : '';
}

/**
 * Start → the scale set's first write (the stop record's tag, or a canary pin) and start → published
 * (`latest` for every new instance).
 */
export function modelText(row: RefreshFigures): string {
  return (
    `start → model ${row.refreshTriggerToModelS ?? '-'} s (first write of the scale set), ` +
    `start → published ${row.refreshTriggerToPublishedS ?? '-'} s (latest for every new instance)`
  );
}

/** ARM requests, and what the count without polls leaves out. */
export function armText(row: RefreshFigures): string {
  const arm = row.armRequests;
  return (
    `ARM ${arm.total} (${arm.excludingPolls} without polls: less ${arm.operationStatusReads} operation-status reads, ` +
    `${arm.resourcePolls} polls of a resource and ${arm.repeatedReads} repeated reads; the next refresh ${arm.again})`
  );
}

export function printRefreshFigures(figures: RefreshFigureSet): void {
  console.log(
    `\nrefresh of one pool, latency profile kamino-observed with seeded jitter (seed ${HEADLINE_JITTER_SEED}; ` +
      'without jitter beside), default settings (canary.afterPass keep-size), manual clock ' +
      '(kamino: 243 s out of service, ~45 CLI calls)',
  );
  for (const [row, plain] of [
    [figures.drainAndStop, figures.noJitter.drainAndStop],
    [figures.live, figures.noJitter.live],
  ] as const) {
    if ('refused' in row) {
      console.log(`live: not measured (${row.refused})`);
      continue;
    }
    console.log(
      `${row.captureMode}: donor out of service ${row.donorOutOfServiceS} s, ${floorText(row)}${frozenText(row)}` +
        `cordon → Ready ${row.donorCordonToReadyS} s, ` +
        `evictions ${row.evictions}, ${modelText(row)}, refresh ${row.refreshS} s (simulated); ` +
        `${armText(row)}, Kubernetes ${row.kubeRequests} (lease reads ${row.kubeLeaseReads}); ` +
        `history ${row.historyEvents} events / ${row.historyKb} KB, replay CPU ${row.replayCpuMs} ms; wall ${row.wallS} s`,
    );
    console.log(
      `  ARM by operation: ${Object.entries(row.armByOperation)
        .map(([operation, count]) => `${operation} ${count}`)
        .join(', ')}`,
    );
    if (!('refused' in plain)) {
      console.log(
        `  without jitter: donor out of service ${plain.donorOutOfServiceS} s, ${floorText(plain)}` +
          `${frozenText(plain)}cordon → Ready ` +
          `${plain.donorCordonToReadyS} s, refresh ${plain.refreshS} s; ${armText(plain)}`,
      );
    }
  }
  console.log(`  without polls: every request but ${EXCLUDED_AS_POLLS}`);
  console.log(
    `node list calls in one cluster run (every pool planned): ${figures.plannerListCallsPerClusterRun}`,
  );
  const extra = figures.keepSizeExtra;
  const keep = figures.keep;
  console.log(
    `canary.afterPass keep (the canary stays, nothing retired): donor out of service ${keep.donorOutOfServiceS} s, ` +
      `${floorText(keep)}refresh ${keep.refreshS} s; ${armText(keep)}, Kubernetes ${keep.kubeRequests}`,
  );
  console.log(
    `keep-size (default) over keep on the next refresh, one older node retired in the canary's place: ` +
      `+${extra.armRequests} ARM, +${extra.kubeRequests} Kubernetes requests; the first refresh +${extra.refreshS} s (simulated)`,
  );
  console.log(`  ${FLOOR_DEFINITION}`);
}

/**
 * `refresh --trace-arm [--seed=<n>]`: the ARM requests of a pool's first and next refresh, one by one with
 * the activity that sent each, with the default settings (drain-and-stop, then live capture) and with
 * `keep`, under the jitter of `seed` (the headline's by default).
 */
export async function printArmTraces(seed: number = HEADLINE_JITTER_SEED): Promise<void> {
  const cases = [
    ['default (keep-size) drain-and-stop', 'drain-and-stop', 'keep-size'],
    ['keep drain-and-stop', 'drain-and-stop', 'keep'],
    ['live default', 'live', 'keep-size'],
  ] as const;
  for (const [label, captureMode, afterPass] of cases) {
    const figures = await measureRefresh(POOL1, captureMode, withJitterSeed(seed), afterPass, {
      traceArm: true,
    });
    if ('refused' in figures || figures.armTrace === undefined) {
      console.log(`## ${label}: not measured`);
      continue;
    }
    printArmTrace(`${label}, seed ${seed}, first refresh`, figures.armTrace.first);
    printArmTrace(`${label}, seed ${seed}, next refresh`, figures.armTrace.next);
  }
}
