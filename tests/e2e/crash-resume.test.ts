/**
 * Crash and resume: a refresh runs in a child process against a simulator that lives in this test
 * process. The child is killed with SIGKILL right after each activity boundary in turn (its result
 * persisted), a new process resumes from the persisted history, and the world must end exactly as an
 * uninterrupted run leaves it: one new version, the model on it, no snapshot, the donor restored.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { checkRefreshedWorld } from '../../cli/demo-checks.js';
import { createDurableRunner, createFileStore } from '../../cli/runner/index.js';
import { connectSimulator } from '../../cli/sim-connection.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { compose } from '../../shared/composition-root.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { withPromotion } from './fixtures/promotion-env.js';
import { POOL2, sampleScenario } from './harness.js';

/** This test kills the capture phases; the canary phase has its own (canary-crash.test.ts). */
const NO_CANARY = JSON.stringify({ canary: { enabled: false } });

const RUNNER = fileURLToPath(new URL('./fixtures/crash-runner.js', import.meta.url));

interface RunnerOutcome {
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
  readonly result?: { runtimeStatus: string; output: PoolRefreshResult; completed: number };
  readonly stderr: string;
}

function runChild(args: string[]): Promise<RunnerOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').at(-1);
      let result: RunnerOutcome['result'];
      if (line !== undefined && line.startsWith('{')) result = JSON.parse(line) as RunnerOutcome['result'];
      resolve({ code, signal, stderr, ...(result === undefined ? {} : { result }) });
    });
  });
}

async function withWorld<T>(work: (sim: SimulatorSession, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-crash-'));
  const sim = await startSimulatorSession({ scenarioPath: sampleScenario(), timeFactor: 200 });
  try {
    await writeConnectionFile(join(dir, 'connection.json'), connectionOf(sim.running));
    return await work(sim, dir);
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Resumes a killed run in this process with a new runner over the persisted history: nothing of the
 * dead process survives but its files, exactly as after a host restart.
 */
async function resumeHere(connectionFile: string, stateDir: string, instanceId: string) {
  const connected = await connectSimulator(connectionFile);
  const composition = compose({
    env: withPromotion(connected.env, NO_CANARY),
    simulator: connected.endpoints,
    now: () => new Date(connected.clock.now()),
  });
  const runner = createDurableRunner({
    ...durableRegistry(composition.dependencies),
    clock: connected.clock,
    store: createFileStore(stateDir),
  });
  return runner.resume(instanceId);
}

/** The end state every run must reach, interrupted or not. */
function assertEndState(sim: SimulatorSession, result: PoolRefreshResult, label: string): void {
  assert.equal(result.outcome, 'refreshed', `${label}: ${result.reason}`);
  const failed = checkRefreshedWorld(sim.running, [{ cluster: 'prod', pools: [result] }]).filter(
    (c) => !c.ok,
  );
  assert.deepEqual(failed, [], `${label}: world checks`);
  const definitionId = (result.version?.id ?? '').replace(/\/versions\/[^/]+$/i, '');
  const versions = sim.running.world.compute.listImageVersions(definitionId);
  assert.deepEqual(
    versions.map((version) => [version.name, version.provisioningState]),
    [[result.version?.versionName, 'Succeeded']],
    `${label}: exactly one version, Succeeded`,
  );
  assert.equal(sim.running.world.compute.listSnapshots().length, 0, `${label}: no snapshot left`);
}

void describe(
  'crash and resume at every activity boundary',
  { concurrency: false, timeout: 30 * 60_000 },
  () => {
    // One child process and one resume per activity boundary: minutes on two shared cores.
    void it(
      'reaches the same end state wherever the runner is killed',
      { timeout: 30 * 60_000 },
      async (t) => {
        const total = await withWorld(async (sim, dir) => {
          const outcome = await runChild([
            join(dir, 'connection.json'),
            join(dir, 'state'),
            'crash-0',
            '0',
            POOL2,
            NO_CANARY,
          ]);
          assert.equal(outcome.result?.runtimeStatus, 'Completed', outcome.stderr);
          assertEndState(sim, outcome.result.output, 'uninterrupted');
          return outcome.result.completed;
        });
        assert.ok(total > 10, `a refresh runs many activities (${total})`);

        let survived = 0;
        let notReached = 0;
        for (let killAfter = 1; killAfter < total; killAfter++) {
          await withWorld(async (sim, dir) => {
            const args = [join(dir, 'connection.json'), join(dir, 'state'), `crash-${killAfter}`];
            const killed = await runChild([...args, String(killAfter), POOL2, NO_CANARY]);
            if (
              killed.signal === null &&
              killed.result !== undefined &&
              killed.result.completed < killAfter
            ) {
              // Poll rounds follow the simulator's scaled wall clock: this run needed fewer activities
              // than the uninterrupted one and finished before the kill point. It must still end right.
              assert.equal(killed.result.runtimeStatus, 'Completed', killed.stderr);
              assertEndState(sim, killed.result.output, `kill point ${killAfter} (not reached)`);
              notReached += 1;
              return;
            }
            assert.equal(
              killed.signal,
              'SIGKILL',
              `kill point ${killAfter}: the runner died (${killed.stderr})`,
            );
            const resumed = await resumeHere(
              join(dir, 'connection.json'),
              join(dir, 'state'),
              `crash-${killAfter}`,
            );
            assert.equal(
              resumed.runtimeStatus,
              'Completed',
              `kill point ${killAfter}: ${JSON.stringify(resumed.failure)}`,
            );
            assertEndState(sim, resumed.output as PoolRefreshResult, `kill point ${killAfter}`);
            survived += 1;
          });
        }
        t.diagnostic(
          `kill points survived: ${survived} of ${total - 1} activity boundaries (${notReached} not reached)`,
        );
        assert.equal(survived + notReached, total - 1);
        assert.ok(notReached <= 5, `only the last boundaries may go unreached (${notReached})`);
      },
    );
  },
);
