/**
 * MachinePool's `/scale` subresource (sim/kube/scale-subresource.ts) and the Machines of its machines
 * (sim/world/capz/capi-machines.ts) over the wire, with the machine's kubectl against `startSimulator`
 * and sim/scenarios/capz.yaml: `kubectl scale machinepool` finds the subresource through discovery and
 * the reconciler follows; `kubectl get machines` lists one Machine per AzureMachinePoolMachine.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { CAPZ_SCENARIO, type RunningSimulator, startSimulator } from '../../../sim/index.js';
import { loadScenarioFile } from '../../../sim/world/scenario.js';

const POOL = 'capz-lab-mp-0';
const SCALE_PATH = `/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools/${POOL}/scale`;

void describe('MachinePool /scale and Machines over the wire', () => {
  let sim: RunningSimulator;
  let outDir: string;

  function kubectl(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', ['--context', 'mgmt-sim-admin', ...args], {
        env: { ...process.env, KUBECONFIG: sim.kubeconfigPath, HOME: outDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  void before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-scale-'));
    const scenario = await loadScenarioFile(CAPZ_SCENARIO);
    scenario.latency = { ...scenario.latency, profile: 'fast' };
    sim = await startSimulator({
      scenario,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
  });

  void after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  void it('kubectl get machines: one Machine per AzureMachinePoolMachine, in the pool', async () => {
    const machines = await kubectl(
      'get',
      'machines',
      '-n',
      'default',
      '-l',
      `cluster.x-k8s.io/pool-name=${POOL}`,
      '-o',
      'name',
    );
    const ampms = await kubectl('get', 'ampm', '-n', 'default', '-o', 'name');

    assert.equal(machines.code, 0, machines.stderr);
    assert.deepEqual(
      machines.stdout
        .trim()
        .split('\n')
        .map((line) => line.replace(/^.*\//, ''))
        .sort(),
      ampms.stdout
        .trim()
        .split('\n')
        .map((line) => line.replace(/^.*\//, ''))
        .sort(),
    );
  });

  void it('GET …/machinepools/<name>/scale answers an autoscaling/v1 Scale; kubectl scale changes replicas', async () => {
    const before = await kubectl('get', '--raw', SCALE_PATH);
    assert.equal(before.code, 0, before.stderr);
    const scale = JSON.parse(before.stdout) as {
      apiVersion: string;
      kind: string;
      spec: { replicas: number };
    };
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.spec.replicas, 3);

    const scaled = await kubectl('scale', 'machinepool', POOL, '-n', 'default', '--replicas=4');
    assert.equal(scaled.code, 0, scaled.stderr);
    assert.match(scaled.stdout, /scaled/);
    const replicas = await kubectl('get', 'mp', POOL, '-n', 'default', '-o', 'jsonpath={.spec.replicas}');
    assert.equal(replicas.stdout, '4');
    sim.world.clock.advanceBy(5);
    const scaleSet = sim.world.compute.listScaleSets().find((candidate) => candidate.name === POOL);
    assert.equal(scaleSet?.capacity, 4, 'the reconciler followed the new replicas');

    const refused = await kubectl('scale', 'machinepool', POOL, '-n', 'default', '--replicas=-1');
    assert.notEqual(refused.code, 0);
  });
});
