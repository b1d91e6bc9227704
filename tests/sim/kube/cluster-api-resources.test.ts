/**
 * The management cluster's Cluster API objects over the wire (sim/kube/cluster-api-resources.ts): the
 * real @kubernetes/client-node CustomObjectsApi and the machine's kubectl against `startSimulator` with
 * sim/scenarios/capz.yaml, the connection file's cluster fields, and the reconciler's compute writes
 * staying out of the product's ARM request log.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ComputeManagementClient } from '@azure/arm-compute';
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

import { connectionOf } from '../../../sim/connection.js';
import { CAPZ_SCENARIO, type RunningSimulator, startSimulator } from '../../../sim/index.js';
import { loadScenarioFile } from '../../../sim/world/scenario.js';
import { staticCredential } from '../arm/arm-test-world.js';

const INFRA = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', namespace: 'default' };
const POOL = 'capz-lab-mp-0';

function client<T>(sim: RunningSimulator, context: string, api: new (...args: never[]) => T): T {
  const config = new KubeConfig();
  config.loadFromFile(sim.kubeconfigPath);
  config.setCurrentContext(context);
  return config.makeApiClient(api as never) as T;
}

void describe('Cluster API objects over the wire', () => {
  let sim: RunningSimulator;
  let outDir: string;
  let api: CustomObjectsApi;

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
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-capz-'));
    const scenario = await loadScenarioFile(CAPZ_SCENARIO);
    scenario.latency = { ...scenario.latency, profile: 'fast' };
    const mgmt = scenario.clusters.find((cluster) => cluster.name === 'mgmt');
    if (mgmt?.clusterApi) mgmt.clusterApi.syncPeriod = '2m';
    sim = await startSimulator({
      scenario,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
    const config = new KubeConfig();
    config.loadFromFile(sim.kubeconfigPath);
    config.setCurrentContext('mgmt-vmss-prototype');
    api = config.makeApiClient(CustomObjectsApi);
  });

  void after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  void it('says in the connection file which cluster manages which', () => {
    const clusters = connectionOf(sim).clusters;
    assert.deepEqual(
      clusters.map((cluster) => [cluster.name, cluster.managementCluster, cluster.clusterApi]),
      [
        ['capz-lab', { name: 'mgmt', namespace: 'default', clusterName: 'capz-lab' }, undefined],
        ['mgmt', undefined, { namespace: 'default' }],
      ],
    );
  });

  void it('reverts a model written over ARM with the Azure SDK at the resync, and says so on /_sim/capz', async () => {
    const client = new ComputeManagementClient(staticCredential(), sim.subscriptionId, {
      endpoint: sim.armEndpoint,
      tlsOptions: { ca: sim.caPem },
    });
    const seeded = sim.world.compute
      .listScaleSets()
      .find((candidate) => candidate.name === POOL)?.imageReference;
    const armBefore = sim.log.count({ api: 'arm' });
    await client.virtualMachineScaleSets.beginUpdate('rg-capz-lab', POOL, {
      virtualMachineProfile: {
        storageProfile: {
          imageReference: {
            publisher: 'Canonical',
            offer: '0001-com-ubuntu-server-jammy',
            sku: '22_04-lts-gen2',
            version: '22.04.209901010',
          },
        },
      },
    });
    assert.ok(sim.log.count({ api: 'arm' }) > armBefore, "the product's write is an ARM request");
    sim.clock.advanceBy(30);
    const imageNow = (): unknown =>
      sim.world.compute.listScaleSets().find((candidate) => candidate.name === POOL)?.imageReference;
    assert.equal((imageNow() as { version: string }).version, '22.04.209901010');
    const logged = sim.log.count({ api: 'arm' });
    sim.clock.advanceBy(120);
    assert.deepEqual(imageNow(), seeded);
    assert.equal(sim.log.count({ api: 'arm' }), logged, 'the revert is not an ARM request of the product');
    const events = await new Promise<{ kind: string; pool: string }[]>((resolve, reject) => {
      const request = httpsRequest(
        `${sim.armEndpoint}/_sim/capz`,
        { ca: sim.caPem, headers: { authorization: `Bearer ${sim.tokens.admin}` } },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve(JSON.parse(body) as { kind: string; pool: string }[]));
        },
      );
      request.on('error', reject);
      request.end();
    });
    assert.deepEqual(
      events.filter((event) => event.kind === 'revert').map((event) => event.pool),
      [POOL],
    );
  });

  void it('lists, gets and patches the objects with client-node, with 409 on a stale resourceVersion', async () => {
    const pools = (await api.listNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'machinepools',
      labelSelector: 'cluster.x-k8s.io/cluster-name=capz-lab',
    })) as { items: { metadata: { name: string } }[] };
    assert.deepEqual(
      pools.items.map((item) => item.metadata.name),
      [POOL],
    );
    const machines = (await api.listNamespacedCustomObject({
      ...INFRA,
      plural: 'azuremachinepoolmachines',
      labelSelector: `azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool=${POOL}`,
    })) as { items: unknown[] };
    assert.ok(machines.items.length >= 3, 'a machine per instance');

    const amp = (await api.getNamespacedCustomObject({
      ...INFRA,
      plural: 'azuremachinepools',
      name: POOL,
    })) as {
      metadata: { resourceVersion: string; generation: number };
    };
    const armBefore = sim.log.count({ api: 'arm' });
    const image = { computeGallery: { gallery: 'gallery', name: 'workers', version: '1.0.0' } };
    const patched = (await api.patchNamespacedCustomObject({
      ...INFRA,
      plural: 'azuremachinepools',
      name: POOL,
      body: [{ op: 'replace', path: '/spec/template/image', value: image }],
    })) as { metadata: { generation: number } };
    assert.equal(patched.metadata.generation, amp.metadata.generation + 1);
    await assert.rejects(
      api.replaceNamespacedCustomObject({ ...INFRA, plural: 'azuremachinepools', name: POOL, body: amp }),
      (error: unknown) => error instanceof ApiException && error.code === 409,
    );
    await assert.rejects(
      api.patchNamespacedCustomObject({
        ...INFRA,
        plural: 'azuremachinepools',
        name: POOL,
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: amp.metadata.resourceVersion },
          { op: 'replace', path: '/spec/template/image', value: image },
        ],
      }),
      (error: unknown) =>
        error instanceof ApiException && error.code === 422 && /testing value/.test(String(error.body)),
      'a JSON patch testing a stale resourceVersion is refused',
    );
    await assert.rejects(
      api.getNamespacedCustomObject({ ...INFRA, plural: 'azuremachinepools', name: 'nope' }),
      (error: unknown) => error instanceof ApiException && error.code === 404,
    );
    const modelBefore = sim.world.compute
      .listScaleSets()
      .find((candidate) => candidate.name === POOL)?.imageReference;
    sim.clock.advanceBy(3);
    // Without subscriptionID/resourceGroup CAPZ names a community gallery image (azure/converters/
    // image.go); there is none, so its scale set PUT fails and the model stays as it was.
    const scaleSet = sim.world.compute.listScaleSets().find((candidate) => candidate.name === POOL);
    assert.deepEqual(scaleSet?.imageReference, modelBefore);
    const failed = (await api.getNamespacedCustomObject({
      ...INFRA,
      plural: 'azuremachinepools',
      name: POOL,
    })) as { status?: { conditions?: { type: string; status: string; message?: string }[] } };
    const condition = failed.status?.conditions?.find((entry) => entry.type === 'BootstrapSucceeded');
    assert.equal(condition?.status, 'False');
    assert.match(
      condition?.message ?? '',
      /\/CommunityGalleries\/gallery\/Images\/workers\/Versions\/1\.0\.0/,
    );
    assert.equal(
      sim.log.count({ api: 'arm' }),
      armBefore,
      'the reconciler is not the product: no ARM request logged',
    );
    assert.ok(sim.world.capzEvents().some((event) => event.kind === 'model-write-failed'));
  });

  void it('creates a canary pool from objects posted by client-node and deletes it whatever the order', async () => {
    const name = `${POOL}-canary-1a2b3c`;
    const labels = { 'cluster.x-k8s.io/cluster-name': 'capz-lab', 'vmss-prototype.io/canary-of': POOL };
    const metadata = { name, namespace: 'default', labels };
    const pool = (await api.getNamespacedCustomObject({
      ...INFRA,
      plural: 'azuremachinepools',
      name: POOL,
    })) as {
      spec: { template: Record<string, unknown> };
    };
    await api.createNamespacedCustomObject({
      group: 'bootstrap.cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'kubeadmconfigs',
      body: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', metadata, spec: {} },
    });
    await api.createNamespacedCustomObject({
      ...INFRA,
      plural: 'azuremachinepools',
      body: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'AzureMachinePool',
        metadata,
        spec: {
          location: 'westeurope',
          template: {
            ...pool.spec.template,
            image: {
              marketplace: {
                publisher: 'Canonical',
                offer: '0001-com-ubuntu-server-jammy',
                sku: '22_04-lts-gen2',
                version: '22.04.202612010',
              },
            },
          },
        },
      },
    });
    await api.createNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'machinepools',
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'MachinePool',
        metadata,
        spec: {
          clusterName: 'capz-lab',
          replicas: 2,
          template: {
            spec: {
              clusterName: 'capz-lab',
              bootstrap: {
                configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', name },
              },
              infrastructureRef: {
                apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
                kind: 'AzureMachinePool',
                name,
              },
            },
          },
        },
      },
    });
    sim.clock.advanceBy(3);
    const canary = (): unknown =>
      sim.world.compute.listScaleSets().find((candidate) => candidate.name === name);
    assert.ok(canary(), 'the canary scale set exists');
    sim.clock.advanceBy(120);
    const nodes = client(sim, 'sim-admin', CoreV1Api);
    const joined = (await nodes.listNode()).items.filter((node) => node.metadata?.name?.startsWith(name));
    assert.equal(joined.length, 2);
    await api.deleteNamespacedCustomObject({
      group: 'bootstrap.cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'kubeadmconfigs',
      name,
    });
    sim.clock.advanceBy(3);
    assert.ok(canary(), 'a MachinePool and its AzureMachinePool keep the scale set');
    await api.deleteNamespacedCustomObject({ ...INFRA, plural: 'azuremachinepools', name });
    sim.clock.advanceBy(3);
    assert.equal(canary(), undefined);
    await api.deleteNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'machinepools',
      name,
    });
    sim.clock.advanceBy(3);
    const left = (await nodes.listNode()).items.filter((node) => node.metadata?.name?.startsWith(name));
    assert.equal(left.length, 0);
  });

  void it('serves the Cluster API kinds on the management cluster only', async () => {
    const headers = { authorization: `Bearer ${sim.tokens.admin}` };
    const workload = await fetch(
      `${sim.kubeHttpUrl}/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinepools`,
      { headers },
    );
    assert.equal(workload.status, 404);
    const groups = (await (await fetch(`${sim.kubeHttpUrl}/apis`, { headers })).json()) as {
      groups: { name: string }[];
    };
    assert.ok(!groups.groups.some((group) => group.name === 'cluster.x-k8s.io'));
  });

  void it('serves kubectl get by short name and label', async () => {
    const pools = await kubectl('get', 'mp', '-o', 'name');
    assert.equal(pools.code, 0, pools.stderr);
    assert.equal(pools.stdout.trim(), `machinepool.cluster.x-k8s.io/${POOL}`);
    const machines = await kubectl(
      'get',
      'ampm',
      '-l',
      'cluster.x-k8s.io/cluster-name=capz-lab',
      '-o',
      'name',
    );
    assert.equal(machines.code, 0, machines.stderr);
    assert.ok(machines.stdout.trim().split('\n').length >= 3);
  });
});
