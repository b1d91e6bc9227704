/**
 * The fake management cluster keeps the MachinePools port's contract: conditional template writes,
 * idempotent canary creation and deletion, deletion refused for a real pool, recorded calls.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { NotFoundError, TerminalError, TransientError } from '../../../../../shared/domain/errors.js';
import type { CanaryPoolSpec } from '../../../../../shared/ports/cluster-api/machine-pools.js';
import { FakeClusterApi } from '../../../../../shared/ports/fake/cluster-api/machine-pools.js';

const NS = 'default';
const OLD_IMAGE = { computeGallery: { gallery: 'capi', name: 'ubuntu', version: '1.0.0' } };
const NEW_IMAGE = {
  id: '/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/galleries/g/images/d/versions/2.0.0',
};

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

void describe('FakeMachinePools', () => {
  const fake = new FakeClusterApi({ now: () => 0 });
  const pools = fake.machinePools;

  beforeEach(() => {
    fake.reset();
    pools.seedPool({ namespace: NS, name: 'pool0', replicas: 3, autoscaled: true, image: OLD_IMAGE });
  });

  void it('finds the pool by its scale set, or answers NotFoundError', async () => {
    const view = await pools.findByScaleSet(NS, 'pool0');
    assert.equal(view.name, 'pool0');
    assert.equal(view.replicas, 3);
    assert.equal(view.autoscaled, true);
    assert.deepEqual(view.image, {
      kind: 'compute-gallery',
      gallery: 'capi',
      name: 'ubuntu',
      version: '1.0.0',
    });
    assert.deepEqual(view.strategy, { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' });

    const error = await rejection(pools.findByScaleSet(NS, 'missing'));
    assert.ok(error instanceof NotFoundError);
    assert.equal(error.code, 'AzureMachinePoolNotFound');
  });

  void it('writes the image only at the version read: conflict once someone else wrote', async () => {
    const { resourceVersion } = await pools.findByScaleSet(NS, 'pool0');
    pools.touch(NS, 'pool0');

    assert.equal(await pools.setTemplateImage(NS, 'pool0', NEW_IMAGE, resourceVersion), 'conflict');
    assert.deepEqual(pools.pool(NS, 'pool0')?.imageFields, OLD_IMAGE);

    const fresh = await pools.findByScaleSet(NS, 'pool0');
    assert.equal(await pools.setTemplateImage(NS, 'pool0', NEW_IMAGE, fresh.resourceVersion), 'set');
    const after = pools.pool(NS, 'pool0');
    assert.deepEqual(after?.imageFields, NEW_IMAGE, 'the whole image replaced');
    assert.notEqual(after.resourceVersion, fresh.resourceVersion);
    assert.equal(await pools.setTemplateImage(NS, 'pool0', NEW_IMAGE, fresh.resourceVersion), 'conflict');
  });

  const canary: CanaryPoolSpec = {
    namespace: NS,
    source: { machinePool: 'pool0', azureMachinePool: 'pool0' },
    name: 'pool0-canary',
    replicas: 1,
    image: NEW_IMAGE,
    labels: { 'vmss-prototype.io/run': 'r1' },
  };

  void it('creates a canary once, lists it by label, deletes it idempotently', async () => {
    await pools.createCanaryPool(canary);
    await pools.createCanaryPool(canary);

    const view = await pools.findByScaleSet(NS, 'pool0-canary');
    assert.equal(view.replicas, 1);
    assert.equal(view.autoscaled, false);
    assert.deepEqual(view.imageFields, NEW_IMAGE);
    assert.deepEqual(await pools.listCanaryPools(NS, { 'vmss-prototype.io/run': 'r1' }), ['pool0-canary']);
    assert.deepEqual(await pools.listCanaryPools(NS, {}), ['pool0-canary'], 'a real pool is never listed');
    assert.deepEqual(await pools.listCanaryPools(NS, { 'vmss-prototype.io/run': 'r2' }), []);

    await pools.deleteCanaryPool(NS, 'pool0-canary');
    await pools.deleteCanaryPool(NS, 'pool0-canary');
    assert.deepEqual(pools.objects(NS, 'pool0-canary'), {
      machinePool: false,
      azureMachinePool: false,
      kubeadmConfig: false,
    });
    assert.equal(fake.callsTo('machinePools.createCanaryPool').length, 2);
    assert.equal(fake.callsTo('machinePools.deleteCanaryPool').length, 2);
  });

  void it('refuses to delete a real pool and leaves it whole', async () => {
    const error = await rejection(pools.deleteCanaryPool(NS, 'pool0'));

    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'NotACanaryPool');
    assert.deepEqual(pools.objects(NS, 'pool0'), {
      machinePool: true,
      azureMachinePool: true,
      kubeadmConfig: true,
    });
  });

  void it('needs the source pool to clone', async () => {
    const error = await rejection(
      pools.createCanaryPool({ ...canary, source: { machinePool: 'gone', azureMachinePool: 'gone' } }),
    );
    assert.ok(error instanceof NotFoundError);
  });

  void it('returns machines as set, and queued errors one call at a time', async () => {
    pools.setMachines(NS, 'pool0', [
      {
        name: 'pool0-0',
        instanceId: '0',
        ready: true,
        latestModelApplied: false,
        createdAt: '2026-11-27T00:00:00Z',
        deleting: false,
      },
    ]);
    fake.nextError('machinePools.listMachines', new TransientError('KubeThrottled', 'listing: throttled'));

    assert.ok((await rejection(pools.listMachines(NS, 'pool0'))) instanceof TransientError);
    assert.deepEqual(
      (await pools.listMachines(NS, 'pool0')).map((m) => m.name),
      ['pool0-0'],
    );
    assert.deepEqual(await pools.listMachines(NS, 'other'), []);
  });
});
