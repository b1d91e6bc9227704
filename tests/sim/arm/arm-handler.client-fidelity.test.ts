/**
 * What real clients still saw differently from Azure (second pass), driven through the real
 * @azure/arm-compute client and, for the bodies the SDK would not send, raw HTTPS with the exact body
 * the named tool sends: partial image references (PUT refuses one that names no image, PATCH merges),
 * `az vmss scale`'s property-less PUT, `"zones": null`, and a scale-set DELETE that is authorized first and
 * then deletes the scale set with its instances (and their nodes). Rate-limit headers: throttling.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ComputeManagementClient } from '@azure/arm-compute';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import { actionListAuthorizer } from '../../../sim/arm/action-authorizer.js';
import { type RunningSimulator, SAMPLE_SCENARIO, startSimulator } from '../../../sim/index.js';
import {
  type ArmTestWorld,
  FAST_POLL,
  rawRequest,
  restError,
  startArmTestWorld,
  staticCredential,
  SUBSCRIPTION,
} from './arm-test-world.js';

const RG = 'rg-clients';
const SCALE_SETS = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets`;
const API = 'api-version=2024-07-01';
const MARKETPLACE = { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' };

function seed(state: ArmTestWorld['state']): void {
  state.addScaleSet({ resourceGroup: RG, name: 'vmss-a', instances: 2, tags: { pool: 'a' } });
  state.addScaleSet({ resourceGroup: RG, name: 'vmss-z', instances: 3, zones: ['1', '2', '3'] });
  state.addScaleSet({ resourceGroup: RG, name: 'vmss-gone', instances: 2 });
}

/** An image reference as the SDK deserialized it, without the fields it filled with `undefined`. */
function plain(reference: object | undefined): unknown {
  return JSON.parse(JSON.stringify(reference ?? {})) as unknown;
}

void describe('simulated ARM as real clients see it', () => {
  let world: ArmTestWorld;

  before(async () => {
    world = await startArmTestWorld({ seed });
  });

  after(async () => {
    await world.close();
  });

  void describe('partial imageReference', () => {
    void it('a PUT whose reference carries only version keeps the stored marketplace image at that version', async () => {
      // What `az vmss update --set virtualMachineProfile.storageProfile.imageReference.version=X` changes.
      const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
      const profile = scaleSet.virtualMachineProfile ?? {};
      profile.storageProfile = { ...profile.storageProfile, imageReference: { version: '24.04.202611220' } };

      await world.settle(
        world.client.virtualMachineScaleSets.beginCreateOrUpdateAndWait(
          RG,
          'vmss-a',
          { ...scaleSet, virtualMachineProfile: profile },
          FAST_POLL,
        ),
      );

      assert.deepEqual(world.state.getScaleSet(`${SCALE_SETS}/vmss-a`)?.imageReference, {
        ...MARKETPLACE,
        version: '24.04.202611220',
      });
      // Back to the seeded version for the tests below.
      await world.settle(
        world.client.virtualMachineScaleSets.beginUpdateAndWait(
          RG,
          'vmss-a',
          { virtualMachineProfile: { storageProfile: { imageReference: { version: 'latest' } } } },
          FAST_POLL,
        ),
      );
    });

    void it('a PATCH of sku.name changes the VM size of the model: old instances are not on the latest model', async () => {
      const before = (await world.client.virtualMachineScaleSets.get(RG, 'vmss-a')).sku?.name;
      await world.settle(
        world.client.virtualMachineScaleSets.beginUpdateAndWait(
          RG,
          'vmss-a',
          { sku: { name: 'Standard_D8s_v5' } },
          FAST_POLL,
        ),
      );

      const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
      assert.equal(scaleSet.sku?.name, 'Standard_D8s_v5');
      const instances = world.state.listInstances(`${SCALE_SETS}/vmss-a`);
      assert.ok(instances.length > 0);
      assert.ok(instances.every((instance) => !instance.latestModelApplied));
      await world.settle(
        world.client.virtualMachineScaleSets.beginUpdateAndWait(
          RG,
          'vmss-a',
          { sku: { name: before ?? 'Standard_D4s_v5' } },
          FAST_POLL,
        ),
      );
    });

    void it('a PATCH carrying only version merges it into the stored reference', async () => {
      const updated = await world.settle(
        world.client.virtualMachineScaleSets.beginUpdateAndWait(
          RG,
          'vmss-a',
          { virtualMachineProfile: { storageProfile: { imageReference: { version: '24.04.202611220' } } } },
          FAST_POLL,
        ),
      );

      assert.deepEqual(plain(updated.virtualMachineProfile?.storageProfile?.imageReference), {
        ...MARKETPLACE,
        version: '24.04.202611220',
      });
      // Back to the seeded version for the tests below.
      await world.settle(
        world.client.virtualMachineScaleSets.beginUpdateAndWait(
          RG,
          'vmss-a',
          { virtualMachineProfile: { storageProfile: { imageReference: { version: 'latest' } } } },
          FAST_POLL,
        ),
      );
    });
  });

  void describe('no stricter than ARM', () => {
    void it('az vmss scale (a PUT of only location and sku) changes the capacity and keeps model and tags', async () => {
      const before = world.state.getScaleSetModel(`${SCALE_SETS}/vmss-a`);

      // The body of `az vmss scale -g rg-clients -n vmss-a --new-capacity 3`.
      const reply = await rawRequest(world, 'PUT', `${SCALE_SETS}/vmss-a?${API}`, {
        body: JSON.stringify({
          location: 'westeurope',
          sku: { name: 'Standard_D4s_v5', tier: 'Standard', capacity: 3 },
        }),
      });
      world.clock.advance(world.latency.scaleSetUpdateSeconds);
      const after = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');

      assert.equal(reply.status, 200);
      assert.equal(after.sku?.capacity, 3);
      assert.equal(world.state.listInstances(`${SCALE_SETS}/vmss-a`).length, 3);
      assert.deepEqual(after.tags, { pool: 'a' });
      assert.deepEqual(plain(after.virtualMachineProfile?.storageProfile?.imageReference), MARKETPLACE);
      assert.deepEqual(
        world.state.getScaleSetModel(`${SCALE_SETS}/vmss-a`)?.virtualMachineProfile,
        before?.virtualMachineProfile,
      );
    });

    void it('"zones": null in a PUT reads as absent and keeps the zones', async () => {
      const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-z');

      const reply = await rawRequest(world, 'PUT', `${SCALE_SETS}/vmss-z?${API}`, {
        body: JSON.stringify({ ...scaleSet, zones: null }),
      });

      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assert.deepEqual((reply.body as { zones?: string[] }).zones, ['1', '2', '3']);
    });
  });

  void describe('DELETE of a scale set', () => {
    void it('deletes it with its instances as an LRO: Deleting, then gone (204 again)', async () => {
      const id = `${SCALE_SETS}/vmss-gone`;
      const accepted = await rawRequest(world, 'DELETE', `${SCALE_SETS}/vmss-gone?${API}`);
      const during = await world.client.virtualMachineScaleSets.get(RG, 'vmss-gone');

      assert.equal(accepted.status, 202);
      assert.match(accepted.headers['azure-asyncoperation'] ?? '', /\/operations\//);
      assert.match(accepted.headers.location ?? '', /monitor=true/);
      assert.equal(during.provisioningState, 'Deleting');

      await world.settle(world.client.virtualMachineScaleSets.beginDeleteAndWait(RG, 'vmss-gone', FAST_POLL));
      const error = await world.client.virtualMachineScaleSets.get(RG, 'vmss-gone').then(
        () => undefined,
        (caught: unknown) => caught,
      );
      const again = await rawRequest(world, 'DELETE', `${SCALE_SETS}/vmss-gone?${API}`);

      assert.equal(restError(error).statusCode, 404);
      assert.equal(world.state.getScaleSet(id), undefined);
      assert.equal(world.state.listInstances(id).length, 0);
      assert.equal(again.status, 204);
    });
  });
});

void describe('simulated ARM: DELETE of a scale set without the delete action', () => {
  let world: ArmTestWorld;

  before(async () => {
    world = await startArmTestWorld({
      seed,
      authorizer: actionListAuthorizer(['Microsoft.Compute/virtualMachineScaleSets/read']),
    });
  });

  after(async () => {
    await world.close();
  });

  void it('is refused 403 AuthorizationFailed naming the action before anything else', async () => {
    const error = await world.client.virtualMachineScaleSets.beginDeleteAndWait(RG, 'vmss-a', FAST_POLL).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const missing = await world.client.virtualMachineScaleSets
      .beginDeleteAndWait(RG, 'no-such-vmss', FAST_POLL)
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    assert.equal(restError(error).statusCode, 403);
    assert.equal(restError(error).code, 'AuthorizationFailed');
    assert.match(restError(error).message, /Microsoft\.Compute\/virtualMachineScaleSets\/delete/);
    assert.equal(restError(missing).statusCode, 403);
    assert.equal(world.state.listInstances(`${SCALE_SETS}/vmss-a`).length, 2);
  });
});

void describe('simulator: deleting a scale set takes its nodes out of the cluster', () => {
  let sim: RunningSimulator;
  let outDir: string;

  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-delete-'));
    sim = await startSimulator({
      scenario: SAMPLE_SCENARIO,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
  });

  after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  void it('the SDK deletes k8s-auto; its nodes are gone from the API server', async () => {
    const compute = new ComputeManagementClient(staticCredential(), sim.subscriptionId, {
      endpoint: sim.armEndpoint,
      tlsOptions: { ca: sim.caPem },
    });
    const config = new KubeConfig();
    config.loadFromFile(sim.kubeconfigPath);
    const core = config.makeApiClient(CoreV1Api);
    const autoNodes = async (): Promise<string[]> =>
      (await core.listNode()).items
        .map((node) => node.metadata?.name ?? '')
        .filter((name) => name.startsWith('k8s-auto-12345678-vmss'));
    const before = await autoNodes();

    const poller = await compute.virtualMachineScaleSets.beginDelete(
      'rg-K8s-Prod',
      'k8s-auto-12345678-vmss',
      {
        updateIntervalInMs: 1,
      },
    );
    sim.clock.advanceBy(sim.world.latency.instanceStopSeconds + 1);
    await poller.pollUntilDone();

    assert.equal(before.length, 2);
    assert.deepEqual(await autoNodes(), []);
  });
});
