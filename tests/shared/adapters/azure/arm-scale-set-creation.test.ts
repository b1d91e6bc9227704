/**
 * The scale sets port's creation and deletion (the temporary canary scale set, issue #48) through the real
 * @azure/arm-compute client against the simulator's ARM: the PUT of the plan built from the pool's model
 * as ARM returns it, its instances booting that model; asking again finds it; the model read as ARM
 * returns it and the resource group listed; the PUT is conditional (If-None-Match: *), so an absent
 * name costs one request and an existing one is read only after ARM refused to overwrite it; a name another scale set holds is refused; deletion of a
 * missing one is done.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { armCompute } from '../../../../shared/adapters/azure/arm-compute.js';
import {
  canaryScaleSetOwnerTags,
  canaryScaleSetPlan,
  NO_OP_CLOUD_CONFIG_BASE64,
  type ScaleSetModelDocument,
} from '../../../../shared/domain/canary-scale-set.js';
import { TerminalError } from '../../../../shared/domain/errors.js';
import { type ScaleSetRef, scaleSetResourceId } from '../../../../shared/domain/resource-id.js';
import type { ComputePorts } from '../../../../shared/ports/compute/index.js';
import {
  type ArmTestWorld,
  startArmTestWorld,
  staticCredential,
  SUBSCRIPTION,
} from '../../../sim/arm/arm-test-world.js';

const RG = 'rg-nodes';
const pool: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-a' };
const VERSION = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/cluster_gallery/images/pool-a/versions/2026.1203.0800`;
const BOOTSTRAP = Buffer.from('#cloud-config\nbootstrap: true\n').toString('base64');
const RUN = 'run-20261203-0800';

describe('ARM scale sets: creating and deleting a canary scale set', () => {
  let world: ArmTestWorld;
  let compute: ComputePorts;

  before(async () => {
    world = await startArmTestWorld({
      seed: (state) => {
        state.addScaleSet({
          resourceGroup: RG,
          name: 'vmss-a',
          instances: 1,
          computerNamePrefix: 'pool-a-',
          customData: BOOTSTRAP,
          extensions: [
            { name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
            { name: 'billing', publisher: 'Microsoft.AKS', type: 'Compute.AKS.Linux.Billing' },
          ],
        });
        state.addGallery({
          resourceGroup: RG,
          name: 'cluster_gallery',
          images: [{ name: 'pool-a', versions: [{ name: '2026.1203.0800' }] }],
        });
      },
    });
    compute = armCompute({
      credential: staticCredential(),
      subscriptionIds: [SUBSCRIPTION],
      endpoint: world.url,
      ca: world.ca,
      retry: { maxRetries: 3, retryDelayInMs: 5, maxRetryDelayInMs: 20, maxInlineThrottleWaitMs: 2_000 },
      pollIntervalMs: 1,
    });
  });

  after(async () => {
    await world.close();
  });

  async function plan(): Promise<ReturnType<typeof canaryScaleSetPlan>> {
    const model = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
    return canaryScaleSetPlan({
      source: { name: 'vmss-a' },
      model: model as unknown as ScaleSetModelDocument,
      imageVersionId: VERSION,
      newNodes: 'boot-from-image',
      keepExtensionTypes: ['Compute.AKS.Linux.Billing'],
      runId: RUN,
      canaries: 1,
    });
  }

  it('creates it from the plan: its instance boots the version, the no-op and the kept extensions', async () => {
    const canary = await plan();
    const ref: ScaleSetRef = { ...pool, name: canary.name };

    const before = world.log.entries.length;
    const created = await world.settle(
      compute.scaleSets.requestCreation(ref, {
        model: canary.model,
        ownerTags: canaryScaleSetOwnerTags(RUN),
      }),
      1,
    );
    assert.equal(created, 'requested');
    // One conditional PUT (If-None-Match: *), no read of the absent name before it.
    assert.deepEqual(
      world.log.entries.slice(before).map((entry) => `${entry.target?.method ?? '?'} ${entry.status}`),
      ['PUT 201'],
    );

    const id = scaleSetResourceId(ref);
    const [instance] = world.state.listInstances(id);
    assert.ok(instance, 'the canary instance exists');
    assert.ok(instance.computerName.startsWith(canary.computerNamePrefix), instance.computerName);
    const booted = world.state.getInstanceBootModel(instance.id);
    assert.equal(booted?.customData, NO_OP_CLOUD_CONFIG_BASE64);
    assert.deepEqual(
      booted.extensions.map((extension) => extension['name']),
      ['billing'],
    );
    assert.equal(String(booted.imageReference['id']).toLowerCase(), VERSION.toLowerCase());
    const read = await world.settle(compute.scaleSets.get(ref), 1);
    assert.equal(read.tags['vmss-prototype.run-id'], RUN);
    // The pool is untouched.
    assert.equal(world.state.listScaleSets().find((s) => s.name === 'vmss-a')?.customData, BOOTSTRAP);
  });

  it('finds it when asked again (a retry after the PUT was accepted)', async () => {
    const canary = await plan();
    const again = await world.settle(
      compute.scaleSets.requestCreation(
        { ...pool, name: canary.name },
        { model: canary.model, ownerTags: canaryScaleSetOwnerTags(RUN) },
      ),
      1,
    );
    assert.equal(again, 'found');
    assert.equal(world.state.listScaleSets().length, 2);
  });

  it('reads the model as ARM returns it, and lists the resource group with the canary by its tags', async () => {
    const canary = await plan();
    const model = await world.settle(compute.scaleSets.readModel(pool), 1);
    assert.equal(model.virtualMachineProfile?.osProfile?.['computerNamePrefix'], 'pool-a-');
    assert.equal(
      model.virtualMachineProfile?.osProfile?.['customData'],
      undefined,
      'customData is write-only',
    );
    assert.deepEqual(
      (model.virtualMachineProfile?.extensionProfile?.extensions ?? []).map((e) => e.typePropertiesType),
      ['CustomScript', 'Compute.AKS.Linux.Billing'],
    );
    const listed = await world.settle(compute.scaleSets.list(SUBSCRIPTION, RG), 1);
    assert.deepEqual(listed.map((scaleSet) => scaleSet.name).sort(), [canary.name, 'vmss-a'].sort());
    const found = listed.find((scaleSet) => scaleSet.name === canary.name);
    assert.equal(found?.tags['vmss-prototype.purpose'], 'canary-scale-set');
    assert.deepEqual(await world.settle(compute.scaleSets.list(SUBSCRIPTION, 'rg-absent'), 1), []);
  });

  it("refuses a name another scale set holds (or another run's canary)", async () => {
    const canary = await plan();
    for (const [name, run] of [
      ['vmss-a', RUN],
      [canary.name, 'another-run'],
    ] as const) {
      const refused = await world
        .settle(
          compute.scaleSets.requestCreation(
            { ...pool, name },
            { model: canary.model, ownerTags: canaryScaleSetOwnerTags(run) },
          ),
          1,
        )
        .catch((error: unknown) => error);
      assert.ok(refused instanceof TerminalError, String(refused));
      assert.equal(refused.code, 'ScaleSetNameTaken');
    }
    assert.equal(world.state.listScaleSets().length, 2);
  });

  it('deletes it with its instances; a missing one is done', async () => {
    const canary = await plan();
    const ref: ScaleSetRef = { ...pool, name: canary.name };
    await world.settle(compute.scaleSets.requestDeletion(ref), 1);
    // The deletion runs on the simulated clock: move it on until the scale set is gone.
    for (let step = 0; step < 600 && world.state.getScaleSet(scaleSetResourceId(ref)) !== undefined; step++) {
      world.clock.advance(10);
    }
    assert.equal(world.state.getScaleSet(scaleSetResourceId(ref)), undefined);
    assert.deepEqual(world.state.listInstances(scaleSetResourceId(ref)), []);
    await world.settle(compute.scaleSets.requestDeletion(ref), 1);
    assert.deepEqual(
      world.state.listScaleSets().map((s) => s.name),
      ['vmss-a'],
    );
  });
});
