/**
 * The real-engine tier (docs/real-engine.md): the app's orchestrations on the Durable extension itself
 * (DurableTask 3.19, Azure Storage backend on Azurite), against a simulator at ×1 with a fast latency
 * profile and the product's polls scaled to it (VMSSP_SIMULATOR_WAIT_SCALE), each scenario also run on
 * the local runner over its own copy of the world (manual clock) and compared: the same outcome, the same
 * writes (each change to Azure or the cluster, counted by activity), the same kinds of reads and of history
 * events. What wall time decides on the engine is printed, not compared: how many rounds a poll takes,
 * the lease renewals (every 2 minutes of a run), how the two branches of inParallel interleave.
 *
 * This module is what the tier's files share: each file (real-engine-<k>.test.ts) calls `useRealEngine()`
 * and gets one engine and one world per host for its scenarios, which run in order on them; the files run
 * side by side in processes of their own (each engine with its own Azurite and RPC port), so the tier's
 * wall time is its longest file's, not the sum of its scenarios. Skipped (with the reason) when the host
 * is not built, outside CI only; in CI (CI=true) a missing host fails.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';

import * as df from 'durable-functions';

import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { functionAppSettingsFor } from '../../sim/function-app-settings.js';
import { POOL1, sampleScenario } from '../e2e/harness.js';
import { installFunctionsCore } from './bridge.js';
import { type Engine, hostMissing, startEngine } from './engine.js';
import {
  parentOverRunning,
  SEEDED_574,
  SEEDED_ACTIVITY,
  SEEDED_CHILD,
  SEEDED_PARENT,
  seeded574,
  seededActivity,
  waitingChild,
} from './seeded.js';
import { engineSide, runnerSide, type Side } from './sides.js';

export const skip = hostMissing();

export const CLUSTER = 'prod';
export const LIVE_CLUSTER = 'prod-live';

/**
 * The product's polls at 2 % of Azure's timings (an image version's first read at 13 s, not 670 s), and
 * the world's operations a few seconds each: every wait is the world's, not a schedule's.
 */
const WAIT_SCALE = '0.02';
const LATENCY = {
  profile: 'fast',
  overrides: {
    // Well inside the product's first read after the guest's halt (114 s × 0.02 = 2.3 s): a stop still
    // running at that read is powered off through the API, a write the runner's world never needs.
    instanceStopSeconds: 1,
    instanceStartSeconds: 2,
    nodeBootSeconds: 2,
    snapshotCreateSeconds: 2,
    imageVersionCreateSeconds: 5,
    // A pool's first canary still boots the old bootstrap (its extensions go at publication): a full join.
    newNodeJoinFromMarketplaceSeconds: 5,
    newNodeJoinFromPrototypeSeconds: 5,
    newNodeJoinFromPrototypeWithKubeadmJoinSeconds: 5,
    extensionDeleteSeconds: [1, 2],
  },
};

let engine: Engine;
let onEngine: Side;
let onRunner: Side;
const sims: SimulatorSession[] = [];

/** The app settings of a side: the simulator's, a canary with keep-size (the default), the wait scale. */
function appSettings(sim: SimulatorSession): Record<string, string> {
  const values = { ...functionAppSettingsFor(connectionOf(sim.running)).Values };
  const clusters = JSON.parse(values['VMSSP_CLUSTERS'] ?? '[]') as Record<string, unknown>[];
  const first = clusters[0];
  if (first !== undefined) {
    first['promotion'] = { canary: { soak: '10s', deadline: '3m' } };
    // A node kured rebooted a minute ago may give the image: the world's hours are the tier's seconds.
    first['selection'] = { minimumReadyTime: '0s' };
    // The same cluster once more, its first pool captured live: the settings are the host's for the
    // whole tier, so live capture gets a cluster of its own (the pool's lease is the scale set's, shared).
    clusters.push({
      ...first,
      name: LIVE_CLUSTER,
      pools: [{ name: POOL1 }],
      capture: { ...(first['capture'] as Record<string, unknown>), mode: 'live' },
    });
  }
  values['VMSSP_CLUSTERS'] = JSON.stringify(clusters);
  values['VMSSP_SIMULATOR_WAIT_SCALE'] = WAIT_SCALE;
  return values;
}

async function world(clock: 'manual' | 'scaled'): Promise<SimulatorSession> {
  const scenario = sampleScenario();
  scenario['latency'] = LATENCY;
  const sim = await startSimulatorSession({
    scenarioPath: scenario,
    clock,
    ...(clock === 'scaled' ? { timeFactor: 1 } : {}),
  });
  sims.push(sim);
  return sim;
}

/** Calls that only read: how many a wait makes depends on wall time on the engine. */
const READ = /^(read|list|observe|get|plan)/;
/**
 * Writes that wall time decides on the engine: the lease is renewed every 2 minutes of a run; a guest still
 * halting at the first read after its halt is powered off through the API (the product's fallback), which
 * on a loaded machine the engine's world can be slow enough to need and the manual clock never is.
 */
const ON_A_CLOCK = new Set(['renewPoolLease', 'requestInstancePowerOff']);

/**
 * The writes a run made, by name: each kind of change to Azure or the cluster. How many times a write is
 * made can depend on wall time (a drain step is made once per round of its poll), so counts are printed.
 */
function writesOf(calls: readonly string[]): string[] {
  return [...new Set(calls.filter((name) => !READ.test(name) && !ON_A_CLOCK.has(name)))].sort();
}

function writeCount(calls: readonly string[]): number {
  return calls.filter((name) => !READ.test(name) && !ON_A_CLOCK.has(name)).length;
}

/** The reads a run made, by name. */
function readsOf(calls: readonly string[]): string[] {
  return [...new Set(calls.filter((name) => READ.test(name)))].sort();
}

/** History event types and how many of each, poll-driven ones (timers, task events) aside. */
function historyKindsOf(types: readonly string[]): string[] {
  return [...new Set(types.filter((type) => !EPISODE_MARKERS.has(type)))].sort();
}

/** Episode markers: where the engine splits episodes depends on when completions arrive in wall time. */
const EPISODE_MARKERS = new Set(['OrchestratorStarted', 'OrchestratorCompleted']);

export interface Observed {
  readonly ended: { readonly runtimeStatus: string; readonly output: unknown; readonly failure?: string };
  readonly calls: readonly string[];
  readonly history: readonly string[];
  readonly seconds: number;
  /** Of `seconds`, those in which an activity ran (the engine's only). */
  readonly activitySeconds: number | undefined;
}

/** Runs `drive` on a side and collects what the instances it names did. */
async function observe(
  side: Side,
  instanceId: string,
  drive: (side: Side) => Promise<void>,
  histories: readonly string[] = [instanceId],
  setup?: (side: Side) => Promise<void>,
): Promise<Observed> {
  await setup?.(side);
  const started = Date.now();
  const before = side.calls().length;
  await drive(side);
  const ended = await side.settle(instanceId);
  const history: string[] = [];
  for (const id of histories) history.push(...(await side.history(id)));
  return {
    ended,
    calls: side.calls().slice(before),
    history,
    seconds: (Date.now() - started) / 1000,
    activitySeconds: side.activitySeconds(before),
  };
}

/**
 * One scenario on both hosts, printed side by side; fails on any difference. `check` judges the engine's
 * end state (and runs on the runner's too). `setup` prepares a side's world first (not compared).
 */
export async function differential(
  scenario: string,
  instanceId: string,
  drive: (side: Side) => Promise<void>,
  check: (side: Side, ended: Observed['ended']) => void | Promise<void>,
  options: { readonly histories?: readonly string[]; readonly setup?: (side: Side) => Promise<void> } = {},
): Promise<void> {
  const engineRun = await observe(onEngine, instanceId, drive, options.histories, options.setup);
  const runnerRun = await observe(onRunner, instanceId, drive, options.histories, options.setup);
  const events = (run: Observed) => run.history.filter((type) => !EPISODE_MARKERS.has(type));
  const rows: [string, string, string][] = [
    ['', 'engine', 'runner'],
    ['outcome', outcomeOf(engineRun.ended), outcomeOf(runnerRun.ended)],
    ['  reason', reasonOf(engineRun.ended), reasonOf(runnerRun.ended)],
    ['activity calls', String(engineRun.calls.length), String(runnerRun.calls.length)],
    ['  writes', String(writeCount(engineRun.calls)), String(writeCount(runnerRun.calls))],
    ['  kinds of writes', String(writesOf(engineRun.calls).length), String(writesOf(runnerRun.calls).length)],
    ['  kinds of reads', String(readsOf(engineRun.calls).length), String(readsOf(runnerRun.calls).length)],
    ['history events', String(engineRun.history.length), String(runnerRun.history.length)],
    ['  w/o episodes', String(events(engineRun).length), String(events(runnerRun).length)],
    ['wall seconds', engineRun.seconds.toFixed(1), runnerRun.seconds.toFixed(1)],
    [
      '  in activities',
      engineRun.activitySeconds?.toFixed(1) ?? '',
      runnerRun.activitySeconds?.toFixed(1) ?? '',
    ],
  ];
  console.log(
    `real-engine: ${scenario}\n` +
      rows
        .map(([label, a, b]) =>
          a.length < 14 && b.length < 14
            ? `  ${label.padEnd(20)}${a.padEnd(14)}${b}`
            : `  ${label.padEnd(20)}engine: ${a}\n  ${''.padEnd(20)}runner: ${b}`,
        )
        .join('\n'),
  );
  assert.equal(
    outcomeOf(engineRun.ended),
    outcomeOf(runnerRun.ended),
    `${scenario}: outcome, engine vs runner`,
  );
  assert.deepEqual(
    writesOf(engineRun.calls),
    writesOf(runnerRun.calls),
    `${scenario}: writes, engine vs runner`,
  );
  assert.deepEqual(
    readsOf(engineRun.calls),
    readsOf(runnerRun.calls),
    `${scenario}: reads, engine vs runner`,
  );
  assert.deepEqual(
    historyKindsOf(engineRun.history),
    historyKindsOf(runnerRun.history),
    `${scenario}: kinds of history events, engine vs runner`,
  );
  await check(onEngine, engineRun.ended);
  await check(onRunner, runnerRun.ended);
}

function outcomeOf(ended: Observed['ended']): string {
  if (ended.runtimeStatus !== 'Completed') return `${ended.runtimeStatus}: ${ended.failure ?? ''}`;
  const output = ended.output as { outcome?: string } | null;
  return `Completed: ${output?.outcome ?? JSON.stringify(output).slice(0, 80)}`;
}

/** A run's own reason (printed, not compared: it names nodes and times). */
function reasonOf(ended: Observed['ended']): string {
  const output = ended.output as { reason?: unknown } | null | undefined;
  return typeof output?.reason === 'string' ? output.reason.slice(0, 100) : '';
}

export function refreshed(ended: Observed['ended']): PoolRefreshResult {
  assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
  return ended.output as PoolRefreshResult;
}

/**
 * Registers the hooks that start the tier's engine and both worlds before the file's scenarios and stop
 * them after.
 */
export function useRealEngine(): void {
  before(async () => {
    if (skip !== undefined) return;
    installFunctionsCore();
    // The seeded orchestration and its activity, registered next to the app's before the engine starts.
    // Slower than the orchestrator's first timer, so the timer wins and the activity is still pending.
    df.app.activity(SEEDED_ACTIVITY, { handler: seededActivity });
    df.app.orchestration(SEEDED_574, seeded574);
    df.app.orchestration(SEEDED_PARENT, parentOverRunning);
    df.app.orchestration(SEEDED_CHILD, waitingChild);
    const engineWorld = await world('scaled');
    const runnerWorld = await world('manual');
    // The bridge composes the app from the process's app settings, as the Functions host's worker does.
    Object.assign(process.env, appSettings(engineWorld), { WEBSITE_HOSTNAME: 'localhost:7071' });
    engine = await startEngine();
    onEngine = engineSide(engine, engineWorld, 5 * 60_000);
    onRunner = runnerSide(runnerWorld, appSettings(runnerWorld));
  });

  after(async () => {
    if (skip !== undefined) return;
    // Whatever started is stopped, even when the engine never came up (its start failed in `before`).
    try {
      await (engine as Engine | undefined)?.stop();
    } finally {
      for (const sim of sims) await sim.stop();
    }
  });
}

/** The engine of this file's tier (started by `useRealEngine`'s hook). */
export function theEngine(): Engine {
  return engine;
}

/** The engine's side of this file's tier. */
export function engineOf(): Side {
  return onEngine;
}
