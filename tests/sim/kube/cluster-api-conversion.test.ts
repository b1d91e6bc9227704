/**
 * Cluster API's MachinePool and Machine at v1beta1 and v1beta2 (sim/kube/cluster-api-conversion.ts): the
 * conversion itself (a round trip keeps the object), and over the wire with the machine's kubectl and
 * fetch against `startSimulator` with sim/scenarios/capz.yaml: discovery, reads, writes, watch, `/scale`
 * and the deprecation warning on a current Cluster API (both versions), and on an older one (v1beta1 only).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { CAPZ_SCENARIO, type RunningSimulator, startSimulator } from '../../../sim/index.js';
import {
  durationToSeconds,
  secondsToDuration,
  toServedVersion,
  toStoredVersion,
} from '../../../sim/kube/cluster-api-conversion.js';
import { loadScenarioFile } from '../../../sim/world/scenario.js';

const POOL = 'capz-lab-mp-0';
const MACHINE_POOLS = { resource: 'machinepools', group: 'cluster.x-k8s.io' };
const BOTH = ['v1beta1', 'v1beta2'] as const;
const DEPRECATED =
  'Warning: cluster.x-k8s.io/v1beta1 MachinePool is deprecated; use cluster.x-k8s.io/v1beta2 MachinePool';

/** A stored (v1beta1) MachinePool with every field the conversion moves. */
function storedPool(): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachinePool',
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      clusterName: 'c',
      replicas: 3,
      minReadySeconds: 30,
      template: {
        spec: {
          clusterName: 'c',
          version: 'v1.31.4',
          nodeDrainTimeout: '1m30s',
          bootstrap: {
            configRef: {
              apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
              kind: 'KubeadmConfig',
              namespace: 'default',
              name: 'p',
            },
          },
          infrastructureRef: {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'AzureMachinePool',
            namespace: 'default',
            name: 'p',
          },
        },
      },
    },
    status: {
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      unavailableReplicas: 1,
      phase: 'Running',
      bootstrapReady: true,
      infrastructureReady: true,
      conditions: [{ type: 'Ready', status: 'True' }],
      v1beta2: { readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 1 },
    },
  };
}

void describe('MachinePool conversion between v1beta1 and v1beta2', () => {
  void it('moves the fields v1beta2 moved, and a round trip gives the stored object back', () => {
    const served = toServedVersion({ ...MACHINE_POOLS, version: 'v1beta2' }, storedPool()) as unknown as {
      apiVersion: string;
      spec: { minReadySeconds?: number; template: { spec: Record<string, unknown> } };
      status: Record<string, unknown>;
    };
    assert.equal(served.apiVersion, 'cluster.x-k8s.io/v1beta2');
    assert.equal(served.spec.minReadySeconds, undefined);
    assert.deepEqual(served.spec.template.spec, {
      clusterName: 'c',
      version: 'v1.31.4',
      minReadySeconds: 30,
      deletion: { nodeDrainTimeoutSeconds: 90 },
      bootstrap: {
        configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name: 'p' },
      },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'AzureMachinePool', name: 'p' },
    });
    assert.deepEqual(served.status, {
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      upToDateReplicas: 1,
      phase: 'Running',
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
      deprecated: {
        v1beta1: {
          conditions: [{ type: 'Ready', status: 'True' }],
          readyReplicas: 2,
          availableReplicas: 2,
          unavailableReplicas: 1,
        },
      },
    });
    const back = toStoredVersion(
      { ...MACHINE_POOLS, version: 'v1beta2' },
      served as unknown as KubeObject,
      BOTH,
    );
    assert.deepEqual(back, storedPool());
    assert.deepEqual(
      toStoredVersion({ ...MACHINE_POOLS, version: 'v1beta1' }, storedPool(), BOTH),
      storedPool(),
    );
  });

  void it("converts Go durations and a Machine's nodeRef as Cluster API does", () => {
    assert.equal(durationToSeconds('1h0m0s'), 3600);
    assert.equal(durationToSeconds('1.5s'), 1);
    assert.equal(secondsToDuration(3600), '1h0m0s');
    assert.equal(secondsToDuration(0), '0s');
    const machine: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name: 'm', namespace: 'default' },
      status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u' }, phase: 'Running' },
    };
    const machines = { resource: 'machines', group: 'cluster.x-k8s.io' };
    const served = toServedVersion({ ...machines, version: 'v1beta2' }, machine);
    assert.deepEqual(served.status, { nodeRef: { name: 'n' }, phase: 'Running' });
    const stored = toStoredVersion({ ...machines, version: 'v1beta1' }, machine, BOTH);
    assert.deepEqual((stored.status as { nodeRef: unknown }).nodeRef, {
      apiVersion: 'v1',
      kind: 'Node',
      name: 'n',
    });
    assert.deepEqual(toStoredVersion({ ...machines, version: 'v1beta1' }, machine, ['v1beta1']), machine);
  });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A simulator on sim/scenarios/capz.yaml whose management cluster serves `versions`, and kubectl on it. */
function world(versions: readonly ('v1beta1' | 'v1beta2')[]): {
  sim: () => RunningSimulator;
  kubectl: (...args: string[]) => Promise<Ran>;
  raw: (path: string, init?: RequestInit) => Promise<Response>;
} {
  let sim: RunningSimulator;
  let outDir: string;
  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-capi-'));
    const scenario = await loadScenarioFile(CAPZ_SCENARIO);
    scenario.latency = { ...scenario.latency, profile: 'fast' };
    const mgmt = scenario.clusters.find((cluster) => cluster.name === 'mgmt');
    if (mgmt?.clusterApi) mgmt.clusterApi.servedVersions = [...versions];
    sim = await startSimulator({
      scenario,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
    sim.clock.advanceBy(60);
  });
  after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });
  const kubectl = (...args: string[]): Promise<Ran> =>
    new Promise((resolve, reject) => {
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
  const raw = (path: string, init: RequestInit = {}): Promise<Response> => {
    const mgmt = sim.clusters.find((cluster) => cluster.name === 'mgmt');
    return fetch(`${mgmt?.kubeHttpUrl ?? ''}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${mgmt?.tokens.admin ?? ''}`,
        ...(init.headers as Record<string, string>),
      },
    });
  };
  return { sim: () => sim, kubectl, raw };
}

void describe('a current Cluster API (v1beta1 and v1beta2) over the wire', () => {
  const { kubectl, raw } = world(BOTH);

  void it('lists both versions in discovery, v1beta2 preferred', async () => {
    const group = (await (await raw('/apis/cluster.x-k8s.io')).json()) as {
      versions: { version: string }[];
      preferredVersion: { version: string };
    };
    assert.deepEqual(
      group.versions.map((entry) => entry.version),
      ['v1beta2', 'v1beta1'],
    );
    assert.equal(group.preferredVersion.version, 'v1beta2');
    const resources = (await (await raw('/apis/cluster.x-k8s.io/v1beta2')).json()) as {
      resources: { name: string }[];
    };
    assert.deepEqual(
      resources.resources.map((entry) => entry.name),
      ['machinepools', 'machinepools/status', 'machinepools/scale', 'machines', 'machines/status'],
    );
  });

  void it('serves kubectl at v1beta2 quietly and at v1beta1 with the deprecation warning', async () => {
    const current = await kubectl('get', 'machinepools.v1beta2.cluster.x-k8s.io', '-o', 'name');
    assert.equal(current.code, 0, current.stderr);
    assert.equal(current.stdout.trim(), `machinepool.cluster.x-k8s.io/${POOL}`);
    assert.equal(current.stderr, '');
    const shortName = await kubectl('get', 'mp', POOL, '-o', 'jsonpath={.apiVersion}');
    assert.equal(shortName.stdout, 'cluster.x-k8s.io/v1beta2', 'kubectl takes the preferred version');
    const deprecated = await kubectl('get', 'machinepools.v1beta1.cluster.x-k8s.io', '-o', 'name');
    assert.equal(deprecated.code, 0, deprecated.stderr);
    assert.equal(deprecated.stdout.trim(), `machinepool.cluster.x-k8s.io/${POOL}`);
    assert.equal(deprecated.stderr.trim(), DEPRECATED);
  });

  void it('reads one object in both shapes, and a write at v1beta2 reads back at v1beta1', async () => {
    const v1beta2 = await kubectl(
      'get',
      'machinepools.v1beta2.cluster.x-k8s.io',
      POOL,
      '-o',
      'jsonpath={.spec.template.spec.infrastructureRef.apiGroup} {.status.readyReplicas} {.status.upToDateReplicas} {.status.deprecated.v1beta1.readyReplicas}',
    );
    assert.equal(v1beta2.stdout, 'infrastructure.cluster.x-k8s.io 3 3 3');
    const patched = await kubectl(
      'patch',
      'machinepools.v1beta2.cluster.x-k8s.io',
      POOL,
      '--type',
      'merge',
      '-p',
      '{"spec":{"template":{"spec":{"minReadySeconds":45}}}}',
    );
    assert.equal(patched.code, 0, patched.stderr);
    const v1beta1 = await kubectl(
      'get',
      'machinepools.v1beta1.cluster.x-k8s.io',
      POOL,
      '-o',
      'jsonpath={.spec.minReadySeconds} {.spec.template.spec.infrastructureRef.apiVersion} {.status.readyReplicas}',
    );
    assert.equal(v1beta1.stdout, '45 infrastructure.cluster.x-k8s.io/v1beta1 3');
    const machine = await kubectl(
      'get',
      'machines.v1beta2.cluster.x-k8s.io',
      '-o',
      'jsonpath={.items[0].status.nodeRef}',
    );
    assert.match(machine.stdout, /^\{"name":"[^"]+"\}$/);
  });

  void it('refuses a v1beta2 reference without apiGroup, at v1beta2 and through v1beta1 admission alike', async () => {
    const pool = (await (
      await raw(`/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools/${POOL}`)
    ).json()) as { spec: { template: { spec: Record<string, unknown> } } };
    const body = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      metadata: { name: 'refused', namespace: 'default' },
      spec: {
        ...pool.spec,
        template: {
          spec: {
            ...pool.spec.template.spec,
            infrastructureRef: {
              apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
              kind: 'AzureMachinePool',
              name: 'x',
            },
          },
        },
      },
    };
    const answer = await raw('/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(answer.status, 422);
    assert.match(await answer.text(), /spec\.template\.spec\.infrastructureRef\.apiGroup: Required value/);
    for (const version of BOTH) {
      const refused = await raw(`/apis/cluster.x-k8s.io/${version}/namespaces/default/machinepools/${POOL}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ spec: { clusterName: 'other' } }),
      });
      assert.equal(refused.status, 422, version);
      assert.equal(
        refused.headers.get('warning') !== null,
        version === 'v1beta1',
        'a refused write at v1beta1 carries the deprecation warning too',
      );
      assert.match(await refused.text(), /spec\.clusterName: Forbidden: field is immutable/);
    }
  });

  void it('scales at either version and watches in the version asked for', async () => {
    const list = (await (
      await raw('/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools')
    ).json()) as {
      metadata: { resourceVersion: string };
    };
    const scaled = await kubectl('scale', 'machinepools.v1beta2.cluster.x-k8s.io', POOL, '--replicas=4');
    assert.equal(scaled.code, 0, scaled.stderr);
    const scale = (await (
      await raw(`/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools/${POOL}/scale`)
    ).json()) as { spec: { replicas: number } };
    assert.equal(scale.spec.replicas, 4);
    // From the list's resourceVersion: the scale's change is replayed, converted to v1beta2.
    const watch = await raw(
      `/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=1`,
    );
    assert.equal(watch.headers.get('warning'), null);
    const reader = watch.body?.getReader();
    let text = '';
    while (!text.includes('\n')) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      text += Buffer.from(chunk.value).toString('utf8');
    }
    await reader?.cancel();
    const event = JSON.parse(text.split('\n')[0] ?? '{}') as {
      type: string;
      object: {
        apiVersion: string;
        spec: { replicas: number; template: { spec: { infrastructureRef: unknown } } };
      };
    };
    assert.equal(event.type, 'MODIFIED');
    assert.equal(event.object.apiVersion, 'cluster.x-k8s.io/v1beta2');
    assert.equal(event.object.spec.replicas, 4);
    assert.deepEqual(event.object.spec.template.spec.infrastructureRef, {
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'AzureMachinePool',
      name: POOL,
    });
    const deprecatedWatch = await raw(
      `/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools?watch=true&timeoutSeconds=1`,
    );
    assert.match(deprecatedWatch.headers.get('warning') ?? '', /v1beta1 MachinePool is deprecated/);
    await deprecatedWatch.body?.cancel();
  });
});

void describe('an older Cluster API (v1beta1 only) over the wire', () => {
  const { kubectl, raw } = world(['v1beta1']);

  void it('lists v1beta1 only, serves no v1beta2 and sends no warning', async () => {
    const group = (await (await raw('/apis/cluster.x-k8s.io')).json()) as { versions: { version: string }[] };
    assert.deepEqual(
      group.versions.map((entry) => entry.version),
      ['v1beta1'],
    );
    const missing = await kubectl('get', 'machinepools.v1beta2.cluster.x-k8s.io');
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /doesn't have a resource type/);
    const served = await kubectl(
      'get',
      'mp',
      POOL,
      '-o',
      'jsonpath={.apiVersion} {.spec.template.spec.infrastructureRef.apiVersion}',
    );
    assert.equal(served.code, 0, served.stderr);
    assert.equal(served.stdout, 'cluster.x-k8s.io/v1beta1 infrastructure.cluster.x-k8s.io/v1beta1');
    assert.equal(served.stderr, '');
  });
});
