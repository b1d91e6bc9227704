// Ctrl-C during `refresh`: the first one asks every active pool run to stop, whatever its step (before,
// only runs holding a node were asked, the others left at once), does not exit, asks runs that start
// afterwards too, and once they ended hands their pools and run ids to the world read; a second one exits
// at once with the ways on. Then a real CLI process on the simulator, interrupted where it used to lie.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';

import { handleInterrupts, INTERRUPTED_EXIT_CODE } from '../../cli/interrupt.js';
import type { InterruptedRun } from '../../cli/left-behind.js';
import type { DurableRunner, OrchestrationStatus } from '../../cli/runner/index.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';
import { checkInvariants, takeBefore } from '../chaos/invariants.js';
import { POOL2, sampleScenario } from '../e2e/harness.js';

function poolStatus(
  instanceId: string,
  step: string,
  extra: Partial<OrchestrationStatus> & { runId?: string } = {},
): OrchestrationStatus {
  const { runId, ...rest } = extra;
  return {
    name: ORCHESTRATION.refreshPool,
    instanceId,
    parentInstanceId: undefined,
    runtimeStatus: 'Running',
    input: { cluster: 'prod', pool: instanceId.split(':').at(-1) },
    output: undefined,
    customStatus: {
      cluster: 'prod',
      pool: instanceId.split(':').at(-1),
      step,
      ...(runId === undefined ? {} : { runId }),
    },
    createdTime: new Date(0),
    lastUpdatedTime: new Date(0),
    failure: undefined,
    generation: 0,
    historyLength: 0,
    waitingFor: { activities: [], timers: [], subOrchestrations: [], events: [] },
    ...rest,
  };
}

class FakeRunner {
  statuses: OrchestrationStatus[] = [];
  readonly raised: { instanceId: string; name: string; data: unknown }[] = [];
  listInstances(): Promise<OrchestrationStatus[]> {
    return Promise.resolve([...this.statuses]);
  }
  raiseEvent(instanceId: string, name: string, data?: unknown): Promise<OrchestrationStatus> {
    this.raised.push({ instanceId, name, data });
    // The real runner answers only once its loop is idle: never, here.
    return new Promise(() => undefined);
  }
}

const settle = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function install(runner: FakeRunner) {
  const written: string[] = [];
  const exits: number[] = [];
  const reads: (readonly InterruptedRun[])[] = [];
  const interrupts = handleInterrupts(
    runner as unknown as DurableRunner,
    '.runs',
    (text) => written.push(text),
    (code) => {
      exits.push(code);
      // The real one never returns; the handler returns right after it.
      return undefined as never;
    },
    (runs) => {
      reads.push(runs);
      return Promise.resolve('pool p1: nothing of the run is left');
    },
  );
  return { interrupts, written, exits, reads };
}

let dispose: (() => void) | undefined;
afterEach(() => {
  dispose?.();
  dispose = undefined;
});

void describe('handleInterrupts', () => {
  for (const step of ['restoring-node', 'building-image-version', 'testing-canaries', 'planning']) {
    void it(`the first Ctrl-C at ${step} asks the run to stop and waits for it`, async () => {
      const runner = new FakeRunner();
      runner.statuses = [poolStatus('refresh:prod:p1', step, { runId: 'run-1' })];
      const { interrupts, written, exits } = install(runner);
      dispose = () => interrupts.dispose();
      process.emit('SIGINT');
      await settle();
      assert.deepEqual(runner.raised, [{ instanceId: 'refresh:prod:p1', name: 'cancel', data: 'Ctrl-C' }]);
      assert.deepEqual(exits, [], 'the command waits for the run');
      assert.match(
        written.join(''),
        /interrupted: asking refresh:prod:p1 to stop at its next step and give back what it holds; waiting for it to end \(Ctrl-C again to exit at once\)/,
      );
      assert.equal(interrupts.interrupted(), true);
    });
  }

  void it('every active pool run is asked, and one that starts afterwards too', async () => {
    const runner = new FakeRunner();
    runner.statuses = [
      poolStatus('refresh:prod:p1', 'draining', { runId: 'run-1' }),
      poolStatus('refresh:prod:p2', 'done', { runtimeStatus: 'Completed' }),
    ];
    const { interrupts } = install(runner);
    dispose = () => interrupts.dispose();
    process.emit('SIGINT');
    await settle();
    runner.statuses.push(poolStatus('refresh:prod:p3', 'planning'));
    await settle(400);
    assert.deepEqual(
      runner.raised.map((raised) => raised.instanceId),
      ['refresh:prod:p1', 'refresh:prod:p3'],
      'the finished run is not asked; the late one is, once',
    );
  });

  void it('once the runs ended, their pools and run ids go to the world read', async () => {
    const runner = new FakeRunner();
    runner.statuses = [poolStatus('refresh:prod:p1', 'acquiring-lease')];
    const { interrupts, reads } = install(runner);
    dispose = () => interrupts.dispose();
    process.emit('SIGINT');
    await settle();
    // The run took its lease (its status names its run id) before it stopped.
    runner.statuses = [
      poolStatus('refresh:prod:p1', 'releasing-lease', { runId: 'run-1', runtimeStatus: 'Failed' }),
    ];
    assert.equal(await interrupts.leftBehind(), 'pool p1: nothing of the run is left');
    assert.deepEqual(reads, [[{ cluster: 'prod', pool: 'p1', runId: 'run-1' }]]);
  });

  void it('without a Ctrl-C nothing is read', async () => {
    const runner = new FakeRunner();
    const { interrupts, reads } = install(runner);
    dispose = () => interrupts.dispose();
    assert.equal(interrupts.interrupted(), false);
    assert.equal(await interrupts.leftBehind(), '');
    assert.deepEqual(reads, []);
  });

  void it('a second Ctrl-C exits at once with the ways on', async () => {
    const runner = new FakeRunner();
    runner.statuses = [poolStatus('refresh:prod:p1', 'restoring-node', { runId: 'run-1' })];
    const { interrupts, written, exits } = install(runner);
    dispose = () => interrupts.dispose();
    process.emit('SIGINT');
    await settle();
    process.emit('SIGINT');
    await settle();
    assert.deepEqual(exits, [INTERRUPTED_EXIT_CODE]);
    assert.equal(runner.raised.length, 1, 'nothing more is asked');
    const text = written.join('');
    assert.match(text, /interrupted again: exiting now, the run stays where it is\./);
    assert.match(text, /continue it: vmss-prototype refresh --resume refresh:prod:p1 --state-dir \.runs/);
    assert.match(
      text,
      /give back what it started once this command exited: `vmss-prototype release --pool p1`/,
    );
  });

  void it('with no run active the first Ctrl-C exits at once', async () => {
    const runner = new FakeRunner();
    const { interrupts, written, exits } = install(runner);
    dispose = () => interrupts.dispose();
    process.emit('SIGINT');
    await settle();
    assert.deepEqual(exits, [INTERRUPTED_EXIT_CODE]);
    assert.equal(written.join(''), '\ninterrupted: no run is active; exiting.\n');
  });
});

/**
 * A real `vmss-prototype refresh` process on the simulator, interrupted at the steps where a Ctrl-C used to
 * lie: at `snapshotting` it said it gave the node back, and the run then published anyway; at
 * `restoring-node` it said no node was held and exited while the node was still cordoned and marked.
 */
void describe('Ctrl-C in a running refresh', () => {
  const CLI = CLI_ENTRY;

  async function interruptAt(step: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-interrupt-'));
    const scenario = sampleScenario();
    scenario['latency'] = { profile: 'fast' };
    const sim = await startSimulatorSession({ scenarioPath: scenario, timeFactor: 200 });
    try {
      const connection = join(dir, 'connection.json');
      await writeConnectionFile(connection, connectionOf(sim.running));
      const before = takeBefore(sim.running);
      const started = spawn(
        process.execPath,
        [
          CLI,
          'refresh',
          `--sim-connect=${connection}`,
          `--pool=${POOL2}`,
          `--state-dir=${join(dir, 'runs')}`,
          '--json',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      let stdout = '';
      let interrupted = false;
      started.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (!interrupted && stderr.includes(`"step":"${step}"`)) {
          interrupted = true;
          started.kill('SIGINT');
        }
      });
      started.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const timer = setTimeout(() => started.kill('SIGKILL'), 180_000);
      const code = await new Promise<number | null>((resolve, reject) => {
        started.on('error', reject);
        started.on('close', resolve);
      });
      clearTimeout(timer);
      assert.ok(interrupted, `the run reached ${step}: ${stderr}`);
      const broken = checkInvariants(sim.running, before, { runsPerPool: 0 }).filter((check) => !check.ok);
      assert.deepEqual(broken, [], 'the world is as it was: nothing held, nothing published');
      return { code, stderr, stdout };
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }

  for (const step of ['snapshotting', 'restoring-node']) {
    void it(`at ${step}: the command waits for the run to give everything back, then says so from the world`, async () => {
      const { code, stderr, stdout } = await interruptAt(step);
      assert.equal(code, INTERRUPTED_EXIT_CODE, stderr);
      assert.match(
        stderr,
        /interrupted: asking refresh:prod:k8s-pool2-12345678-vmss to stop at its next step/,
      );
      const result = JSON.parse(stdout) as { failures: { message: string }[] };
      assert.match(
        result.failures[0]?.message ?? '',
        /^[a-z-]+: cancelled: Ctrl-C; gave back (?=.*snapshot \S+ \(deletion accepted\))(?=.*node \S+ \(uncordoned, our annotations removed, its VM started\)).*; the pool's lease was released$/,
      );
      assert.match(
        stderr,
        /after the interrupt:\npool k8s-pool2-12345678-vmss \(run \S+\), read just now:\n {2}the pool's lease is free\n {2}nothing of the run is left/,
      );
    });
  }
});
