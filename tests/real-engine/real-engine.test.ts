/**
 * The real-engine tier (docs/real-engine.md): the app's orchestrations on the Durable extension itself
 * (DurableTask 3.19, Azure Storage backend on Azurite), against a simulator at ×1 with a fast latency
 * profile and the product's polls scaled to it (VMSSP_SIMULATOR_WAIT_SCALE), each scenario also run on
 * the local runner over its own copy of the world (manual clock) and compared: the same outcome, the same
 * writes (each change to Azure or the cluster, counted by activity), the same kinds of reads and of history
 * events. What wall time decides on the engine is printed, not compared: how many rounds a poll takes,
 * the lease renewals (every 2 minutes of a run), how the two branches of inParallel interleave. One engine and one world serve every scenario, in
 * order; the runner's world goes through the same scenarios. Skipped (with the reason) when the host is
 * not built, outside CI only; in CI (CI=true) a missing host fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as df from 'durable-functions';

import { createDurableRunner, createMemoryStore, createSystemClock } from '../../cli/runner/index.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type {
  ClusterRefreshResult,
  PoolRefreshResult,
  ReapClusterResult,
} from '../../shared/application/refresh-contracts.js';
import type { PoolRetirementResult } from '../../shared/application/retirement-contracts.js';
import { functionAppSettingsFor } from '../../sim/function-app-settings.js';
import { POOL1, POOL2, sampleScenario } from '../e2e/harness.js';
import { installFunctionsCore } from './bridge.js';
import { type Engine, hostMissing, startEngine } from './engine.js';
import {
  overRunning,
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
import { ageHeldLeases, generationsOf, nodesOf, patchAndReboot, terminateAtCordon } from './world-steps.js';

const skip = hostMissing();

const CLUSTER = 'prod';
const LIVE_CLUSTER = 'prod-live';

/**
 * The product's polls at 2 % of Azure's timings (an image version's first read at 13 s, not 670 s), and
 * the world's operations a few seconds each: every wait is the world's, not a schedule's.
 */
const WAIT_SCALE = '0.02';
const LATENCY = {
  profile: 'fast',
  overrides: {
    // Well inside the product's first read after the guest's halt (115 s × 0.02 = 2.3 s): a stop still
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

interface Observed {
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
async function differential(
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

function refreshed(ended: Observed['ended']): PoolRefreshResult {
  assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
  return ended.output as PoolRefreshResult;
}

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

void describe('the real Durable engine', { skip, concurrency: false }, () => {
  void it('reads a cluster status as the local runner does', async () => {
    await differential(
      'cluster status',
      'status-prod',
      (side) => side.start(ORCHESTRATION.clusterStatus, { cluster: CLUSTER }, 'status-prod'),
      (_side, ended) => assert.equal(ended.runtimeStatus, 'Completed'),
    );
  });

  void it('refreshes a pool: drain-and-stop, canary, keep-size', async () => {
    const input = { cluster: CLUSTER, pool: POOL2, trigger: 'real-engine' };
    await differential(
      'pool refresh (canary, keep-size)',
      'refresh-pool2',
      (side) => side.start(ORCHESTRATION.refreshPool, input, 'refresh-pool2'),
      (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        assert.equal(result.canary?.verdict, 'passed', `${side.name}: ${JSON.stringify(result.canary)}`);
        assert.equal(
          result.canary.keptSize?.retired.length,
          1,
          `${side.name}: one node retired in its place`,
        );
        const scaleSet = side.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
        assert.equal(scaleSet?.capacity, 3, `${side.name}: the pool keeps its size`);
      },
    );
  });

  void it('cancels a refresh mid-run: the donor is given back', async () => {
    const input = { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' };
    let cancelled = '';
    await differential(
      'cancel mid-run',
      'cancel-pool1',
      async (side) => {
        // Raised while the drain evicts the donor's pods (a pod event on it once the drain step was called):
        // the run, draining, acts on it at its next boundary. Raised at the cordon, it reaches the engine
        // before or after the first drain step, as wall time decides.
        const store = side.sim.running.world.cluster(CLUSTER).world.store;
        const callsBefore = side.calls().length;
        let raised = false;
        const stop = store.subscribe((event) => {
          const object = event.object as {
            metadata: { name: string };
            spec?: { unschedulable?: boolean; nodeName?: string };
          };
          if (raised) return;
          if (event.resource === 'nodes' && object.metadata.name.startsWith(POOL1)) {
            if (object.spec?.unschedulable === true) cancelled = object.metadata.name;
            return;
          }
          if (event.resource !== 'pods' || cancelled === '' || object.spec?.nodeName !== cancelled) return;
          if (!side.calls().slice(callsBefore).includes('drainNodeStep')) return;
          raised = true;
          stop();
          void side.raise('cancel-pool1', 'cancel', 'real-engine: maintenance window closed');
        });
        await side.start(ORCHESTRATION.refreshPool, input, 'cancel-pool1');
      },
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Failed', `${side.name}: ${JSON.stringify(ended.output)}`);
        assert.match(
          ended.failure ?? '',
          /cancelled: real-engine: maintenance window closed; gave back node/,
        );
        const node = side.sim.running.world
          .cluster(CLUSTER)
          .world.store.list('nodes')
          .find((object) => (object as { metadata: { name: string } }).metadata.name === cancelled) as
          | { spec?: { unschedulable?: boolean }; metadata: { annotations?: Record<string, string> } }
          | undefined;
        assert.ok(node, `${side.name}: the donor ${cancelled} is still a node`);
        assert.notEqual(node.spec?.unschedulable, true, `${side.name}: the donor is uncordoned`);
        const ours = Object.keys(node.metadata.annotations ?? {}).filter((key) =>
          key.startsWith('vmss-prototype'),
        );
        assert.deepEqual(ours, [], `${side.name}: none of our annotations left`);
      },
    );
  });

  void it('resumes a refresh from Azure Storage after the engine is killed mid-capture', async () => {
    const input = { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' };
    const instanceId = 'killed-pool1';
    let rowsAtKill = 0;
    await differential(
      'kill and restart mid-capture',
      instanceId,
      async (side) => {
        const snapshotsBefore = side.sim.running.world.compute.listSnapshots().length;
        await side.start(ORCHESTRATION.refreshPool, input, instanceId);
        if (side.name !== 'engine') return;
        // Mid-capture: the donor's snapshot was asked for. The host dies as a crash would (SIGKILL).
        const deadline = Date.now() + 4 * 60_000;
        while (side.sim.running.world.compute.listSnapshots().length === snapshotsBefore) {
          if (Date.now() > deadline) throw new Error('no snapshot was asked for within 4 minutes');
          await new Promise((done) => setTimeout(done, 100));
        }
        await engine.killHost();
        rowsAtKill = (await side.history(instanceId)).length;
        const started = Date.now();
        await engine.startHost();
        console.log(
          `real-engine: killed the host mid-capture: ${rowsAtKill} history rows at the kill; ` +
            `host back in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      },
      async (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        if (side.name === 'engine') {
          const rows = await side.history(instanceId);
          console.log(
            `real-engine: after the restart: ${rows.length} history rows (${rowsAtKill} at the kill)`,
          );
          assert.ok(rows.length > rowsAtKill, 'the run went on from its history');
        }
        const donor = side.sim.running.world.cluster(CLUSTER).world.instanceOfNode(result.donor ?? '');
        assert.equal(donor?.powerState, 'running', `${side.name}: the donor runs again`);
      },
    );
  });

  void it('refreshes a cluster: its two stale pools together', async () => {
    const instanceId = 'cluster-prod';
    await differential(
      'cluster run of two pools',
      instanceId,
      async (side) => {
        // kured patches and reboots a node of each pool: both pools' newest patch is newer than their
        // image again.
        await patchAndReboot(side, CLUSTER, [POOL1, POOL2]);
        await side.start(
          ORCHESTRATION.refreshCluster,
          { cluster: CLUSTER, trigger: 'real-engine' },
          instanceId,
        );
      },
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as ClusterRefreshResult;
        const outcomes = Object.fromEntries(result.pools.map((pool) => [pool.pool, pool.outcome]));
        assert.equal(outcomes[POOL1], 'refreshed', `${side.name}: ${JSON.stringify(outcomes)}`);
        assert.equal(outcomes[POOL2], 'refreshed', `${side.name}: ${JSON.stringify(outcomes)}`);
      },
    );
  });

  void it('retires a generation: a surge node joins, the old node is drained and deleted', async () => {
    // The nodes from before the product's first refresh of the pool (those keep-size left).
    const first = 'unknown';
    await differential(
      'retire --generation',
      'retire-pool2',
      async (side) => {
        const generations = generationsOf(side, CLUSTER, POOL2);
        assert.ok(
          Object.values(generations).includes(first),
          `${side.name}: a node of the first generation is left: ${JSON.stringify(generations)}`,
        );
        await side.start(
          ORCHESTRATION.retirePool,
          { cluster: CLUSTER, pool: POOL2, generation: first, trigger: 'real-engine' },
          'retire-pool2',
        );
      },
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as PoolRetirementResult;
        assert.equal(result.outcome, 'retired', `${side.name}: ${result.reason}`);
        const lines = result.nodes.filter((line) => line.generation === first);
        assert.ok(lines.length > 0, `${side.name}: the generation's nodes are reported`);
        assert.ok(
          lines.every((line) => line.outcome === 'retired' && line.replacement !== undefined),
          `${side.name}: each retired with a replacement: ${JSON.stringify(lines)}`,
        );
        assert.deepEqual(
          Object.values(generationsOf(side, CLUSTER, POOL2)).filter((label) => label === first),
          [],
          `${side.name}: no node of the generation is left`,
        );
        const scaleSet = side.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
        assert.equal(scaleSet?.capacity, 3, `${side.name}: the pool keeps its size`);
      },
    );
  });

  void it('reaps a dead run: the node a terminated run held is given back', async () => {
    const donors: Record<string, string> = {};
    await differential(
      'reaper after a dead run',
      'reap-prod',
      (side) =>
        side.start(ORCHESTRATION.reapCluster, { cluster: CLUSTER, trigger: 'real-engine' }, 'reap-prod'),
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as ReapClusterResult;
        const pool = result.pools.find((entry) => entry.pool === POOL1);
        assert.equal(pool?.outcome, 'released', `${side.name}: ${JSON.stringify(result.pools)}`);
        const donor = nodesOf(side, CLUSTER, POOL1).find((node) => node.metadata.name === donors[side.name]);
        assert.ok(donor, `${side.name}: the dead run's donor is still a node`);
        assert.notEqual(donor.spec?.unschedulable, true, `${side.name}: the donor is uncordoned`);
        assert.deepEqual(
          Object.keys(donor.metadata.annotations ?? {}).filter((key) => key.startsWith('vmss-prototype')),
          [],
          `${side.name}: none of our annotations left`,
        );
      },
      {
        // A refresh dies once it cordoned its donor (terminated, as an operator or a lost host ends it)
        // and its lease is left to expire: what it held is the reaper's to give back.
        setup: async (side) => {
          await patchAndReboot(side, CLUSTER, [POOL1]);
          donors[side.name] = await terminateAtCordon(
            side,
            { cluster: CLUSTER, pool: POOL1, instanceId: 'dead-pool1' },
            () =>
              side.start(
                ORCHESTRATION.refreshPool,
                { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' },
                'dead-pool1',
              ),
          );
          await side.quiet();
          assert.equal(ageHeldLeases(side, CLUSTER).length, 1, `${side.name}: the dead run's lease`);
        },
      },
    );
  });

  void it('captures live; a cluster run started over the running pool leaves it alone', async () => {
    const poolRun = poolInstanceId(LIVE_CLUSTER, POOL1);
    const clusterRuns: Record<string, Observed['ended']> = {};
    await differential(
      'live capture, a cluster run over it',
      poolRun,
      async (side) => {
        const input = { cluster: LIVE_CLUSTER, pool: POOL1, trigger: 'real-engine' };
        await side.start(ORCHESTRATION.refreshPool, input, poolRun);
        const clusterRun = `cluster-${LIVE_CLUSTER}`;
        await side.start(
          ORCHESTRATION.refreshCluster,
          { cluster: LIVE_CLUSTER, trigger: 'real-engine' },
          clusterRun,
        );
        clusterRuns[side.name] = await side.settle(clusterRun);
      },
      (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        assert.equal(result.captureMode, 'live', `${side.name}: captured live`);
        assert.equal(result.donorOutOfServiceSeconds, 0, `${side.name}: the donor kept serving`);
        const clusterRun = clusterRuns[side.name];
        assert.equal(clusterRun?.runtimeStatus, 'Completed', clusterRun?.failure);
        const pools = (clusterRun.output as ClusterRefreshResult).pools;
        assert.equal(pools.length, 1, `${side.name}: ${JSON.stringify(pools)}`);
        assert.equal(pools[0]?.outcome, 'skipped', `${side.name}: ${JSON.stringify(pools)}`);
        assert.match(pools[0]?.reason ?? '', /already refreshing/);
      },
    );
  });

  // The canary of the tier: the #574 pattern must go wrong here as it does on Azure. The engine schedules
  // the re-sent activity again under a new id, and from there completions reach the wrong SDK tasks: the
  // run ends without the second activity's result. A correct host would return 'second'.
  void it('gets the seeded #574 pattern wrong, as the Functions host does', async () => {
    const started = Date.now();
    await engine.client.startNew(SEEDED_574, { instanceId: 'seeded-574' });
    const status = await onEngine.settle('seeded-574');
    const rows = await onEngine.history('seeded-574');
    console.log(
      `real-engine: seeded #574 (${((Date.now() - started) / 1000).toFixed(1)} s): ` +
        `${status.runtimeStatus} ${JSON.stringify(status.output ?? status.failure)}; history ${rows.join(' ')}`,
    );
    assert.equal(
      rows.filter((type) => type === 'TaskScheduled').length,
      3,
      'the pending activity scheduled twice, then the second one',
    );
    assert.notDeepEqual(
      { status: status.runtimeStatus, output: status.output },
      { status: 'Completed', output: 'second' },
      '#574: the re-yielded task must break the run on the engine',
    );
    // The local runner numbers actions as the extension does (cli/runner/extension-shim.ts), so the pattern
    // goes wrong there the same way; the runner before c1fd712 took ids from the SDK's open tasks and
    // returned 'second', hiding #574 until the real host ran it.
    const runner = createDurableRunner({
      orchestrators: { [SEEDED_574]: seeded574 },
      activities: { [SEEDED_ACTIVITY]: seededActivity },
      store: createMemoryStore(),
      clock: createSystemClock(),
    });
    const local = await runner.startOrchestration(SEEDED_574, null, 'seeded-574');
    console.log(
      `real-engine: seeded #574 on the local runner: ${local.runtimeStatus} ${JSON.stringify(local.output)}`,
    );
    assert.deepEqual(
      { status: local.runtimeStatus, output: local.output ?? null },
      { status: status.runtimeStatus, output: status.output ?? null },
      '#574: the local runner must go wrong as the engine does',
    );
  });
  // What the engine does with a sub-orchestration started under a running instance's id, which the local
  // runner models as a second execution over it (cli/runner/children.ts) and the product never relies on
  // (functions/orchestrations/pool-runs.ts looks at the id first): the two must agree.
  void it('starts a sub-orchestration over a running id as the local runner models it', async () => {
    const runner = createDurableRunner({
      orchestrators: { [SEEDED_PARENT]: parentOverRunning, [SEEDED_CHILD]: waitingChild },
      activities: {},
      store: createMemoryStore(),
      clock: createSystemClock(),
    });
    const engineSeen = await overRunning({
      start: async (name, input, instanceId) => {
        await engine.client.startNew(name, { instanceId, input });
      },
      status: async (instanceId) => {
        const status = await engine.client.getStatus(instanceId);
        return { runtimeStatus: String(status.runtimeStatus), output: status.output ?? null };
      },
      raise: (instanceId, data) => engine.client.raiseEvent(instanceId, 'go', data),
    });
    const runnerSeen = await overRunning({
      start: async (name, input, instanceId) => {
        void runner.startOrchestration(name, input, instanceId);
        await new Promise((done) => setImmediate(done));
      },
      status: async (instanceId) => {
        const status = await runner.getStatus(instanceId);
        return { runtimeStatus: String(status?.runtimeStatus), output: status?.output ?? null };
      },
      raise: async (instanceId, data) => {
        await runner.raiseEvent(instanceId, 'go', data);
      },
    });
    console.log(
      `real-engine: a sub-orchestration over a running id\n  engine: ${JSON.stringify(engineSeen)}\n` +
        `  runner: ${JSON.stringify(runnerSeen)}`,
    );
    assert.deepEqual(runnerSeen, engineSeen, 'the runner models the engine');
  });
});
