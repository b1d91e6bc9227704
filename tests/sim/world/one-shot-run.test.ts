/**
 * A run-once pod (the canary's check pod) in the real shell (sim/world/one-shot-run.ts), through the
 * machine's kubectl against the simulator started in-process: the container's exit status, its log as
 * the termination message under FallbackToLogsOnError, its hostname and environment, and `sleep` as
 * simulated time the pod's end waits for.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { type RunningSimulator, SAMPLE_SCENARIO, startSimulator } from '../../../sim/index.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const run = promisify(execFile);

void describe('run-once pods in the real shell, through kubectl', () => {
  let sim: RunningSimulator;
  let dir: string;
  let node: string;

  async function kubectl(...args: string[]): Promise<string> {
    const { stdout } = await run('kubectl', ['--context', 'sim-admin', ...args], {
      env: { ...process.env, KUBECONFIG: sim.kubeconfigPath, HOME: dir },
    });
    return stdout;
  }

  async function createCheckPod(
    name: string,
    script: string,
    env: { name: string; value: string }[] = [],
  ): Promise<void> {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: {
        nodeName: node,
        restartPolicy: 'Never',
        containers: [
          {
            name: 'check',
            image: 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1',
            command: ['sh', '-c', script],
            env,
            terminationMessagePolicy: 'FallbackToLogsOnError',
          },
        ],
      },
    };
    await writeFile(join(dir, `${name}.json`), JSON.stringify(pod));
    await kubectl('create', '-f', join(dir, `${name}.json`));
  }

  async function outcome(name: string): Promise<string> {
    return kubectl(
      'get',
      'pod',
      name,
      '-o',
      'jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.message}',
    );
  }

  /** Simulated seconds, a second at a time (the kubelet's steps run as they fall due). */
  function advance(seconds: number): void {
    for (let second = 0; second < seconds; second++) sim.clock.advanceBy(1);
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vmss-sim-one-shot-'));
    sim = await startSimulator({
      scenario: SAMPLE_SCENARIO,
      outDir: dir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
    advance(5);
    node = (await kubectl('get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}')).trim();
    assert.ok(node !== '');
  });

  after(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  void it('the exit status is what the shell computed; the log is the termination message', async (t) => {
    if (skipWithoutBwrap(t)) return;
    // Beyond any grammar: arithmetic expansion, and an exit status from a variable.
    await createCheckPod('sum', 'n=$((2+3)); echo "sum $n" >&2; exit $n');
    advance(120);
    assert.equal(await outcome('sum'), 'Failed 5 sum 5');
  });

  void it('the hostname is the pod’s name, the env is the container’s; sleep is simulated time', async (t) => {
    if (skipWithoutBwrap(t)) return;
    await createCheckPod(
      'sleepy',
      '[ "$(hostname)" = "$HOSTNAME" ] || exit 9\necho "$(hostname) $CHECK_VALUE"\nsleep 900\nexit 2',
      [{ name: 'CHECK_VALUE', value: 'from-env' }],
    );
    advance(120);
    assert.match(await outcome('sleepy'), /^Running/);
    advance(900);
    assert.equal(await outcome('sleepy'), 'Failed 2 sleepy from-env');
  });

  void it('a check that passes Succeeds with exit 0 and no message', async (t) => {
    if (skipWithoutBwrap(t)) return;
    await createCheckPod('passes', 'test -d /proc/self && echo fine');
    advance(120);
    assert.equal(await outcome('passes'), 'Succeeded 0 ');
  });
});
