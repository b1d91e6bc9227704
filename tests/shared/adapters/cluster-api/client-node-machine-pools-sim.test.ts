/**
 * The MachinePools adapter against the simulator's Cluster API management cluster (sim/scenarios/capz.yaml),
 * through the product's own service account there, authorized by infra/kubernetes/management/: the pool
 * behind the CAPZ scale set, its machines, the conditional image write, the canary pool's life, and the
 * management cluster granting every permission MANAGEMENT_RBAC lists.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  type ClientNodeClusterApi,
  clientNodeClusterApi,
} from '../../../../shared/adapters/cluster-api/client-node-cluster-api.js';
import { requiredManagementAccessFor } from '../../../../shared/application/kubernetes-permissions.js';
import { TerminalError } from '../../../../shared/domain/errors.js';
import type { CanaryPoolSpec } from '../../../../shared/ports/cluster-api/machine-pools.js';
import { CAPZ_SCENARIO, type RunningSimulator, startSimulator } from '../../../../sim/index.js';
import { loadScenarioFile } from '../../../../sim/world/scenario.js';

const NS = 'default';
const POOL = 'capz-lab-mp-0';
const RBAC_DIR = fileURLToPath(new URL('../../../../../infra/kubernetes', import.meta.url));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

void describe(
  'ClientNodeMachinePools against the simulated management cluster',
  { concurrency: false },
  () => {
    let sim: RunningSimulator;
    let outDir: string;
    let api: ClientNodeClusterApi;

    before(async () => {
      outDir = await mkdtemp(join(tmpdir(), 'vmssp-capz-adapter-'));
      const scenario = await loadScenarioFile(CAPZ_SCENARIO);
      scenario.latency = { ...scenario.latency, profile: 'fast' };
      sim = await startSimulator({
        scenario,
        outDir,
        clock: 'manual',
        startMs: Date.parse('2026-11-22T12:00:00Z'),
        rbacDir: RBAC_DIR,
      });
      const management = sim.clusters.find((cluster) => cluster.name === 'mgmt');
      assert.ok(management, 'the capz scenario has a management cluster mgmt');
      api = clientNodeClusterApi({
        server: management.kubeHttpsUrl,
        caPem: sim.caPem,
        token: management.tokens.serviceAccount,
        cluster: 'capz-lab (management cluster)',
      });
    });

    after(async () => {
      await api.close();
      await sim.stop();
      await rm(outDir, { recursive: true, force: true });
    });

    void it('grants the service account every permission of infra/kubernetes/management/', async () => {
      const required = requiredManagementAccessFor(NS);
      const decisions = await api.server.reviewAccess(required);
      assert.deepEqual(
        required
          .filter((_, index) => decisions[index]?.allowed !== true)
          .map((access) => access.verb + ' ' + access.resource),
        [],
      );
      assert.match(await api.server.version(), /^v1\./);
    });

    void it('finds the pool behind the CAPZ scale set and lists its machines', async () => {
      const view = await api.machinePools.findByScaleSet(NS, POOL);

      assert.equal(view.name, POOL);
      assert.equal(view.azureMachinePool, POOL);
      assert.equal(view.clusterName, 'capz-lab');
      assert.equal(view.replicas, 3);
      assert.deepEqual(view.strategy, { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' });
      assert.notEqual(view.resourceVersion, '');

      const machines = await api.machinePools.listMachines(NS, POOL);
      assert.equal(machines.length, 3);
      assert.ok(machines.every((machine) => machine.instanceId !== '' && !machine.deleting));
    });

    void it('writes the template image only at the version read', async () => {
      const before = await api.machinePools.findByScaleSet(NS, POOL);
      const image = {
        computeGallery: {
          gallery: 'vmssp_gallery',
          name: 'capz-lab-capz-lab-mp-0',
          version: '2026.1122.1200',
        },
      };

      assert.equal(await api.machinePools.setTemplateImage(NS, POOL, image, '1'), 'conflict');
      assert.equal(await api.machinePools.setTemplateImage(NS, POOL, image, before.resourceVersion), 'set');

      const after = await api.machinePools.findByScaleSet(NS, POOL);
      assert.deepEqual(after.imageFields, image);
      assert.equal(after.image?.kind, 'compute-gallery');
      assert.equal(
        await api.machinePools.setTemplateImage(NS, POOL, image, before.resourceVersion),
        'conflict',
      );
    });

    void it('creates, lists and deletes a canary pool, idempotently, and never deletes the real pool', async () => {
      const pool = await api.machinePools.findByScaleSet(NS, POOL);
      const canary: CanaryPoolSpec = {
        namespace: NS,
        source: { machinePool: pool.name, azureMachinePool: pool.azureMachinePool },
        name: `${POOL}-canary`,
        replicas: 1,
        image: pool.imageFields ?? { id: 'unused' },
        labels: { 'vmss-prototype.io/run': 'run-sim-1' },
      };

      await api.machinePools.createCanaryPool(canary);
      await api.machinePools.createCanaryPool(canary);
      assert.deepEqual(await api.machinePools.listCanaryPools(NS, { 'vmss-prototype.io/run': 'run-sim-1' }), [
        canary.name,
      ]);
      const view = await api.machinePools.findByScaleSet(NS, canary.name);
      assert.equal(view.replicas, 1);
      assert.equal(view.autoscaled, false);

      const refused = await rejection(api.machinePools.deleteCanaryPool(NS, POOL));
      assert.ok(refused instanceof TerminalError);
      assert.equal(refused.code, 'NotACanaryPool');

      await api.machinePools.deleteCanaryPool(NS, canary.name);
      await api.machinePools.deleteCanaryPool(NS, canary.name);
      assert.equal((await api.machinePools.findByScaleSet(NS, POOL)).name, POOL);
    });
  },
);
