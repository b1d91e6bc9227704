/**
 * Ownership across processes, on a real simulator living in this test process: runners are separate
 * processes that know nothing of each other (different state dirs) and meet only in the cluster and Azure.
 * - two `vmss-prototype refresh` processes started together on one pool, 20 times: exactly one captures,
 *   the other is refused saying who holds the pool; no node is ever marked or given back by the wrong run;
 * - a run SIGKILLed at random points with its state dir deleted: once its lease expired, `release` (or the
 *   next refresh) gives back everything it held — the chaos invariants hold;
 * - a run killed while it waits for the power-off and resumed after that wait's deadline completes;
 * - with pinVersion, an older run resumed after a newer one pinned its version does not roll the model back.
 * The cases are split into OWNERSHIP_SHARDS test files (ownership-<k>.test.ts) by a fixed partition of
 * OWNERSHIP_CASES (tests/shards.ts): each is minutes of child processes, and two files run side by side.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { after, describe, it } from 'node:test';

import { checkRefreshedWorld } from '../../cli/demo-checks.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import type { PoolRefreshResult, ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION } from '../../shared/domain/cluster-node.js';
import { writeConnectionFile } from '../../sim/connection.js';
import type { KubeObject } from '../../sim/contracts.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';
import { COMPILED_CRASH_RUNNER, crashRunnerEntry } from '../e2e/fixtures/crash-runner-entry.js';
import { nodeOf, POOL2, sampleScenario, type ScenarioData, withUndrainablePod } from '../e2e/harness.js';
import { liveCaptureLeftovers } from '../e2e/live-checks.js';
import { shardOf } from '../shards.js';
import { checkInvariants, takeBefore } from './invariants.js';

/** The CLI as the launcher runs it, and the crash runner: their bundles (builders/cli-entry.ts, crash-runner-entry.ts). */
const CLI = CLI_ENTRY;
const CRASH_RUNNER = COMPILED_CRASH_RUNNER;
const INSTANCE = `refresh:prod:${POOL2}`;
/** Node 0 of pool 2 carries an unreplicated pod (it cannot be drained); 1 and 2 can be captured. */
const DONORS = [nodeOf(POOL2, 1), nodeOf(POOL2, 2)];
const MINUTE_S = 60;

interface ChildRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function child(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ChildRun> {
  // The crash runner runs from its bundle: the same code, a third of the CPU to load.
  const file = script === CRASH_RUNNER ? await crashRunnerEntry() : script;
  return new Promise((resolve, reject) => {
    const started = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    started.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => started.kill('SIGKILL'), 180_000);
    started.on('error', reject);
    started.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The last JSON line a crash runner printed. */
function runnerResult(
  run: ChildRun,
): { runtimeStatus: string; output: PoolRefreshResult; failure?: { ErrorMessage: string } } | undefined {
  const line = run.stdout.trim().split('\n').at(-1);
  return line?.startsWith('{') === true ? (JSON.parse(line) as ReturnType<typeof runnerResult>) : undefined;
}

interface World {
  readonly sim: SimulatorSession;
  readonly dir: string;
  readonly connection: string;
}

async function withWorld<T>(
  change: (scenario: ScenarioData) => void,
  work: (world: World) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-own-'));
  const scenario = sampleScenario();
  change(scenario);
  const sim = await startSimulatorSession({ scenarioPath: scenario, timeFactor: 200 });
  try {
    const connection = join(dir, 'connection.json');
    await writeConnectionFile(connection, connectionOf(sim.running));
    return await work({ sim, dir, connection });
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function fastLatency(scenario: ScenarioData): void {
  scenario['latency'] = { profile: 'fast' };
}

/** Seeded PRNG (mulberry32): the same kill points on every run of the suite. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const summary: string[] = [];

/**
 * Every case of the ownership tests, by name, in the order the shards slice (tests/shards.ts): the two
 * long ones (the 20-round race, the random kills) in different shards, the short ones to even them out.
 */
export const OWNERSHIP_CASES: readonly string[] = [
  // Shard 1: the 20-round race (about 60 % of the cases' time), then two short ones.
  'two runners started together on one pool, 20 times: exactly one captures; no node released by the wrong run',
  'Ctrl-C while the node is held gives it back before the command exits (130)',
  'a live capture killed with its copy attached, its state dir deleted: release detaches and deletes the copy',
  // Shard 2: the random kills (about 30 %) and the rest.
  'a run SIGKILLed at random points, its state dir deleted: release or the next refresh restores the world',
  'a run killed while waiting for the power-off and resumed after that deadline completes the capture',
  'with pinVersion, an older run resumed after a newer one pinned its version does not roll the model back',
];

/** How many test files the ownership cases are split into (ownership-<k>.test.ts). */
export const OWNERSHIP_SHARDS = 2;

/** The case names of shard `shard` of `of`: each case is in exactly one shard. */
export function ownershipShard(shard: number, of = OWNERSHIP_SHARDS): readonly string[] {
  return shardOf(OWNERSHIP_CASES, shard, of);
}

type CaseBody = (t: TestContext) => Promise<void>;

/** The test of shard `shard` of OWNERSHIP_SHARDS: its cases, each declared below by name. */
export function describeOwnership(shard: number): void {
  const mine = new Set(ownershipShard(shard));
  const declared: string[] = [];
  /** Declares a case; only this shard's run here. */
  const ownershipCase = (name: string, options: { timeout?: number }, body: CaseBody): void => {
    declared.push(name);
    if (mine.has(name)) void it(name, options, body);
  };
  void describe(
    `ownership across processes, shard ${shard} of ${OWNERSHIP_SHARDS}`,
    { concurrency: false, timeout: 30 * 60_000 },
    () => {
      ownershipCases(ownershipCase);
      // A case declared under a name the list does not have, or missing, would run in no shard or in all.
      assert.deepEqual([...declared].sort(), [...OWNERSHIP_CASES].sort(), 'OWNERSHIP_CASES names every case');
    },
  );
}

function ownershipCases(
  ownershipCase: (name: string, options: { timeout?: number }, body: CaseBody) => void,
): void {
  after(() => {
    console.log(['ownership across processes:', ...summary].join('\n'));
  });

  ownershipCase(
    'two runners started together on one pool, 20 times: exactly one captures; no node released by the wrong run',
    { timeout: 20 * 60_000 },
    async (t) => {
      await withWorld(fastLatency, async ({ sim, dir, connection }) => {
        const running = sim.running;
        const store = [...running.world.clusters.values()][0]?.world.store;
        assert.ok(store !== undefined);
        // Every change of the marker on every node, in order: who marked it, who gave it back.
        const transitions: { node: string; from?: string; to?: string; cordoned: boolean }[] = [];
        const markers = new Map<string, string | undefined>();
        const stopWatching = store.subscribe((event) => {
          if (event.object.kind !== 'Node') return;
          const node = event.object as KubeObject & { spec?: { unschedulable?: boolean } };
          const name = node.metadata.name;
          const marker = node.metadata.annotations?.[CAPTURE_RUN_ANNOTATION];
          if (markers.get(name) === marker) return;
          transitions.push({
            node: name,
            ...(markers.get(name) === undefined ? {} : { from: markers.get(name) }),
            ...(marker === undefined ? {} : { to: marker }),
            cordoned: node.spec?.unschedulable === true,
          });
          markers.set(name, marker);
        });
        const before = takeBefore(running);
        const winners: string[] = [];
        let refused = 0;
        let late = 0;
        let stale = 0;
        try {
          for (let round = 0; round < 20; round++) {
            // keep-size (the default) retires an older node in each canary's place (never the donor): the
            // donors alternate while both exist, then the last donor serves again.
            const present = (name: string): boolean => store.get('nodes', undefined, name) !== undefined;
            const donor =
              [DONORS[round % DONORS.length], DONORS[(round + 1) % DONORS.length]].find(
                (name): name is string => name !== undefined && present(name),
              ) ?? '';
            running.clock.advanceBy(10 * MINUTE_S); // the last donor is Ready again
            const captures = running.world.prepRecords().length;
            const args = (name: string): string[] => [
              'refresh',
              `--sim-connect=${connection}`,
              `--pool=${POOL2}`,
              `--node=${donor}`,
              `--state-dir=${join(dir, `${name}-${round}`)}`,
              '--json',
            ];
            const runs = await Promise.all([child(CLI, args('a')), child(CLI, args('b'))]);
            const pools = runs.map((run) => {
              const result = JSON.parse(run.stdout) as { clusters: { pools: PoolRefreshResult[] }[] };
              return result.clusters[0]?.pools[0];
            });
            const outcomes = pools.map((pool) => pool?.outcome ?? 'none');
            const detail = `round ${round}: ${runs.map((run) => run.stderr.split('\n').slice(-3).join(' ')).join(' | ')}`;
            // The loser is refused by the lease ('busy': held, or its plan made stale by the winner's hold),
            // or, when it starts planning only after the winner has already stopped the donor (a busy
            // machine), finds the named node not Ready ('skipped'). Either way it touches nothing and exits 1.
            const loserIndex = outcomes.findIndex((outcome) => outcome !== 'refreshed');
            assert.equal(outcomes.filter((outcome) => outcome === 'refreshed').length, 1, detail);
            assert.ok(['busy', 'skipped'].includes(outcomes[loserIndex] ?? ''), detail);
            assert.equal(
              running.world.prepRecords().length - captures,
              1,
              `round ${round}: exactly one capture`,
            );
            const winner = pools.find((pool) => pool?.outcome === 'refreshed');
            const loser = runs[loserIndex];
            const loserPool = pools[loserIndex];
            assert.equal(loser?.code, 1, 'the refused runner exits 1');
            if (loserPool?.outcome === 'busy' && loserPool.reason.includes('while this one planned')) {
              // It planned before the winner took the pool and reached the lease after the winner gave it
              // back (a busy machine): its plan is stale, and the lease refuses it.
              assert.match(
                loserPool.reason,
                /^pool k8s-pool2-12345678-vmss was refreshed or released by another run while this one planned: run \S+ of cli on \S+ held it and released it at \S+, after this run planned at \S+; this plan may be stale/,
              );
              stale += 1;
            } else if (loserPool?.outcome === 'busy') {
              assert.match(
                loserPool.reason,
                /^pool k8s-pool2-12345678-vmss is held by run \S+ of cli on \S+ \(instance refresh:prod:k8s-pool2-12345678-vmss\) since \S+; its lease expires at \S+ unless renewed: wait for that run to finish/,
              );
              refused += 1;
            } else {
              assert.match(loserPool?.reason ?? '', /not Ready/, detail);
              late += 1;
            }
            winners.push(winner?.runId ?? '');
          }
        } finally {
          stopWatching();
        }
        // Every marker ever written is a winner's run id, in round order; each was put on an unmarked node
        // and taken off by going back to unmarked (never overwritten by another run). A winner marks its donor
        // and, under keep-size (the default), the nodes it retires in its canary's place or gives back.
        const inOrder = (runIds: readonly (string | undefined)[]): (string | undefined)[] =>
          runIds.filter((runId, index) => index === 0 || runIds[index - 1] !== runId);
        const written = transitions.filter((change) => change.to !== undefined);
        assert.deepEqual(
          inOrder(written.map((change) => change.to)),
          winners,
          'only the winners marked nodes, in round order',
        );
        assert.ok(
          written.every((change) => change.from === undefined),
          'no run marked a node another run held',
        );
        // A retired node leaves with its marker (its object is deleted): only those kept are unmarked.
        const removed = transitions.filter((change) => change.from !== undefined);
        assert.deepEqual(
          inOrder(removed.map((change) => change.from)),
          winners,
          'each winner gave its nodes back, in order',
        );
        assert.ok(
          removed.every((change) => change.to === undefined && !change.cordoned),
          'given back uncordoned',
        );
        const broken = checkInvariants(running, before, { runsPerPool: 20 }).filter((check) => !check.ok);
        assert.deepEqual(broken, []);
        const line = `race: 20 rounds, 20 captures (one per round), ${refused} runners refused with the holder named, ${late} found the donor already out of service, ${stale} refused as planned before the winner gave the pool back, 0 nodes released by the wrong run`;
        summary.push(line);
        t.diagnostic(line);
      });
    },
  );

  ownershipCase(
    'a run SIGKILLed at random points, its state dir deleted: release or the next refresh restores the world',
    { timeout: 25 * 60_000 },
    async (t) => {
      // How many activities an uninterrupted run takes.
      const total = await withWorld(fastLatency, async ({ dir, connection }) => {
        const run = await child(CRASH_RUNNER, [connection, join(dir, 'state'), INSTANCE, '0', POOL2]);
        assert.equal(runnerResult(run)?.runtimeStatus, 'Completed', run.stderr);
        return (JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { completed: number }).completed;
      });
      const next = random(11);
      const points = [
        ...new Set(Array.from({ length: 10 }, () => 1 + Math.floor(next() * (total - 1)))),
      ].sort((a, b) => a - b);
      let survived = 0;
      for (const [index, killAfter] of points.entries()) {
        const byRelease = index % 2 === 0;
        await withWorld(fastLatency, async ({ sim, dir, connection }) => {
          const running = sim.running;
          const before = takeBefore(running);
          const state = join(dir, 'state');
          const killed = await child(CRASH_RUNNER, [connection, state, INSTANCE, String(killAfter), POOL2]);
          const label = `kill after ${killAfter} of ${total} activities`;
          if (killed.signal !== 'SIGKILL') {
            assert.equal(runnerResult(killed)?.runtimeStatus, 'Completed', `${label}: ${killed.stderr}`);
          } else {
            await rm(state, { recursive: true, force: true });
            if (index === 0) {
              // What an operator sees first: `status` reads the cluster and Azure, not the lost files.
              const status = await child(CLI, ['status', `--sim-connect=${connection}`]);
              assert.equal(status.code, 0, status.stderr);
              assert.match(
                status.stdout.replaceAll(/\s+/g, ' '),
                /held by run \S+ of crash-runner on pid-\d+/,
              );
            }
            // Its lease expires 15 minutes after its last renewal; then anyone may take the pool over.
            running.clock.advanceBy(16 * MINUTE_S);
            if (byRelease) {
              const released = await child(CLI, [
                'release',
                `--sim-connect=${connection}`,
                `--pool=${POOL2}`,
                '--json',
              ]);
              assert.equal(released.code, 0, `${label}: ${released.stdout} ${released.stderr}`);
              const result = JSON.parse(released.stdout) as { pools: ReleasePoolResult[] };
              assert.ok(
                ['released', 'nothing-left'].includes(result.pools[0]?.outcome ?? ''),
                released.stdout,
              );
            } else {
              const refreshed = await child(CLI, [
                'refresh',
                `--sim-connect=${connection}`,
                `--pool=${POOL2}`,
                `--state-dir=${join(dir, 'next')}`,
                '--json',
              ]);
              assert.equal(refreshed.code, 0, `${label}: ${refreshed.stdout} ${refreshed.stderr}`);
            }
          }
          const broken = checkInvariants(running, before, { runsPerPool: 2 }).filter((check) => !check.ok);
          assert.deepEqual(broken, [], `${label} (${byRelease ? 'release' : 'next refresh'})`);
          survived += 1;
        });
      }
      const line = `kill points survived: ${survived} of ${points.length} (random, seeded: ${points.join(', ')} of ${total} activities), half given back by release, half by the next refresh`;
      summary.push(line);
      t.diagnostic(line);
      assert.equal(survived, points.length);
    },
  );

  ownershipCase(
    'a live capture killed with its copy attached, its state dir deleted: release detaches and deletes the copy',
    {},
    async () => {
      await withWorld(fastLatency, async ({ sim, dir, connection }) => {
        const running = sim.running;
        const before = takeBefore(running);
        const state = join(dir, 'state');
        const killed = await child(CRASH_RUNNER, [
          connection,
          state,
          INSTANCE,
          'step:scrubbing-copy',
          POOL2,
          '{}',
          'live',
        ]);
        assert.equal(killed.signal, 'SIGKILL', killed.stderr);
        await rm(state, { recursive: true, force: true });
        const scaleSet = running.world.compute.listScaleSets().find((candidate) => candidate.name === POOL2);
        assert.ok(scaleSet, `scale set ${POOL2} exists`);
        const ref = {
          id: scaleSet.id,
          name: scaleSet.name,
          subscriptionId: scaleSet.subscriptionId,
          resourceGroup: scaleSet.resourceGroup,
        };
        const left = liveCaptureLeftovers(running, ref);
        assert.ok(
          left.some((what) => what.startsWith('data disk')),
          `the dead run left its copy attached: ${left.join('; ')}`,
        );
        running.clock.advanceBy(16 * MINUTE_S);
        const released = await child(CLI, [
          'release',
          `--sim-connect=${connection}`,
          `--pool=${POOL2}`,
          '--json',
        ]);
        assert.equal(released.code, 0, `${released.stdout} ${released.stderr}`);
        const result = JSON.parse(released.stdout) as { pools: ReleasePoolResult[] };
        assert.equal(result.pools[0]?.outcome, 'released', released.stdout);
        assert.deepEqual(liveCaptureLeftovers(running, ref), [], 'nothing of the live capture left');
        assert.equal(running.world.compute.listSnapshots().length, 0, 'its snapshot deleted');
        const broken = checkInvariants(running, before, { runsPerPool: 1 }).filter((check) => !check.ok);
        assert.deepEqual(broken, [], 'invariants after release');
      });
    },
  );

  ownershipCase(
    'a run killed while waiting for the power-off and resumed after that deadline completes the capture',
    {},
    async () => {
      await withWorld(
        () => undefined,
        async ({ sim, dir, connection }) => {
          const state = join(dir, 'state');
          const killed = await child(CRASH_RUNNER, [
            connection,
            state,
            INSTANCE,
            'step:waiting-for-power-off',
            POOL2,
          ]);
          assert.equal(killed.signal, 'SIGKILL', killed.stderr);
          // Back 30 minutes later: past the 20-minute power-off deadline; the prep pod powered the VM off long ago.
          sim.running.clock.advanceBy(30 * MINUTE_S);
          const resumed = await child(CRASH_RUNNER, [connection, state, INSTANCE, '0', POOL2]);
          const result = runnerResult(resumed);
          assert.equal(
            result?.runtimeStatus,
            'Completed',
            `${resumed.stderr} ${JSON.stringify(result?.failure)}`,
          );
          assert.equal(result.output.outcome, 'refreshed');
          const failed = checkRefreshedWorld(sim.running, [
            { cluster: 'prod', pools: [result.output] },
          ]).filter((c) => !c.ok);
          assert.deepEqual(failed, []);
          summary.push(
            'late resume: killed at waiting-for-power-off, resumed 30 min later (deadline 20 min): refreshed',
          );
        },
      );
    },
  );

  ownershipCase(
    'with pinVersion, an older run resumed after a newer one pinned its version does not roll the model back',
    {},
    async () => {
      await withWorld(fastLatency, async ({ sim, dir, connection }) => {
        const env = {
          ...process.env,
          // The model-phase guard is what this checks: without the canary gate, whose pin would put the older
          // (verified, published) version in the model before the kill and leave the newer run up to date.
          CRASH_RUNNER_CLUSTER_SETTINGS: JSON.stringify({
            gallery: { pinVersion: true },
            promotion: { canary: { enabled: false } },
          }),
        };
        // Killed with its version built and the model not yet moved (the model phase's first activity is
        // the model write itself, so the kill comes one step earlier).
        const older = await child(
          CRASH_RUNNER,
          [connection, join(dir, 'older'), INSTANCE, 'step:deleting-snapshot', POOL2],
          env,
        );
        assert.equal(older.signal, 'SIGKILL', older.stderr);
        sim.running.clock.advanceBy(16 * MINUTE_S);
        const newer = await child(CRASH_RUNNER, [connection, join(dir, 'newer'), INSTANCE, '0', POOL2], env);
        const newerResult = runnerResult(newer);
        assert.equal(newerResult?.runtimeStatus, 'Completed', newer.stderr);
        const pinned = newerResult.output.version?.id ?? '';
        assert.match(pinned, /\/versions\//);

        const resumed = runnerResult(
          await child(CRASH_RUNNER, [connection, join(dir, 'older'), INSTANCE, '0', POOL2], env),
        );
        assert.equal(resumed?.runtimeStatus, 'Failed');
        assert.match(
          resumed.failure?.ErrorMessage ?? '',
          /^renewing-lease: run \S+ no longer holds pool k8s-pool2-12345678-vmss/,
        );
        const scaleSet = sim.running.world.compute.listScaleSets().find((s) => s.name === POOL2);
        assert.equal(
          String(scaleSet?.imageReference['id']).toLowerCase(),
          pinned.toLowerCase(),
          'the model keeps the newer version',
        );
        summary.push(
          `pinned older run: resumed after a newer run pinned ${pinned.split('/').at(-1) ?? ''}; the model kept it`,
        );
      });
    },
  );

  ownershipCase(
    'Ctrl-C while the node is held gives it back before the command exits (130)',
    {},
    async () => {
      const donor = DONORS[0] ?? '';
      // The donor cannot be drained (a PodDisruptionBudget never allows it): the run holds it, draining,
      // until the drain timeout (15 minutes), which leaves the interrupt time to arrive.
      const scenario = (data: ScenarioData): void => {
        fastLatency(data);
        withUndrainablePod(donor)(data);
      };
      await withWorld(scenario, async ({ sim, dir, connection }) => {
        const before = takeBefore(sim.running);
        const args = [
          CLI,
          'refresh',
          `--sim-connect=${connection}`,
          `--pool=${POOL2}`,
          `--node=${donor}`,
          `--state-dir=${join(dir, 'ctrl-c')}`,
          '--json',
        ];
        const started = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        let interruptedAt: string | undefined;
        started.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (interruptedAt === undefined && /"step":"draining"/.test(stderr)) {
            interruptedAt = 'draining';
            started.kill('SIGINT');
          }
        });
        started.stdout.resume();
        const timer = setTimeout(() => started.kill('SIGKILL'), 180_000);
        const code = await new Promise<number | null>((resolve, reject) => {
          started.on('error', reject);
          started.on('close', (exitCode) => resolve(exitCode));
        });
        clearTimeout(timer);
        assert.equal(interruptedAt, 'draining', stderr);
        assert.equal(code, 130, stderr);
        assert.match(
          stderr,
          /interrupted: asking refresh:prod:k8s-pool2-12345678-vmss to stop at its next step and give back what it holds/,
        );
        assert.match(stderr, /"runtimeStatus":"Failed"[^\n]*cancelled: Ctrl-C; gave back node/);
        assert.match(
          stderr,
          /after the interrupt:\n[^\n]*\n {2}the pool's lease is free\n {2}nothing of the run is left/,
        );
        const node = sim.running.world
          .cluster('prod')
          .world.store.list('nodes')
          .find(
            (object): object is KubeObject & { spec?: { unschedulable?: boolean } } =>
              object.metadata.name === donor,
          );
        assert.ok(node !== undefined, 'the donor is still there');
        assert.equal(node?.metadata.annotations?.[CAPTURE_RUN_ANNOTATION], undefined, 'no marker left');
        assert.notEqual(node?.spec?.unschedulable, true, 'uncordoned');
        const broken = checkInvariants(sim.running, before, { runsPerPool: 0 }).filter((check) => !check.ok);
        assert.deepEqual(broken, []);
        summary.push('Ctrl-C while draining: the node given back, then exit 130');
      });
    },
  );
}
