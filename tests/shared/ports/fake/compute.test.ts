// The compute fake keeps the port's contract (not-found reads, no-op deletions, idempotent requests,
// ARM's refusals), moves long operations on with its clock, logs calls and fails on demand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isNotFound, isTransient, TransientError } from '../../../../shared/domain/errors.js';
import { FakeCompute } from '../../../../shared/ports/fake/compute/index.js';
import { aScaleSet } from '../../../builders/scale-set.js';

function setup(options: { regionsWithoutZrs?: string[] } = {}) {
  let now = 1_000_000;
  const compute = new FakeCompute({ now: () => now, ...options });
  const scaleSet = aScaleSet();
  compute.addScaleSet(scaleSet, [
    { name: 'cse', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
  ]);
  const instance = compute.addInstance(scaleSet, '0');
  return { compute, scaleSet, instance, advance: (ms: number) => (now += ms) };
}

const gallery = { subscriptionId: 's', resourceGroup: 'rg', galleryName: 'g' };
const definition = { ...gallery, imageName: 'img' };
const spec = {
  osType: 'Linux',
  osState: 'Generalized',
  hyperVGeneration: 'V2',
  architecture: 'x64',
  identifier: { publisher: 'p', offer: 'o', sku: 's' },
  tags: {},
} as const;

void describe('FakeCompute', () => {
  void it('powers an instance off and on again over time; requests are idempotent', async () => {
    const { compute, scaleSet, instance, advance } = setup();
    await compute.instances.requestPowerOff(instance);
    await compute.instances.requestPowerOff(instance);
    assert.equal((await compute.instances.get(scaleSet, '0')).powerState, 'stopping');
    advance(30_000);
    assert.equal((await compute.instances.get(scaleSet, '0')).powerState, 'stopped');
    await compute.instances.requestStart(instance);
    advance(30_000);
    assert.equal((await compute.instances.get(scaleSet, '0')).powerState, 'running');
    assert.equal(compute.callsTo('instances.requestPowerOff').length, 2);
  });

  void it('reads of missing resources are not-found; deleting them is a no-op', async () => {
    const { compute } = setup();
    await assert.rejects(compute.snapshots.get('s', 'rg', 'nope'), isNotFound);
    await compute.snapshots.requestDeletion('s', 'rg', 'nope');
    await assert.rejects(compute.imageVersions.get({ ...definition, versionName: '1.0.0' }), isNotFound);
  });

  void it('a snapshot is created, then deleted; a new one of the same name waits for the deletion', async () => {
    const { compute, advance } = setup();
    const request = {
      subscriptionId: 's',
      resourceGroup: 'rg',
      name: 'snap',
      location: 'westeurope',
      sourceDiskId: 'disk',
      incremental: false,
      tags: {},
    };
    await compute.snapshots.request(request);
    assert.equal((await compute.snapshots.get('s', 'rg', 'snap')).provisioningState, 'Creating');
    advance(60_000);
    assert.equal((await compute.snapshots.get('s', 'rg', 'snap')).provisioningState, 'Succeeded');
    await compute.snapshots.requestDeletion('s', 'rg', 'snap');
    await assert.rejects(compute.snapshots.request(request), isTransient);
    advance(15_000);
    assert.deepEqual(compute.snapshotsLeft(), []);
  });

  void it('image versions: created hidden, published, refused as ZRS where the region has no zones', async () => {
    const { compute, advance } = setup({ regionsWithoutZrs: ['West Europe'] });
    await compute.gallery.ensure(gallery, 'westeurope', {});
    await compute.gallery.ensureImageDefinition(definition, 'westeurope', spec);
    const ref = { ...definition, versionName: '2026.1122.120000' };
    const request = {
      ref,
      location: 'westeurope',
      sourceId: 'snap',
      extraRegions: [],
      excludeFromLatest: true,
      tags: {},
    };
    await assert.rejects(
      compute.imageVersions.request({ ...request, storageAccountType: 'Standard_ZRS' }),
      /ZRS/,
    );
    await compute.imageVersions.request({ ...request, storageAccountType: 'Standard_LRS' });
    advance(300_000);
    const built = await compute.imageVersions.get(ref);
    assert.deepEqual(
      [built.provisioningState, built.replicationState, built.excludeFromLatest],
      ['Succeeded', 'Completed', true],
    );
    // Answered Updating: the change applies after a while, as ARM may take it.
    assert.deepEqual(await compute.imageVersions.requestExclusion(ref, false), {
      provisioningState: 'Updating',
      excludeFromLatest: false,
    });
    advance(10_000);
    assert.equal((await compute.imageVersions.get(ref)).excludeFromLatest, false);
    assert.deepEqual(
      await compute.imageVersions.requestExclusion(ref, false),
      { provisioningState: 'Succeeded', excludeFromLatest: false },
      'nothing to change: the read says',
    );
  });

  void it('a model update applies after a while; extension deletions too', async () => {
    const { compute, scaleSet, advance } = setup();
    await compute.scaleSets.requestImageUpdate(scaleSet, {
      imageId: '/galleries/g/images/i',
      customDataBase64: 'Iw==',
    });
    assert.equal((await compute.scaleSets.get(scaleSet)).provisioningState, 'Updating');
    await compute.scaleSets.requestExtensionDeletion(scaleSet, 'cse');
    advance(15_000);
    const updated = await compute.scaleSets.get(scaleSet);
    assert.deepEqual(updated.imageReference, { kind: 'gallery', id: '/galleries/g/images/i' });
    assert.deepEqual(await compute.scaleSets.listExtensions(scaleSet), []);
  });

  void it('injected errors are one-shot, in order; reset forgets everything', async () => {
    const { compute, scaleSet } = setup();
    compute.nextError(
      'scaleSets.get',
      new TransientError('ArmThrottled', 'first'),
      new TransientError('ArmThrottled', 'second'),
    );
    await assert.rejects(compute.scaleSets.get(scaleSet), /first/);
    await assert.rejects(compute.scaleSets.get(scaleSet), /second/);
    await compute.scaleSets.get(scaleSet);
    assert.equal(compute.callsTo('scaleSets.get').length, 3);
    compute.reset();
    assert.equal(compute.calls.length, 0);
    await assert.rejects(compute.scaleSets.get(scaleSet), isNotFound);
  });
});
