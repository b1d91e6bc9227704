/**
 * PUT-create of a scale set through the real @azure/arm-compute client, as ARM answers it: 201 and an
 * LRO, the scale set `Creating` with its instances built from the model sent, customData stored but never
 * returned; each instance keeps the model it was built from. A body without sku or profile is refused,
 * and so is an `If-Match` on a scale set that does not exist.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { VirtualMachineScaleSet } from '@azure/arm-compute';

import type { ComputeEvent } from '../../../sim/arm/compute-state.js';
import {
  type ArmTestWorld,
  FAST_POLL,
  rawRequest,
  restError,
  startArmTestWorld,
  SUBSCRIPTION,
} from './arm-test-world.js';

const RG = 'rg-nodes';
const GALLERY_VERSION = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/cluster_gallery/images/pool-a/versions/2026.1122.1000`;
const BOOTSTRAP = Buffer.from('#cloud-config\nbootstrap: true\n').toString('base64');
const NO_OP = Buffer.from('#cloud-config\n').toString('base64');

describe('simulated ARM: creating a scale set by PUT', () => {
  let world: ArmTestWorld;
  const events: ComputeEvent[] = [];

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
          images: [{ name: 'pool-a', versions: [{ name: '2026.1122.1000' }] }],
        });
        state.subscribe((event) => events.push(event));
      },
    });
  });

  after(async () => {
    await world.close();
  });

  /** The pool's readable model, changed as a canary of the published model would be. */
  async function canaryBody(): Promise<VirtualMachineScaleSet> {
    const source = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
    const profile = source.virtualMachineProfile ?? {};
    return {
      location: source.location,
      sku: { ...source.sku, capacity: 1 },
      tags: { 'vmss-prototype.canary-run': 'run-1' },
      upgradePolicy: source.upgradePolicy ?? { mode: 'Manual' },
      virtualMachineProfile: {
        ...profile,
        storageProfile: { ...profile.storageProfile, imageReference: { id: GALLERY_VERSION } },
        osProfile: { ...profile.osProfile, computerNamePrefix: 'pool-a-c-', customData: NO_OP },
        extensionProfile: {
          extensions: (profile.extensionProfile?.extensions ?? []).filter(
            (extension) => extension.name !== 'vmssCSE',
          ),
        },
      },
    };
  }

  it('creates it with its instances built from the model sent; customData is stored, never returned', async () => {
    const body = await canaryBody();

    const created = await world.settle(
      world.client.virtualMachineScaleSets.beginCreateOrUpdateAndWait(RG, 'vmss-a-canary', body, FAST_POLL),
      1,
    );

    assert.equal(created.provisioningState, 'Succeeded');
    assert.equal(created.sku?.capacity, 1);
    assert.deepEqual(created.tags, { 'vmss-prototype.canary-run': 'run-1' });
    assert.equal(created.virtualMachineProfile?.osProfile?.customData, undefined);
    const id = created.id ?? '';
    assert.equal(world.state.getScaleSet(id)?.customData, NO_OP);
    const [instance] = world.state.listInstances(id);
    assert.ok(instance);
    assert.match(instance.computerName, /^pool-a-c-/);
    assert.ok(
      events.some((event) => event.type === 'instance-created' && event.instance.id === instance.id),
      'the world is told of the new instance',
    );
    const booted = world.state.getInstanceBootModel(instance.id);
    assert.equal(booted?.customData, NO_OP);
    assert.deepEqual(
      booted.extensions.map((extension) => extension['name']),
      ['billing'],
    );
    assert.equal(String(booted.imageReference['id']).toLowerCase(), GALLERY_VERSION.toLowerCase());
    // The pool's own model is untouched.
    const pool = world.state.listScaleSets().find((scaleSet) => scaleSet.name === 'vmss-a');
    assert.equal(pool?.customData, BOOTSTRAP);
    assert.equal(pool.extensions.length, 2);
  });

  it('answers 201 with an Azure-AsyncOperation, Creating until the operation is done', async () => {
    const path = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets`;
    const source = await rawRequest(world, 'GET', `${path}/vmss-a?api-version=2024-07-01`);
    const wire = source.body as { location: string; sku: object; properties: Record<string, unknown> };
    const reply = await rawRequest(world, 'PUT', `${path}/vmss-a-raw?api-version=2024-07-01`, {
      body: JSON.stringify({
        location: wire.location,
        sku: { ...wire.sku, capacity: 0 },
        properties: { virtualMachineProfile: wire.properties['virtualMachineProfile'] },
      }),
    });

    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.ok(reply.headers['azure-asyncoperation']);
    const properties = (reply.body as { properties: Record<string, unknown> }).properties;
    assert.equal(properties['provisioningState'], 'Creating');
  });

  it('refuses a body without sku, and an If-Match on a scale set that does not exist', async () => {
    const body = await canaryBody();
    const { sku: _sku, ...withoutSku } = body;
    const refused = restError(
      await world.client.virtualMachineScaleSets
        .beginCreateOrUpdateAndWait(RG, 'vmss-no-sku', withoutSku, FAST_POLL)
        .catch((error: unknown) => error),
    );
    assert.equal(refused.statusCode, 400);

    const conditional = restError(
      await world.client.virtualMachineScaleSets
        .beginCreateOrUpdateAndWait(RG, 'vmss-if-match', body, { ...FAST_POLL, ifMatch: '"1"' })
        .catch((error: unknown) => error),
    );
    assert.equal(conditional.statusCode, 412);
    assert.equal(world.state.listScaleSets().length, 3, 'vmss-a and the two created above; nothing else');
  });
});
