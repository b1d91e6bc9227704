/**
 * Drives the simulated ARM's capture path with the real @azure/arm-compute client: OS disks,
 * snapshots, galleries, image definitions (immutable fields) and versions (replication, ZRS
 * refusal, excludeFromLatest, failed LROs, delete).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  type ArmTestWorld,
  FAST_POLL,
  restError,
  startArmTestWorld,
  SUBSCRIPTION,
} from './arm-test-world.js';

const RG = 'rg-nodes';
const GALLERY = 'cluster_gallery';
const LOCATION = 'westeurope';
const SCALE_SET_ID = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/pool`;

function rejectsWith(status: number, code: string, message?: RegExp): (error: unknown) => boolean {
  return (error) => {
    const rest = restError(error);
    assert.equal(rest.statusCode, status, rest.message);
    assert.equal(rest.code, code, rest.message);
    if (message) assert.match(rest.message, message);
    return true;
  };
}

describe('simulated ARM: disks, snapshots and the compute gallery through @azure/arm-compute', () => {
  let world: ArmTestWorld;
  let osDiskId = '';
  let snapshotId = '';

  before(async () => {
    world = await startArmTestWorld({
      seed: (state) => {
        state.addScaleSet({ resourceGroup: RG, name: 'pool', instances: 2, hyperVGeneration: 'V2' });
      },
    });
    osDiskId = world.state.listInstances(SCALE_SET_ID)[0]?.osDiskId ?? '';
  });

  after(async () => {
    await world.close();
  });

  it('gets the OS managed disk of an instance', async () => {
    const disk = await world.client.disks.get(RG, osDiskId.split('/').pop() ?? '');

    assert.equal(disk.id, osDiskId);
    assert.equal(disk.diskSizeGB, 128);
    assert.equal(disk.hyperVGeneration, 'V2');
    assert.equal(disk.osType, 'Linux');
    assert.equal(disk.diskState, 'Attached');
    assert.equal(disk.managedBy, `${SCALE_SET_ID}/virtualMachines/0`);
  });

  it('snapshots a running instance crash-consistently, taking snapshotCreateSeconds', async () => {
    const poller = await world.client.snapshots.beginCreateOrUpdate(
      RG,
      'snap-running',
      {
        location: LOCATION,
        creationData: { createOption: 'Copy', sourceResourceId: osDiskId },
        incremental: true,
        tags: { source: 'pool_0' },
      },
      FAST_POLL,
    );
    assert.equal((await world.client.snapshots.get(RG, 'snap-running')).provisioningState, 'Creating');

    world.clock.advance(world.latency.snapshotCreateSeconds);
    const snapshot = await poller.pollUntilDone();

    assert.equal(snapshot.provisioningState, 'Succeeded');
    assert.equal(snapshot.incremental, true);
    assert.equal(snapshot.creationData?.sourceResourceId, osDiskId);
    assert.deepEqual(snapshot.tags, { source: 'pool_0' });
    assert.equal(world.state.getSnapshot(snapshot.id ?? '')?.sourceVmStopped, false);
  });

  it('records that a snapshot of a stopped instance is clean', async () => {
    world.state.powerOffInstance(`${SCALE_SET_ID}/virtualMachines/0`, { cause: 'guest' });
    world.clock.advance(world.latency.instanceStopSeconds);

    const snapshot = await world.settle(
      world.client.snapshots.beginCreateOrUpdateAndWait(
        RG,
        'snap-stopped',
        {
          location: LOCATION,
          creationData: { createOption: 'Copy', sourceResourceId: osDiskId },
          incremental: false,
        },
        FAST_POLL,
      ),
    );
    snapshotId = snapshot.id ?? '';

    assert.equal(snapshot.hyperVGeneration, 'V2');
    assert.equal(world.state.getSnapshot(snapshotId)?.sourceVmStopped, true);
  });

  it('completes a repeated snapshot PUT together with the copy already running (idempotent retry)', async () => {
    const body = {
      location: LOCATION,
      creationData: { createOption: 'Copy' as const, sourceResourceId: osDiskId },
    };
    const first = await world.client.snapshots.beginCreateOrUpdate(RG, 'snap-retried', body, FAST_POLL);
    world.clock.advance(world.latency.snapshotCreateSeconds / 2);
    const second = await world.client.snapshots.beginCreateOrUpdate(RG, 'snap-retried', body, FAST_POLL);

    world.clock.advance(world.latency.snapshotCreateSeconds / 2);
    const [a, b] = await Promise.all([first.pollUntilDone(), second.pollUntilDone()]);

    assert.equal(a.provisioningState, 'Succeeded');
    assert.equal(b.provisioningState, 'Succeeded');
    await world.settle(world.client.snapshots.beginDeleteAndWait(RG, 'snap-retried', FAST_POLL));
  });

  it('lists snapshots by resource group', async () => {
    const names = [];
    for await (const snapshot of world.client.snapshots.listByResourceGroup(RG)) names.push(snapshot.name);

    assert.deepEqual(names.sort(), ['snap-running', 'snap-stopped']);
  });

  it('refuses a snapshot of a disk that does not exist', async () => {
    await assert.rejects(
      world.client.snapshots.beginCreateOrUpdateAndWait(
        RG,
        'snap-missing',
        { location: LOCATION, creationData: { createOption: 'Copy', sourceResourceId: `${osDiskId}-gone` } },
        FAST_POLL,
      ),
      rejectsWith(404, 'NotFound'),
    );
  });

  it('fails a snapshot LRO injected as Microsoft.Compute/snapshots/write#lro and leaves it Failed', async () => {
    world.faults.inject('Microsoft.Compute/snapshots/write#lro', {
      status: 500,
      code: 'InternalDiskManagementError',
      message: 'An internal disk management error occurred.',
    });

    await assert.rejects(
      world.settle(
        world.client.snapshots.beginCreateOrUpdateAndWait(
          RG,
          'snap-broken',
          { location: LOCATION, creationData: { createOption: 'Copy', sourceResourceId: osDiskId } },
          FAST_POLL,
        ),
      ),
      (error) => {
        assert.match(String(error), /internal disk management error/i);
        return true;
      },
    );
    assert.equal((await world.client.snapshots.get(RG, 'snap-broken')).provisioningState, 'Failed');
    await world.settle(world.client.snapshots.beginDeleteAndWait(RG, 'snap-broken', FAST_POLL));
  });

  it('creates, gets and lists a gallery; refuses a name with a hyphen', async () => {
    const gallery = await world.settle(
      world.client.galleries.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        { location: LOCATION, description: 'prototype images' },
        FAST_POLL,
      ),
    );
    const again = await world.client.galleries.get(RG, GALLERY);
    const names = [];
    for await (const item of world.client.galleries.listByResourceGroup(RG)) names.push(item.name);

    assert.equal(gallery.provisioningState, 'Succeeded');
    assert.equal(again.description, 'prototype images');
    assert.deepEqual(names, [GALLERY]);
    await assert.rejects(
      world.client.galleries.beginCreateOrUpdateAndWait(
        RG,
        'cluster-gallery',
        { location: LOCATION },
        FAST_POLL,
      ),
      rejectsWith(400, 'InvalidParameter'),
    );
  });

  it('creates an image definition and refuses changing an immutable property', async () => {
    const definition = {
      location: LOCATION,
      osType: 'Linux' as const,
      osState: 'Generalized' as const,
      hyperVGeneration: 'V2' as const,
      architecture: 'x64' as const,
      identifier: { publisher: 'VMSS-Prototype-Pattern', offer: RG, sku: 'pool' },
      features: [{ name: 'SecurityType', value: 'TrustedLaunchSupported' }],
    };
    const image = await world.settle(
      world.client.galleryImages.beginCreateOrUpdateAndWait(RG, GALLERY, 'pool', definition, FAST_POLL),
    );
    assert.equal(image.provisioningState, 'Succeeded');
    assert.equal(image.osState, 'Generalized');

    const same = await world.settle(
      world.client.galleryImages.beginCreateOrUpdateAndWait(RG, GALLERY, 'pool', definition, FAST_POLL),
    );
    assert.equal(same.identifier?.sku, 'pool');

    await assert.rejects(
      world.client.galleryImages.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        { ...definition, hyperVGeneration: 'V1' },
        FAST_POLL,
      ),
      rejectsWith(
        409,
        'PropertyChangeNotAllowed',
        /Changing property 'galleryImage\.properties\.hyperVGeneration' is not allowed/,
      ),
    );
    await assert.rejects(
      world.client.galleryImages.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        { ...definition, identifier: { ...definition.identifier, sku: 'other' } },
        FAST_POLL,
      ),
      rejectsWith(409, 'PropertyChangeNotAllowed'),
    );
    const listed = [];
    for await (const item of world.client.galleryImages.listByGallery(RG, GALLERY)) listed.push(item.name);
    assert.deepEqual(listed, ['pool']);
  });

  it('refuses an image definition without osType like ARM (required parameter missing)', async () => {
    await assert.rejects(
      world.client.galleryImages.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'incomplete',
        {
          location: LOCATION,
          osState: 'Generalized',
          identifier: { publisher: 'p', offer: 'o', sku: 's' },
        } as never,
        FAST_POLL,
      ),
      rejectsWith(
        400,
        'InvalidParameter',
        /Required parameter 'galleryImage\.properties\.osType' is missing/,
      ),
    );
  });

  it('builds an image version from the snapshot: Creating with replication progress, then Succeeded', async () => {
    const poller = await world.client.galleryImageVersions.beginCreateOrUpdate(
      RG,
      GALLERY,
      'pool',
      '2026.1122.1430',
      {
        location: LOCATION,
        tags: { sourceNode: 'pool-000000' },
        storageProfile: { osDiskImage: { source: { id: snapshotId } } },
        publishingProfile: { storageAccountType: 'Standard_ZRS', excludeFromLatest: true },
      },
      FAST_POLL,
    );
    world.clock.advance(world.latency.imageVersionCreateSeconds / 2);
    const halfway = await world.client.galleryImageVersions.get(RG, GALLERY, 'pool', '2026.1122.1430', {
      expand: 'ReplicationStatus',
    });
    assert.equal(halfway.provisioningState, 'Creating');
    assert.equal(halfway.replicationStatus?.aggregatedState, 'InProgress');
    assert.equal(halfway.replicationStatus?.summary?.[0]?.progress, 50);

    world.clock.advance(world.latency.imageVersionCreateSeconds / 2);
    const version = await poller.pollUntilDone();
    const expanded = await world.client.galleryImageVersions.get(RG, GALLERY, 'pool', '2026.1122.1430', {
      expand: 'ReplicationStatus',
    });

    assert.equal(version.provisioningState, 'Succeeded');
    assert.equal(version.publishingProfile?.excludeFromLatest, true);
    assert.equal(version.publishingProfile?.storageAccountType, 'Standard_ZRS');
    assert.equal(version.storageProfile?.osDiskImage?.sizeInGB, 128);
    assert.equal(expanded.replicationStatus?.aggregatedState, 'Completed');
    assert.deepEqual(
      expanded.replicationStatus?.summary?.map((status) => [status.region, status.state, status.progress]),
      [[LOCATION, 'Completed', 100]],
    );
  });

  it('refuses deleting a snapshot while a version is being built from it', async () => {
    const poller = await world.client.galleryImageVersions.beginCreateOrUpdate(
      RG,
      GALLERY,
      'pool',
      '2026.1122.1431',
      { location: LOCATION, storageProfile: { osDiskImage: { source: { id: snapshotId } } } },
      FAST_POLL,
    );

    await assert.rejects(
      world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        '2026.1122.1431',
        { location: LOCATION, storageProfile: { osDiskImage: { source: { id: snapshotId } } } },
        FAST_POLL,
      ),
      rejectsWith(409, 'OperationNotAllowed', /provisioning state is 'Creating'/),
    );
    await assert.rejects(
      world.client.snapshots.beginDeleteAndWait(RG, 'snap-stopped', FAST_POLL),
      rejectsWith(409, 'OperationNotAllowed'),
    );
    await world.settle(poller.pollUntilDone(), 60);
  });

  it('PATCHes excludeFromLatest and refuses changing storageAccountType', async () => {
    const updated = await world.settle(
      world.client.galleryImageVersions.beginUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        '2026.1122.1430',
        { publishingProfile: { excludeFromLatest: false } },
        FAST_POLL,
      ),
    );

    assert.equal(updated.publishingProfile?.excludeFromLatest, false);
    assert.equal(updated.publishingProfile?.storageAccountType, 'Standard_ZRS');
    assert.equal(world.state.getImageVersion(updated.id ?? '')?.excludeFromLatest, false);
    await assert.rejects(
      world.client.galleryImageVersions.beginUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        '2026.1122.1430',
        { publishingProfile: { storageAccountType: 'Standard_LRS' } },
        FAST_POLL,
      ),
      rejectsWith(409, 'PropertyChangeNotAllowed'),
    );
  });

  it('lists versions by image definition', async () => {
    const names = [];
    for await (const version of world.client.galleryImageVersions.listByGalleryImage(RG, GALLERY, 'pool'))
      names.push(version.name);

    assert.deepEqual(names, ['2026.1122.1430', '2026.1122.1431']);
  });

  it('fails a Standard_ZRS version in a region without ZRS; the failed version stays until deleted', async () => {
    world.state.setRegionCapabilities(LOCATION, { zrs: false });
    try {
      const body = {
        location: LOCATION,
        storageProfile: { osDiskImage: { source: { id: snapshotId } } },
        publishingProfile: { storageAccountType: 'Standard_ZRS' as const, excludeFromLatest: true },
      };
      await assert.rejects(
        world.settle(
          world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
            RG,
            GALLERY,
            'pool',
            '2026.1122.1500',
            body,
            FAST_POLL,
          ),
        ),
        (error) => {
          assert.match(String(error), /ZRS storage account type is not supported in this region/);
          return true;
        },
      );
      const failed = await world.client.galleryImageVersions.get(RG, GALLERY, 'pool', '2026.1122.1500');
      assert.equal(failed.provisioningState, 'Failed');
      await assert.rejects(
        world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
          RG,
          GALLERY,
          'pool',
          '2026.1122.1500',
          { ...body, publishingProfile: { ...body.publishingProfile, storageAccountType: 'Standard_LRS' } },
          FAST_POLL,
        ),
        rejectsWith(409, 'OperationNotAllowed'),
      );

      await world.settle(
        world.client.galleryImageVersions.beginDeleteAndWait(
          RG,
          GALLERY,
          'pool',
          '2026.1122.1500',
          FAST_POLL,
        ),
      );
      const retried = await world.settle(
        world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
          RG,
          GALLERY,
          'pool',
          '2026.1122.1500',
          { ...body, publishingProfile: { ...body.publishingProfile, storageAccountType: 'Standard_LRS' } },
          FAST_POLL,
        ),
        60,
      );
      assert.equal(retried.provisioningState, 'Succeeded');
      assert.equal(retried.publishingProfile?.storageAccountType, 'Standard_LRS');
    } finally {
      world.state.setRegionCapabilities(LOCATION, { zrs: true });
    }
  });

  it('surfaces an injected image version LRO failure as an error and a Failed version', async () => {
    world.faults.inject('Microsoft.Compute/galleries/images/versions/write#lro', {
      status: 500,
      code: 'InternalOperationError',
      message: 'Replication failed in region westeurope.',
    });

    await assert.rejects(
      world.settle(
        world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
          RG,
          GALLERY,
          'pool',
          '2026.1122.1600',
          { location: LOCATION, storageProfile: { osDiskImage: { source: { id: snapshotId } } } },
          FAST_POLL,
        ),
        60,
      ),
      (error) => {
        assert.match(String(error), /Replication failed in region westeurope/);
        return true;
      },
    );
    assert.equal(
      world.state.getImageVersion(
        `${world.state.getGallery(`/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/${GALLERY}`)?.id ?? ''}/images/pool/versions/2026.1122.1600`,
      )?.provisioningState,
      'Failed',
    );
  });

  it('refuses invalid version names, two sources, a missing source and a Hyper-V generation mismatch', async () => {
    const source = { osDiskImage: { source: { id: snapshotId } } };
    await assert.rejects(
      world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        '2026.11.22.1',
        { location: LOCATION, storageProfile: source },
        FAST_POLL,
      ),
      rejectsWith(400, 'InvalidParameter', /Major\(int\)\.Minor\(int\)\.Patch\(int\)/),
    );
    await assert.rejects(
      world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        '1.0.0',
        { location: LOCATION, storageProfile: { ...source, source: { id: snapshotId } } },
        FAST_POLL,
      ),
      rejectsWith(400, 'InvalidParameter', /One and only one source type/),
    );
    await assert.rejects(
      world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool',
        '1.0.1',
        { location: LOCATION, storageProfile: { osDiskImage: { source: { id: `${snapshotId}-gone` } } } },
        FAST_POLL,
      ),
      rejectsWith(400, 'InvalidParameter', /is not found\. Please check source exists/),
    );
    await world.settle(
      world.client.galleryImages.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool-gen1',
        {
          location: LOCATION,
          osType: 'Linux',
          osState: 'Generalized',
          hyperVGeneration: 'V1',
          identifier: { publisher: 'p', offer: 'o', sku: 'gen1' },
        },
        FAST_POLL,
      ),
    );
    await assert.rejects(
      world.client.galleryImageVersions.beginCreateOrUpdateAndWait(
        RG,
        GALLERY,
        'pool-gen1',
        '1.0.0',
        { location: LOCATION, storageProfile: source },
        FAST_POLL,
      ),
      rejectsWith(400, 'InvalidParameter', /different Hypervisor generation \['V2'\]/),
    );
  });

  it('points the scale set at the definition and scales out instances that boot from the gallery image', async () => {
    const definitionId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/${GALLERY}/images/pool`;
    await world.settle(
      world.client.virtualMachineScaleSets.beginUpdateAndWait(
        RG,
        'pool',
        {
          sku: { capacity: 3 },
          virtualMachineProfile: {
            storageProfile: {
              imageReference: {
                id: definitionId,
                publisher: null,
                offer: null,
                sku: null,
                version: null,
              } as never,
            },
          },
        },
        FAST_POLL,
      ),
    );

    const instances = world.state.listInstances(SCALE_SET_ID);
    assert.equal(instances.length, 3);
    assert.equal(instances[2]?.bootsFromGalleryImage, true);
    assert.equal(instances[0]?.bootsFromGalleryImage, false);
  });

  it('deletes versions and snapshots; deleting what is gone answers 204', async () => {
    await world.settle(
      world.client.galleryImageVersions.beginDeleteAndWait(RG, GALLERY, 'pool', '2026.1122.1431', FAST_POLL),
    );
    await world.settle(world.client.snapshots.beginDeleteAndWait(RG, 'snap-running', FAST_POLL));

    await assert.rejects(
      world.client.snapshots.get(RG, 'snap-running'),
      rejectsWith(404, 'ResourceNotFound'),
    );
    await assert.rejects(
      world.client.galleryImageVersions.get(RG, GALLERY, 'pool', '2026.1122.1431'),
      rejectsWith(404, 'ResourceNotFound'),
    );
    await world.client.snapshots.beginDeleteAndWait(RG, 'snap-running', FAST_POLL);
    assert.equal(world.log.statuses('Microsoft.Compute/snapshots/delete').at(-1), 204);
  });
});
