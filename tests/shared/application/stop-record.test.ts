// The stop record's write and removal on the scale set's tags: the removal starts from what the write
// left, and the write from what the leftovers' read saw (one conditional write, no read); each reads
// the model again only when someone wrote it since.
// A CAPZ pool's record on the pool lease: written only by the lease's holder, removed by anyone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { acquirePoolLease, releasePoolLease } from '../../../shared/application/pool-lease.js';
import {
  clearLeaseStopRecord,
  clearStopRecord,
  recordStop,
  recordStopOnLease,
} from '../../../shared/application/stop-record.js';
import { isTerminal } from '../../../shared/domain/errors.js';
import { LEASE_ANNOTATIONS } from '../../../shared/domain/ownership.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { FakeCompute } from '../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';
import { DEFAULT_POOL } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

const REF: ScaleSetRef = {
  subscriptionId: DEFAULT_POOL.subscriptionId,
  resourceGroup: DEFAULT_POOL.resourceGroup,
  name: 'vmss-pool',
};
const RECORD = { instanceId: '3', runId: 'run-1' };

function world(): FakeCompute {
  const compute = new FakeCompute({ now: () => 0 });
  compute.addScaleSet(aScaleSet({ ...REF, tags: { owner: 'team' } }));
  return compute;
}

async function tagsOf(compute: FakeCompute): Promise<Readonly<Record<string, string>>> {
  return (await compute.scaleSets.get(REF)).tags;
}

void describe('stop record on the scale set', () => {
  void it("is removed from what its write left: one conditional write, the model's other tags kept", async () => {
    const compute = world();
    const written = await recordStop(compute, REF, RECORD);
    assert.deepEqual(written.tags, { owner: 'team', 'vmss-prototype.stopped.3': 'run-1' });
    assert.equal(written.etag, (await compute.scaleSets.get(REF)).etag);
    const before = compute.calls.length;
    await clearStopRecord(compute, REF, RECORD.instanceId, RECORD.runId, written);
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.requestChange'],
      'no read of the model',
    );
    assert.deepEqual(await tagsOf(compute), { owner: 'team' });
  });

  void it('reads the model again when the scale set was written since the record (412)', async () => {
    const compute = world();
    const written = await recordStop(compute, REF, RECORD);
    compute.changeScaleSetElsewhere(REF);
    const before = compute.calls.length;
    await clearStopRecord(compute, REF, RECORD.instanceId, RECORD.runId, written);
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.requestChange', 'scaleSets.get', 'scaleSets.requestChange'],
    );
    assert.deepEqual(await tagsOf(compute), { owner: 'team' });
  });

  void it('is written from the tags and etag read before (known): one conditional write, no read', async () => {
    const compute = world();
    const read = await compute.scaleSets.get(REF);
    assert.ok(read.etag !== undefined);
    const before = compute.calls.length;
    const written = await recordStop(compute, REF, RECORD, { tags: read.tags, etag: read.etag });
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.requestChange'],
      'no read of the model',
    );
    assert.deepEqual(await tagsOf(compute), { owner: 'team', 'vmss-prototype.stopped.3': 'run-1' });
    assert.equal(written.etag, (await compute.scaleSets.get(REF)).etag);
  });

  void it('reads the model when what was known is stale (412), keeping what was written since', async () => {
    const compute = world();
    const read = await compute.scaleSets.get(REF);
    assert.ok(read.etag !== undefined);
    await compute.scaleSets.requestChange(REF, { tags: { owner: 'team', added: 'since' } });
    const before = compute.calls.length;
    await recordStop(compute, REF, RECORD, { tags: read.tags, etag: read.etag });
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.requestChange', 'scaleSets.get', 'scaleSets.requestChange'],
    );
    assert.deepEqual(await tagsOf(compute), {
      owner: 'team',
      added: 'since',
      'vmss-prototype.stopped.3': 'run-1',
    });
  });

  void it('reads the model first without what the write left (a run recorded before it was kept)', async () => {
    const compute = world();
    await recordStop(compute, REF, RECORD);
    const before = compute.calls.length;
    await clearStopRecord(compute, REF, RECORD.instanceId, RECORD.runId);
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.get', 'scaleSets.requestChange'],
    );
    assert.deepEqual(await tagsOf(compute), { owner: 'team' });
  });
});

const LEASE = { namespace: 'vmss-prototype', name: 'vmssp-capz-pool-0a1b2c3d' };
const NOW = new Date('2026-11-22T12:00:00Z');
const RUNNER = { kind: 'function-app', host: 'vmssp-app' };

async function heldLease(runId: string): Promise<FakeKubernetes> {
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  const purpose = {
    cluster: 'prod',
    pool: 'capz-pool',
    instanceId: 'refresh:prod:capz-pool',
    purpose: 'refresh',
  };
  await acquirePoolLease(kube, LEASE, { runId, runner: RUNNER, purpose }, NOW);
  return kube;
}

function leaseRecordOf(kube: FakeKubernetes): string | undefined {
  return kube.leases.lease(LEASE.namespace, LEASE.name)?.annotations[LEASE_ANNOTATIONS.stoppedVms];
}

void describe('stop record on the pool lease (a CAPZ pool)', () => {
  void it('is written by the holder, outlives its release and is removed for its run only', async () => {
    const kube = await heldLease('run-1');
    await recordStopOnLease(kube, { ...LEASE, runId: 'run-1' }, RECORD, NOW);
    await recordStopOnLease(kube, { ...LEASE, runId: 'run-1' }, RECORD, NOW);
    assert.equal(leaseRecordOf(kube), '{"3":"run-1"}', 'written once however often asked');
    await releasePoolLease(kube, LEASE, 'run-1', NOW);
    assert.equal(leaseRecordOf(kube), '{"3":"run-1"}', 'a released lease keeps it for the reaper');
    await clearLeaseStopRecord(kube, LEASE, '3', NOW, 'run-2');
    assert.equal(leaseRecordOf(kube), '{"3":"run-1"}', "another run's removal leaves it");
    await clearLeaseStopRecord(kube, LEASE, '3', NOW);
    assert.equal(leaseRecordOf(kube), '');
    const before = kube.calls.length;
    await clearLeaseStopRecord(kube, LEASE, '3', NOW);
    assert.deepEqual(
      kube.calls.slice(before).map((call) => call.method),
      ['leases.get'],
      'nothing left to remove: no write',
    );
  });

  void it('is refused to a run that does not hold the lease, and writes nothing', async () => {
    const kube = await heldLease('run-2');
    await assert.rejects(recordStopOnLease(kube, { ...LEASE, runId: 'run-1' }, RECORD, NOW), (error) =>
      isTerminal(error),
    );
    assert.equal(leaseRecordOf(kube), undefined);
  });

  void it('has nothing to remove from an absent lease', async () => {
    const kube = new FakeKubernetes({ now: () => NOW.getTime() });
    await clearLeaseStopRecord(kube, LEASE, '3', NOW);
    assert.equal(kube.leases.lease(LEASE.namespace, LEASE.name), undefined);
  });
});
