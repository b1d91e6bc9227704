/**
 * The ARM compute ports (armCompute) end to end: the real @azure/arm-compute client over HTTPS (throwaway CA) against
 * the simulator's ARM handler, on simulated time. Covers every port method, idempotency of the
 * request* methods, error mapping (404, 403, 429, 5xx, ZRS) and the scale set PATCH on the wire.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { armCompute } from '../../../../shared/adapters/azure/arm-compute.js';
import {
  type ImageDefinitionRef,
  type ImageDefinitionSpec,
  type ImageVersionRef,
  NO_OP_CLOUD_CONFIG,
} from '../../../../shared/domain/compute.js';
import { NotFoundError, TerminalError, TransientError } from '../../../../shared/domain/errors.js';
import { type ScaleSetRef, scaleSetResourceId } from '../../../../shared/domain/resource-id.js';
import type { ComputePorts } from '../../../../shared/ports/compute/index.js';
import { createActionListAuthorizer } from '../../../../sim/arm/action-authorizer.js';
import type { ComputeState } from '../../../../sim/arm/compute-state.js';
import {
  type ArmTestWorld,
  startArmTestWorld,
  staticCredential,
  SUBSCRIPTION,
} from '../../../sim/arm/arm-test-world.js';

const COMPUTE_ACTIONS = new URL('../../../../../infra/azure/compute-actions.json', import.meta.url);
const RG = 'rg-k8s';
const uniform: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-pool-a' };
const flexible: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-flex' };
const gallery = { subscriptionId: SUBSCRIPTION, resourceGroup: 'rg-images', galleryName: 'gal_prototype' };
const definition: ImageDefinitionRef = { ...gallery, imageName: 'vmss-pool-a' };
const spec: ImageDefinitionSpec = {
  osType: 'Linux',
  osState: 'Generalized',
  hyperVGeneration: 'V2',
  architecture: 'x64',
  securityType: 'TrustedLaunchSupported',
  identifier: { publisher: 'VMSS-Prototype-Pattern', offer: RG, sku: 'vmss-pool-a' },
  description: 'prototype images of rg-k8s/vmss-pool-a',
  tags: { 'managed-by': 'vmss-prototype' },
};
const OLD_CUSTOM_DATA = Buffer.from('#!/bin/bash\necho bootstrap\n').toString('base64');
const NEW_CUSTOM_DATA = Buffer.from(NO_OP_CLOUD_CONFIG).toString('base64');

function gatewayFor(world: ArmTestWorld, maxInlineThrottleWaitMs = 2_000): ComputePorts {
  return armCompute({
    credential: staticCredential(),
    subscriptionIds: [SUBSCRIPTION],
    endpoint: world.url,
    ca: world.ca,
    retry: { maxRetries: 3, retryDelayInMs: 5, maxRetryDelayInMs: 20, maxInlineThrottleWaitMs },
    pollIntervalMs: 1,
  });
}

function seed(state: ComputeState): void {
  state.addScaleSet({
    resourceGroup: RG,
    name: 'vmss-pool-a',
    instances: 2,
    customData: OLD_CUSTOM_DATA,
    extensions: [
      { name: 'vmss-cse', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
      {
        name: 'HealthExtension',
        publisher: 'Microsoft.ManagedServices',
        type: 'ApplicationHealthLinux',
        bootstrap: false,
      },
    ],
    securityType: 'TrustedLaunch',
    tags: { cluster: 'c1' },
    zones: ['1', '2'],
  });
  state.addScaleSet({ resourceGroup: RG, name: 'vmss-flex', orchestrationMode: 'Flexible', instances: 2 });
  state.addScaleSet({ resourceGroup: RG, name: 'vmss-flex-2', orchestrationMode: 'Flexible', instances: 1 });
  state.addScaleSet({
    resourceGroup: RG,
    name: 'vmss-ephemeral',
    instances: 1,
    ephemeralOsDisk: 'ResourceDisk',
  });
  state.setRegionCapabilities('southindia', { zrs: false });
}

/** Number of requests the simulated ARM served for an RBAC action (e.g. `…/snapshots/write`). */
function served(world: ArmTestWorld, action: string): number {
  return world.log.statuses(action).length;
}

/** A simulated world of the calling describe's own: started before its tests, closed after them. */
function ownWorld(): { world: ArmTestWorld; gateway: ComputePorts } {
  const own = {} as { world: ArmTestWorld; gateway: ComputePorts };
  void before(async () => {
    own.world = await startArmTestWorld({
      seed,
      authorizer: createActionListAuthorizer(fileURLToPath(COMPUTE_ACTIONS)),
    });
    own.gateway = gatewayFor(own.world);
  });
  void after(async () => {
    await own.world.close();
  });
  return own;
}

void describe('armCompute against the simulated ARM', () => {
  let world: ArmTestWorld;
  let gateway: ComputePorts;
  // RBAC as deployed: the custom role's action list, so a call outside it fails here as it would in Azure.
  const role = createActionListAuthorizer(fileURLToPath(COMPUTE_ACTIONS));

  void before(async () => {
    world = await startArmTestWorld({ seed, authorizer: role });
    gateway = gatewayFor(world);
  });

  void after(async () => {
    await world.close();
  });

  void describe('scale sets and instances', () => {
    void it('reads a Uniform scale set into the domain view', async () => {
      const scaleSet = await gateway.scaleSets.get(uniform);

      assert.equal(scaleSet.id.toLowerCase(), scaleSetResourceId(uniform).toLowerCase());
      assert.equal(scaleSet.orchestrationMode, 'Uniform');
      assert.equal(scaleSet.osType, 'Linux');
      assert.equal(scaleSet.upgradePolicyMode, 'Manual');
      assert.equal(scaleSet.automaticOsUpgrade, false);
      assert.equal(scaleSet.ephemeralOsDisk, false);
      assert.deepEqual(
        scaleSet.extensions?.map((extension) => extension.name),
        ['vmss-cse', 'HealthExtension'],
      );
      assert.deepEqual(scaleSet.tags, { cluster: 'c1' });
      assert.deepEqual(scaleSet.zones, ['1', '2']);
      assert.equal(scaleSet.securityType, 'TrustedLaunch');
      assert.equal(scaleSet.hyperVGeneration, 'V2');
      assert.equal(scaleSet.imageReference?.kind, 'marketplace');
    });

    void it('reports an ephemeral OS disk and its placement', async () => {
      const scaleSet = await gateway.scaleSets.get({ ...uniform, name: 'vmss-ephemeral' });

      assert.equal(scaleSet.ephemeralOsDisk, true);
      assert.equal(scaleSet.ephemeralOsDiskPlacement, 'ResourceDisk');
    });

    void it('maps a missing scale set to NotFoundError with a gerund message', async () => {
      await assert.rejects(gateway.scaleSets.get({ ...uniform, name: 'vmss-missing' }), (error: unknown) => {
        assert.ok(error instanceof NotFoundError);
        assert.match(error.message, /^reading scale set rg-k8s\/vmss-missing: /);
        return true;
      });
    });

    void it('reads a Uniform instance with its power state and OS disk', async () => {
      const instance = await gateway.instances.get(uniform, '0');

      const simulated = world.state.listInstances(scaleSetResourceId(uniform))[0];
      assert.ok(simulated);
      assert.equal(instance.instanceId, '0');
      assert.equal(instance.powerState, 'running');
      assert.equal(instance.provisioningState, 'Succeeded');
      assert.equal(instance.vmId, simulated.vmId);
      assert.equal(instance.osDiskId?.toLowerCase(), simulated.osDiskId?.toLowerCase());
      assert.equal(instance.ephemeralOsDisk, false);
      assert.equal(instance.hyperVGeneration, 'V2');
    });

    void it('reads a Flexible member by VM name and refuses a VM of another scale set', async () => {
      const [member] = world.state.listInstances(scaleSetResourceId(flexible));
      assert.ok(member);

      const instance = await gateway.instances.get(flexible, member.name);

      assert.equal(instance.instanceId, member.name);
      assert.equal(instance.powerState, 'running');
      assert.match(instance.resourceId, /\/providers\/Microsoft\.Compute\/virtualMachines\//i);
      await assert.rejects(
        gateway.instances.get({ ...flexible, name: 'vmss-flex-2' }, member.name),
        (error: unknown) => error instanceof NotFoundError && error.code === 'InstanceNotFound',
      );
    });

    void it('reads the scale set ARM records a Flexible member VM in, and a missing VM as NotFoundError', async () => {
      const [member] = world.state.listInstances(scaleSetResourceId(flexible));
      assert.ok(member);

      const vm = await gateway.virtualMachines.get({
        subscriptionId: SUBSCRIPTION,
        resourceGroup: RG,
        name: member.name,
      });

      assert.equal(vm.name, member.name);
      assert.equal(vm.scaleSetId?.toLowerCase(), scaleSetResourceId(flexible).toLowerCase());
      await assert.rejects(
        gateway.virtualMachines.get({ subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'no-such-vm' }),
        NotFoundError,
      );
    });

    void it('takes the orchestration mode from a ScaleSet without reading it again', async () => {
      const fresh = gatewayFor(world);
      const [member] = world.state.listInstances(scaleSetResourceId(flexible));
      assert.ok(member);
      const scaleSet = await fresh.scaleSets.get(flexible);
      const reads = served(world, 'Microsoft.Compute/virtualMachineScaleSets/read');

      const instance = await fresh.instances.get(scaleSet, member.name);

      assert.equal(served(world, 'Microsoft.Compute/virtualMachineScaleSets/read'), reads);
      assert.deepEqual(instance.scaleSet, flexible, 'only the ref travels with the instance');
    });

    void it('maps a missing instance to NotFoundError', async () => {
      await assert.rejects(gateway.instances.get(uniform, '99'), NotFoundError);
    });

    void it('requests power off without waiting, once, and start likewise (Uniform)', async () => {
      const read = () => gateway.instances.get(uniform, '1');
      const powerOff = 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/powerOff/action';
      const start = 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/start/action';
      const instanceView = 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/instanceView/read';
      const viewsBefore = served(world, instanceView);

      await gateway.instances.requestPowerOff(await read());
      await gateway.instances.requestPowerOff(await read());

      assert.equal((await read()).powerState, 'stopping');
      assert.equal(served(world, powerOff), 1, 'the second request saw "stopping" and did nothing');
      world.clock.advance(world.latency.instanceStopSeconds + 1);
      assert.equal((await read()).powerState, 'stopped');
      await gateway.instances.requestPowerOff(await read());
      assert.equal(served(world, powerOff), 1);

      await gateway.instances.requestStart(await read());
      await gateway.instances.requestStart(await read());
      assert.equal(served(world, start), 1);
      world.clock.advance(world.latency.instanceStartSeconds + 1);
      assert.equal((await read()).powerState, 'running');
      // The instance the caller just read carries its power state: no request reads it a second time.
      assert.equal(served(world, instanceView), viewsBefore);
    });

    void it('powers a Flexible member off and on through the virtual machine API', async () => {
      const [member] = world.state.listInstances(scaleSetResourceId(flexible));
      assert.ok(member);
      const read = () => gateway.instances.get(flexible, member.name);

      await gateway.instances.requestPowerOff(await read());
      world.clock.advance(world.latency.instanceStopSeconds + 1);
      assert.equal((await read()).powerState, 'stopped');
      await gateway.instances.requestStart(await read());
      world.clock.advance(world.latency.instanceStartSeconds + 1);

      assert.equal((await read()).powerState, 'running');
      assert.equal(served(world, 'Microsoft.Compute/virtualMachines/powerOff/action'), 1);
      assert.equal(served(world, 'Microsoft.Compute/virtualMachines/start/action'), 1);
    });
  });

  void describe('snapshot → gallery → image version → scale set model', () => {
    const snapshotName = 'snap-vmss-pool-a-0';
    let osDiskId = '';
    let snapshotId = '';
    const versionRef: ImageVersionRef = { ...definition, versionName: '20261122.1000.1' };

    void it('requests an incremental snapshot once and reads it back', async () => {
      const instance = await gateway.instances.get(uniform, '0');
      osDiskId = instance.osDiskId ?? '';
      const request = {
        subscriptionId: SUBSCRIPTION,
        resourceGroup: RG,
        name: snapshotName,
        location: instance.location,
        sourceDiskId: osDiskId,
        incremental: true,
        tags: { 'vmss-prototype/source-vm-id': instance.vmId ?? '' },
      };

      await gateway.snapshots.request(request);
      await gateway.snapshots.request(request);

      assert.equal(served(world, 'Microsoft.Compute/snapshots/write'), 1);
      world.clock.advance(world.latency.snapshotCreateSeconds + 1);
      const snapshot = await gateway.snapshots.get(SUBSCRIPTION, RG, snapshotName);
      snapshotId = snapshot.id;
      assert.equal(snapshot.provisioningState, 'Succeeded');
      assert.equal(snapshot.incremental, true);
      assert.equal(snapshot.sourceResourceId?.toLowerCase(), osDiskId.toLowerCase());
      assert.deepEqual(snapshot.tags, request.tags);
      await assert.rejects(
        gateway.snapshots.request({ ...request, sourceDiskId: `${osDiskId}-other` }),
        (error: unknown) => error instanceof TerminalError && error.code === 'SnapshotNameTaken',
      );
    });

    void it('ensures the gallery (waiting for it) and the image definition (not waiting) once', async () => {
      await world.settle(gateway.gallery.ensure(gallery, 'westeurope', { 'managed-by': 'vmss-prototype' }));
      await gateway.gallery.ensure(gallery, 'westeurope', {});

      const created = await world.settle(
        gateway.gallery.ensureImageDefinition(definition, 'westeurope', spec),
      );
      const again = await gateway.gallery.ensureImageDefinition(definition, 'westeurope', {
        ...spec,
        hyperVGeneration: 'V1',
      });

      assert.equal(served(world, 'Microsoft.Compute/galleries/write'), 1);
      assert.equal(served(world, 'Microsoft.Compute/galleries/images/write'), 1);
      assert.equal(created.provisioningState, 'Creating', 'asked for, not waited for');
      assert.deepEqual(world.log.statuses('Microsoft.Compute/galleries/images/write'), [201]);
      assert.deepEqual(created.spec, spec);
      assert.deepEqual(again.spec, spec, 'an existing definition is returned unchanged');
      assert.deepEqual((await gateway.gallery.getImageDefinition(definition)).spec, spec);
    });

    void it('requests the image version once, hidden from latest, and follows it to Succeeded', async () => {
      const request = {
        ref: versionRef,
        location: 'westeurope',
        sourceId: snapshotId,
        storageAccountType: 'Standard_ZRS' as const,
        extraRegions: [],
        excludeFromLatest: true,
        tags: { 'vmss-prototype/snapshot': snapshotName },
      };

      await gateway.imageVersions.request(request);
      await gateway.imageVersions.request(request);

      assert.equal(served(world, 'Microsoft.Compute/galleries/images/versions/write'), 1);
      const creating = await gateway.imageVersions.get(versionRef);
      assert.equal(creating.provisioningState, 'Creating');
      assert.equal(creating.replicationState, 'Replicating');
      assert.equal(creating.excludeFromLatest, true);
      assert.equal(creating.storageAccountType, 'Standard_ZRS');
      assert.equal(creating.sourceId?.toLowerCase(), snapshotId.toLowerCase());
      world.clock.advance(world.latency.imageVersionCreateSeconds + 1);
      const done = await gateway.imageVersions.get(versionRef);
      assert.equal(done.provisioningState, 'Succeeded');
      assert.equal(done.replicationState, 'Completed');
      const listed = await gateway.imageVersions.list(definition);
      assert.deepEqual(
        listed.map((version) => version.ref.versionName),
        ['20261122.1000.1'],
      );
    });

    void it('with the tags the caller read: one PATCH and no read, the target regions kept', async () => {
      const read = await gateway.imageVersions.get(versionRef);
      assert.equal(read.regionalExclusion, false, 'no target region carries a flag of its own');
      const id = read.id;
      const regionsBefore = JSON.stringify(world.state.getImageVersionRecord(id));
      const reads = served(world, 'Microsoft.Compute/galleries/images/versions/read');
      const writes = served(world, 'Microsoft.Compute/galleries/images/versions/write');
      const added = { 'vmss-prototype.note': 'published unread' };
      const answered = await gateway.imageVersions.requestExclusion(versionRef, false, added, read.tags);
      assert.deepEqual(answered, { provisioningState: 'Succeeded', excludeFromLatest: false });
      assert.equal(served(world, 'Microsoft.Compute/galleries/images/versions/read'), reads, 'no read');
      assert.equal(served(world, 'Microsoft.Compute/galleries/images/versions/write'), writes + 1);
      const after = await gateway.imageVersions.get(versionRef);
      assert.equal(after.excludeFromLatest, false);
      assert.deepEqual(after.tags, { ...read.tags, ...added });
      const record = world.state.getImageVersionRecord(id) as unknown as {
        properties: { publishingProfile: { targetRegions: unknown } };
      };
      const before = JSON.parse(regionsBefore) as typeof record;
      assert.deepEqual(
        record.properties.publishingProfile.targetRegions,
        before.properties.publishingProfile.targetRegions,
        'the merge left the target regions as they were',
      );
      // Hidden again, with its tags as they were, for the tests after this one.
      await gateway.imageVersions.requestExclusion(versionRef, true, {}, after.tags);
      await gateway.imageVersions.requestTags(versionRef, read.tags);
      assert.equal((await gateway.imageVersions.get(versionRef)).excludeFromLatest, true);
    });

    void it('flips excludeFromLatest with one PATCH carrying the added tags, and not again once settled', async () => {
      const added = { 'vmss-prototype.in-latest-at': '2026-11-22T10:30:00Z' };
      const writes = served(world, 'Microsoft.Compute/galleries/images/versions/write');
      const written = await gateway.imageVersions.requestExclusion(versionRef, false, added);
      // The PATCH's own answer: ARM applied it at once, so a wait for it has nothing left to read.
      assert.deepEqual(written, { provisioningState: 'Succeeded', excludeFromLatest: false });
      world.clock.advance(60);
      const settled = await gateway.imageVersions.requestExclusion(versionRef, false, added);
      assert.deepEqual(settled, { provisioningState: 'Succeeded', excludeFromLatest: false }, 'as read');

      assert.equal(served(world, 'Microsoft.Compute/galleries/images/versions/write'), writes + 1);
      const published = await gateway.imageVersions.get(versionRef);
      assert.equal(published.excludeFromLatest, false);
      assert.deepEqual(published.tags, { 'vmss-prototype/snapshot': snapshotName, ...added }, 'tags kept');
    });

    void it('points the scale set at the definition: marketplace fields nulled, customData replaced', async () => {
      const update = {
        imageId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_prototype/images/vmss-pool-a`,
        customDataBase64: NEW_CUSTOM_DATA,
      };

      await gateway.scaleSets.requestImageUpdate(uniform, update);
      world.clock.advance(world.latency.scaleSetUpdateSeconds + 1);
      await gateway.scaleSets.requestImageUpdate(uniform, update);
      world.clock.advance(world.latency.scaleSetUpdateSeconds + 1);

      const model = world.state.getScaleSetModel(scaleSetResourceId(uniform)) as {
        virtualMachineProfile: { storageProfile: { imageReference: unknown } };
      };
      // A merge patch only removes publisher/offer/sku/version if they were sent as explicit nulls.
      assert.deepEqual(model.virtualMachineProfile.storageProfile.imageReference, { id: update.imageId });
      assert.equal(world.state.getScaleSet(scaleSetResourceId(uniform))?.customData, NEW_CUSTOM_DATA);
      const scaleSet = await gateway.scaleSets.get(uniform);
      assert.deepEqual(scaleSet.imageReference, { kind: 'gallery', id: update.imageId });
      assert.equal(scaleSet.hyperVGeneration, 'V2', 'read from the gallery image definition');
      assert.equal(scaleSet.architecture, 'x64');
    });

    void it('returns the etag a tag change left: the next conditional write needs no read', async () => {
      const model = await gateway.scaleSets.get(uniform);
      const written = await gateway.scaleSets.requestChange(uniform, {
        tags: { ...model.tags, note: 'etag' },
        ...(model.etag === undefined ? {} : { ifMatch: model.etag }),
      });
      assert.ok(written.etag !== undefined && written.etag !== model.etag, JSON.stringify(written));
      assert.equal(written.etag, (await gateway.scaleSets.get(uniform)).etag);
      await gateway.scaleSets.requestChange(uniform, { tags: model.tags, ifMatch: written.etag });
      assert.deepEqual((await gateway.scaleSets.get(uniform)).tags, model.tags);
    });

    void it('lists extensions and deletes one, idempotently', async () => {
      const before = await gateway.scaleSets.listExtensions(uniform);
      assert.deepEqual(
        before.map((extension) => [extension.name, extension.publisher, extension.type]),
        [
          ['vmss-cse', 'Microsoft.Azure.Extensions', 'CustomScript'],
          ['HealthExtension', 'Microsoft.ManagedServices', 'ApplicationHealthLinux'],
        ],
      );

      await gateway.scaleSets.requestExtensionDeletion(uniform, 'vmss-cse');
      await gateway.scaleSets.requestExtensionDeletion(uniform, 'vmss-cse');
      await gateway.scaleSets.requestExtensionDeletion(uniform, 'never-installed');

      const during = await gateway.scaleSets.listExtensions(uniform);
      assert.deepEqual(
        during.map((extension) => [extension.name, extension.provisioningState]),
        [
          ['vmss-cse', 'Deleting'],
          ['HealthExtension', 'Succeeded'],
        ],
        'the deletion was accepted and not waited for',
      );
      assert.deepEqual(
        world.log.statuses('Microsoft.Compute/virtualMachineScaleSets/extensions/delete'),
        [202, 202, 204],
      );
    });

    void it('deletes the image version and the snapshot, idempotently', async () => {
      await gateway.imageVersions.requestDeletion(versionRef);
      world.clock.advance(world.latency.imageVersionDeleteSeconds + 1);
      await gateway.imageVersions.requestDeletion(versionRef);
      await gateway.snapshots.requestDeletion(SUBSCRIPTION, RG, snapshotName);
      await assert.rejects(
        gateway.snapshots.request({
          subscriptionId: SUBSCRIPTION,
          resourceGroup: RG,
          name: snapshotName,
          location: 'westeurope',
          sourceDiskId: osDiskId,
          incremental: true,
          tags: {},
        }),
        (error: unknown) => error instanceof TransientError && error.code === 'ResourceDeleting',
      );
      world.clock.advance(world.latency.snapshotDeleteSeconds + 1);
      await gateway.snapshots.requestDeletion(SUBSCRIPTION, RG, snapshotName);

      await assert.rejects(gateway.imageVersions.get(versionRef), NotFoundError);
      await assert.rejects(gateway.snapshots.get(SUBSCRIPTION, RG, snapshotName), (error: unknown) => {
        assert.ok(error instanceof NotFoundError);
        assert.match(error.message, /^reading snapshot rg-k8s\/snap-vmss-pool-a-0: /);
        return true;
      });
    });

    void it('a ZRS version in a region without zones fails; after its deletion an LRS retry goes through', async () => {
      const snapshotRequest = {
        subscriptionId: SUBSCRIPTION,
        resourceGroup: RG,
        name: 'snap-zrs',
        location: 'westeurope',
        sourceDiskId: osDiskId,
        incremental: true,
        tags: {},
      };
      await gateway.snapshots.request(snapshotRequest);
      world.clock.advance(world.latency.snapshotCreateSeconds + 1);
      const snapshot = await gateway.snapshots.get(SUBSCRIPTION, RG, 'snap-zrs');
      const ref = { ...definition, versionName: '20261122.1100.1' };
      const request = {
        ref,
        location: 'westeurope',
        sourceId: snapshot.id,
        storageAccountType: 'Standard_ZRS' as const,
        extraRegions: ['southindia'],
        excludeFromLatest: true,
        tags: {},
      };

      try {
        await gateway.imageVersions.request(request);
      } catch (error: unknown) {
        // Real ARM may refuse at once: then it must be the dedicated code.
        assert.ok(error instanceof TerminalError && error.code === 'ZrsUnsupported', String(error));
        return;
      }
      world.clock.advance(31);
      const failed = await gateway.imageVersions.get(ref);
      assert.equal(failed.provisioningState, 'Failed');
      assert.equal(failed.replicationState, 'Failed');
      assert.equal(failed.storageAccountType, 'Standard_ZRS');
      // Requesting it again is a no-op (it exists); the caller deletes it before retrying with LRS.
      await gateway.imageVersions.request(request);
      await gateway.imageVersions.requestDeletion(ref);
      const lrs = { ...request, storageAccountType: 'Standard_LRS' as const };
      await assert.rejects(gateway.imageVersions.request(lrs), (error: unknown) => {
        assert.ok(error instanceof TransientError, String(error));
        assert.equal(error.code, 'ResourceDeleting');
        return true;
      });
      world.clock.advance(world.latency.imageVersionDeleteSeconds + 1);
      await gateway.imageVersions.request(lrs);
      const retried = await gateway.imageVersions.get(ref);
      assert.equal(retried.provisioningState, 'Creating');
      assert.equal(retried.storageAccountType, 'Standard_LRS');
    });
  });

  void describe('throttling, faults and configuration', () => {
    void it('lets the SDK retry a 429 with a short Retry-After', async () => {
      world.faults.inject('Microsoft.Compute/snapshots/read', {
        status: 429,
        retryAfterSeconds: 0,
        code: 'TooManyRequests',
        message: 'The request is being throttled.',
      });

      await assert.rejects(gateway.snapshots.get(SUBSCRIPTION, RG, 'snap-none'), NotFoundError);

      assert.deepEqual(world.log.statuses('Microsoft.Compute/snapshots/read').slice(-2), [429, 404]);
    });

    void it('fails fast with TransientError(retryAfterMs) when ARM asks for a long wait', async () => {
      const before = served(world, 'Microsoft.Compute/virtualMachineScaleSets/read');
      world.faults.inject('Microsoft.Compute/virtualMachineScaleSets/read', {
        status: 429,
        retryAfterSeconds: 120,
        code: 'TooManyRequests',
        message: 'The request is being throttled.',
      });

      await assert.rejects(gateway.scaleSets.get(uniform), (error: unknown) => {
        assert.ok(error instanceof TransientError);
        assert.equal(error.code, 'ArmThrottled');
        assert.equal(error.retryAfterMs, 120_000);
        assert.match(error.message, /^reading scale set rg-k8s\/vmss-pool-a: /);
        return true;
      });
      assert.equal(
        served(world, 'Microsoft.Compute/virtualMachineScaleSets/read') - before,
        1,
        'no inline retry',
      );
    });

    void it('gives up on persistent 5xx after the SDK retries, as TransientError', async () => {
      const before = served(world, 'Microsoft.Compute/galleries/read');
      world.faults.inject(
        'Microsoft.Compute/galleries/read',
        { status: 500, code: 'InternalServerError', message: 'An internal error occurred.' },
        10,
      );

      await assert.rejects(gateway.gallery.ensure(gallery, 'westeurope', {}), (error: unknown) => {
        assert.ok(error instanceof TransientError);
        assert.equal(error.code, 'InternalServerError');
        return true;
      });
      assert.equal(
        served(world, 'Microsoft.Compute/galleries/read') - before,
        4,
        'one call and three retries',
      );
    });

    void it('maps a failed request on a busy resource (409) to TransientError', async () => {
      world.faults.inject('Microsoft.Compute/virtualMachineScaleSets/write', {
        status: 409,
        code: 'OperationNotAllowed',
        message: "Operation 'Update' is not allowed since another operation is in progress on the scale set.",
      });

      await assert.rejects(
        gateway.scaleSets.requestImageUpdate(uniform, { imageId: '/x', customDataBase64: NEW_CUSTOM_DATA }),
        (error: unknown) => error instanceof TransientError && error.code === 'OperationNotAllowed',
      );
    });

    void it('refuses subscriptions it was not configured for, without calling ARM', async () => {
      await assert.rejects(
        gateway.scaleSets.get({ ...uniform, subscriptionId: '99999999-0000-0000-0000-000000000000' }),
        (error: unknown) => error instanceof TerminalError && error.code === 'SubscriptionNotConfigured',
      );
    });

    void it('needed no action outside the custom role in infra/azure/compute-actions.json', () => {
      assert.deepEqual(role.denied(), []);
      assert.ok(role.used().includes('Microsoft.Compute/snapshots/write'));
    });

    void it('refuses a plain-HTTP endpoint at construction', () => {
      assert.throws(
        () => armCompute({ credential: staticCredential(), endpoint: 'http://127.0.0.1:1' }),
        (error: unknown) => error instanceof TerminalError && error.code === 'InsecureEndpoint',
      );
    });

    void it('does not trust the endpoint without the simulator CA', async () => {
      const untrusting = armCompute({
        credential: staticCredential(),
        endpoint: world.url,
        retry: { maxRetries: 0 },
      });

      await assert.rejects(
        untrusting.scaleSets.get(uniform),
        (error: unknown) => error instanceof TerminalError && error.code === 'TlsVerificationFailed',
      );
    });
  });
});

void describe('armCompute with missing permissions', () => {
  let world: ArmTestWorld;

  void before(async () => {
    world = await startArmTestWorld({
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'vmss-pool-a', instances: 1 }),
      authorizer: (action) => action !== 'Microsoft.Compute/snapshots/write',
    });
  });

  void after(async () => {
    await world.close();
  });

  void it('maps AuthorizationFailed to TerminalError naming the missing action', async () => {
    const gateway = gatewayFor(world);
    const instance = await gateway.instances.get(uniform, '0');

    await assert.rejects(
      gateway.snapshots.request({
        subscriptionId: SUBSCRIPTION,
        resourceGroup: RG,
        name: 'snap-denied',
        location: instance.location,
        sourceDiskId: instance.osDiskId ?? '',
        incremental: true,
        tags: {},
      }),
      (error: unknown) => {
        assert.ok(error instanceof TerminalError);
        assert.equal(error.code, 'AuthorizationFailed');
        assert.match(
          error.message,
          /^requesting snapshot rg-k8s\/snap-denied: the identity lacks permission Microsoft\.Compute\/snapshots\/write on scope /,
        );
        return true;
      },
    );
  });
});

void describe('armCompute: data disks on an instance', () => {
  const own = ownWorld();

  void it('attaches and detaches a data disk judged on the instance it is given: no second read', async () => {
    const { world, gateway } = own;
    const donor = await gateway.instances.get(uniform, '1');
    const zone = donor.zones[0];
    const snapshot = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'snap-attach-test' };
    await gateway.snapshots.request({
      ...snapshot,
      location: donor.location,
      sourceDiskId: donor.osDiskId ?? '',
      incremental: false,
      tags: {},
    });
    world.clock.advance(world.latency.snapshotCreateSeconds + 1);
    const { id: snapshotId } = await gateway.snapshots.get(SUBSCRIPTION, RG, snapshot.name);
    await gateway.disks.requestFromSnapshot({
      ...snapshot,
      name: 'copy-attach-test',
      location: donor.location,
      sourceSnapshotId: snapshotId,
      ...(zone === undefined ? {} : { zone }),
      skuName: 'StandardSSD_LRS',
      tags: {},
    });
    world.clock.advance(world.latency.diskCreateSeconds + 1);
    const disk = await gateway.disks.get(SUBSCRIPTION, RG, 'copy-attach-test');
    const action = 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/attachDetachDataDisks/action';
    const instanceRead = 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read';

    const readsBefore = served(world, instanceRead);
    await gateway.instances.requestDataDiskAttach(await gateway.instances.get(uniform, '1'), disk.id, 1);
    assert.equal(served(world, instanceRead), readsBefore + 1, 'only the caller read the instance');
    assert.equal(served(world, action), 1);
    world.clock.advance(world.latency.dataDiskAttachSeconds + 1);
    const attached = await gateway.instances.get(uniform, '1');
    assert.deepEqual(
      attached.dataDisks?.map((entry) => entry.diskId?.toLowerCase()),
      [disk.id.toLowerCase()],
    );
    // Attached already, as the instance just read says: nothing is sent.
    await gateway.instances.requestDataDiskAttach(attached, disk.id, 1);
    assert.equal(served(world, action), 1);

    const readsBeforeDetach = served(world, instanceRead);
    await gateway.instances.requestDataDiskDetach(attached, disk.id);
    assert.equal(served(world, instanceRead), readsBeforeDetach, 'the instance given is not read again');
    assert.equal(served(world, action), 2);
    world.clock.advance(world.latency.dataDiskDetachSeconds + 1);
    const detached = await gateway.instances.get(uniform, '1');
    assert.deepEqual(detached.dataDisks ?? [], []);
    await gateway.instances.requestDataDiskDetach(detached, disk.id);
    assert.equal(served(world, action), 2, 'not attached, as the instance just read says: nothing is sent');
  });
});

void describe('armCompute: resources the run named (newName): the PUT goes without a read', () => {
  const own = ownWorld();
  const snapshotRead = 'Microsoft.Compute/snapshots/read';
  const snapshotWrite = 'Microsoft.Compute/snapshots/write';
  const versionRead = 'Microsoft.Compute/galleries/images/versions/read';
  const versionWrite = 'Microsoft.Compute/galleries/images/versions/write';

  async function snapshotOf(
    name: string,
    instanceId: string,
  ): Promise<Parameters<ComputePorts['snapshots']['request']>[0]> {
    const instance = await own.gateway.instances.get(uniform, instanceId);
    return {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: RG,
      name,
      location: instance.location,
      sourceDiskId: instance.osDiskId ?? '',
      incremental: false,
      tags: {},
      newName: true,
    };
  }

  void it('a snapshot: one PUT, no read; asked again, ARM takes it as an update; another source is refused', async () => {
    const { world, gateway } = own;
    const request = await snapshotOf('snap-new-name', '0');

    await gateway.snapshots.request(request);
    assert.equal(served(world, snapshotRead), 0, 'nothing read before the PUT');
    assert.deepEqual(world.log.statuses(snapshotWrite), [202]);
    // A retry of the same request (its first answer lost): the disk RP answers the unchanged PUT 200.
    await gateway.snapshots.request(request);
    assert.deepEqual(world.log.statuses(snapshotWrite), [202, 200]);

    const other = await snapshotOf('snap-new-name', '1');
    await assert.rejects(gateway.snapshots.request(other), (error: unknown) => {
      assert.ok(error instanceof TerminalError, String(error));
      assert.equal(error.code, 'SnapshotNameTaken', 'the conflict is explained by the read');
      return true;
    });
    assert.equal(served(world, snapshotRead), 1, 'read only to explain the conflict');
  });

  void it('a copy disk: one PUT, no read', async () => {
    const { world, gateway } = own;
    world.clock.advance(world.latency.snapshotCreateSeconds + 1);
    const snapshot = await gateway.snapshots.get(SUBSCRIPTION, RG, 'snap-new-name');
    const before = served(world, 'Microsoft.Compute/disks/read');

    await gateway.disks.requestFromSnapshot({
      subscriptionId: SUBSCRIPTION,
      resourceGroup: RG,
      name: 'copy-new-name',
      location: snapshot.location,
      sourceSnapshotId: snapshot.id,
      skuName: 'StandardSSD_LRS',
      tags: {},
      newName: true,
    });

    assert.equal(served(world, 'Microsoft.Compute/disks/read'), before, 'nothing read before the PUT');
    assert.deepEqual(world.log.statuses('Microsoft.Compute/disks/write'), [202]);
    assert.equal((await gateway.disks.get(SUBSCRIPTION, RG, 'copy-new-name')).provisioningState, 'Creating');
  });

  void it('an image version: one PUT, no read; a retry while it is made meets 409 and is judged done', async () => {
    const { world, gateway } = own;
    await world.settle(gateway.gallery.ensure(gallery, 'westeurope', {}));
    await world.settle(gateway.gallery.ensureImageDefinition(definition, 'westeurope', spec));
    const snapshot = await gateway.snapshots.get(SUBSCRIPTION, RG, 'snap-new-name');
    const request = {
      ref: { ...definition, versionName: '20261126.1000.1' },
      location: 'westeurope',
      sourceId: snapshot.id,
      storageAccountType: 'Standard_LRS' as const,
      extraRegions: [],
      excludeFromLatest: true,
      tags: {},
      newName: true,
    };

    await gateway.imageVersions.request(request);
    assert.equal(served(world, versionRead), 0, 'nothing read before the PUT');
    assert.deepEqual(world.log.statuses(versionWrite), [201]);

    await gateway.imageVersions.request(request);
    assert.deepEqual(world.log.statuses(versionWrite), [201, 409], 'ARM refuses a PUT while it is made');
    assert.equal(served(world, versionRead), 1, 'the conflict was explained by one read');
    assert.equal((await gateway.imageVersions.get(request.ref)).provisioningState, 'Creating');

    const { id: otherSource } = await gateway.instances.get(uniform, '1').then(async (instance) => {
      await gateway.snapshots.request({
        subscriptionId: SUBSCRIPTION,
        resourceGroup: RG,
        name: 'snap-other',
        location: instance.location,
        sourceDiskId: instance.osDiskId ?? '',
        incremental: false,
        tags: {},
      });
      world.clock.advance(world.latency.snapshotCreateSeconds + 1);
      return gateway.snapshots.get(SUBSCRIPTION, RG, 'snap-other');
    });
    world.clock.advance(world.latency.imageVersionCreateSeconds + 1);
    await assert.rejects(
      gateway.imageVersions.request({ ...request, sourceId: otherSource }),
      (error: unknown) => error instanceof TerminalError && error.code === 'ImageVersionNameTaken',
    );
  });

  void it('a conflict with nothing of that name (a quota) is the answer, not a reason to PUT again', async () => {
    const { world, gateway } = own;
    const request = await snapshotOf('snap-over-quota', '1');
    const writes = world.log.statuses(snapshotWrite).length;
    world.faults.inject(snapshotWrite, {
      status: 409,
      code: 'OperationNotAllowed',
      message:
        'Operation could not be completed as it results in exceeding approved Total Regional Snapshots quota.',
    });

    await assert.rejects(gateway.snapshots.request(request), (error: unknown) => {
      assert.ok(error instanceof TerminalError, String(error));
      assert.match(error.message, /^requesting snapshot rg-k8s\/snap-over-quota: .*quota/);
      return true;
    });
    assert.equal(world.log.statuses(snapshotWrite).length - writes, 1, 'one PUT');
    await assert.rejects(gateway.snapshots.get(SUBSCRIPTION, RG, 'snap-over-quota'), NotFoundError);
  });
});
