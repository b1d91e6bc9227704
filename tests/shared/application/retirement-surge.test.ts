// A retirement's surge is an instance the run created, told by id from an outsider's scale-out (issue 50):
// it asks one more than the capacity it reads, whatever an autoscaler did since the run planned; it records
// the instance ids before its scale-out and the capacity it asked; a retry asks for nothing more; a run
// that lost its lease asks for nothing; and a dead run's record names no outsider's instance as its surge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { acquirePoolLease } from '../../../shared/application/pool-lease.js';
import type { ClusterHandle } from '../../../shared/application/refresh-dependencies.js';
import { readRetirementLeftover, startSurge } from '../../../shared/application/retirement-surge.js';
import { CONCURRENT_CHANGE, TerminalError, TransientError } from '../../../shared/domain/errors.js';
import { LEASE_ANNOTATIONS } from '../../../shared/domain/ownership.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import type { RetirementRecord } from '../../../shared/domain/retirement-record.js';
import { parseRetirementRecord, writeRetirementRecord } from '../../../shared/domain/retirement-record.js';
import { FakeCompute } from '../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';
import { DEFAULT_POOL } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

const LEASE = { namespace: 'vmss-prototype', name: 'vmssp-pool1-abc' };
const NOW = new Date('2026-11-20T10:00:00Z');
const SCALE_SET: ScaleSetRef = {
  subscriptionId: DEFAULT_POOL.subscriptionId,
  resourceGroup: DEFAULT_POOL.resourceGroup,
  name: DEFAULT_POOL.name,
};
const RECORD: RetirementRecord = {
  run: 'run-1',
  node: 'node-0',
  instanceId: '0',
  priorCapacity: 3,
  startedAt: NOW.toISOString(),
};
const FENCE = { ...LEASE, runId: 'run-1' };

async function world(holder = 'run-1') {
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  const compute = new FakeCompute({ now: () => NOW.getTime() });
  compute.addScaleSet(aScaleSet());
  for (const id of ['0', '1', '2']) compute.addInstance(SCALE_SET, id);
  await acquirePoolLease(
    kube,
    LEASE,
    {
      runId: holder,
      runner: { kind: 'cli', host: 'laptop' },
      purpose: { cluster: 'prod', pool: 'pool1', instanceId: 'retire:prod:pool1', purpose: 'retirement' },
    },
    NOW,
  );
  const handle = { kube, compute } as unknown as ClusterHandle;
  return { kube, compute, handle };
}

async function recordOn(kube: FakeKubernetes): Promise<ReturnType<typeof parseRetirementRecord>> {
  return parseRetirementRecord(
    (await kube.leases.get(LEASE.namespace, LEASE.name))?.annotations[LEASE_ANNOTATIONS.retirement],
  );
}

function capacityAsks(compute: FakeCompute): unknown[] {
  return compute.calls
    .filter((call) => call.method === 'scaleSets.requestChange')
    .map((call) => (call.args[1] as { capacity?: number }).capacity);
}

void describe('startSurge', () => {
  void it('asks one more than the capacity it reads, even above the prior capacity (an outsider scaled out)', async () => {
    const { kube, compute, handle } = await world();
    // An autoscaler added instance 3 after the run planned at capacity 3.
    compute.addInstance(SCALE_SET, '3');

    const started = await startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW);

    assert.deepEqual(capacityAsks(compute), [5]);
    assert.deepEqual(started, { baseline: ['0', '1', '2', '3'], capacityAsked: 5 });
    assert.deepEqual(await recordOn(kube), { ...RECORD, baseline: ['0', '1', '2', '3'], capacityAsked: 5 });
  });

  void it('a retry once the scale-out was asked asks for nothing more', async () => {
    const { compute, handle } = await world();
    const first = await startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW);

    const again = await startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW);

    assert.deepEqual(again, first);
    assert.deepEqual(capacityAsks(compute), [4]);
  });

  void it('without a surge of its own it records the baseline and asks for nothing, reading no model', async () => {
    const { kube, compute, handle } = await world();

    const started = await startSurge(handle, FENCE, SCALE_SET, RECORD, false, NOW);

    assert.deepEqual(started, { baseline: ['0', '1', '2'] });
    assert.deepEqual(capacityAsks(compute), []);
    // keep-size's retirement (the canary is the spare): the model is read only for a capacity to ask.
    assert.equal(compute.calls.filter((call) => call.method === 'scaleSets.get').length, 0);
    assert.deepEqual(await recordOn(kube), { ...RECORD, baseline: ['0', '1', '2'] });
  });

  void it('without a surge of its own, given the instance ids the plan listed, reads no instance either', async () => {
    const { kube, compute, handle } = await world();

    const started = await startSurge(handle, FENCE, SCALE_SET, RECORD, false, NOW, ['0', '1', '2', '3']);

    assert.deepEqual(started, { baseline: ['0', '1', '2', '3'] });
    assert.deepEqual(
      compute.calls.filter((call) => call.method === 'instances.list' || call.method === 'scaleSets.get'),
      [],
    );
    assert.deepEqual(await recordOn(kube), { ...RECORD, baseline: ['0', '1', '2', '3'] });
  });

  void it('with a surge of its own it lists the instances whatever the plan saw', async () => {
    const { compute, handle } = await world();

    const started = await startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW, ['0']);

    assert.deepEqual(started.baseline, ['0', '1', '2']);
    assert.deepEqual(capacityAsks(compute), [4]);
  });

  void it('a run that lost its lease asks for nothing (LeaseLost)', async () => {
    const { compute, handle } = await world('run-2');

    await assert.rejects(
      startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW),
      (error: unknown) => error instanceof TerminalError && error.code === 'LeaseLost',
    );
    assert.deepEqual(capacityAsks(compute), []);
  });

  void it('a scale set changed between its read and the scale-out is read again (transient)', async () => {
    const { kube, compute, handle } = await world();
    compute.nextError(
      'scaleSets.requestChange',
      new TerminalError(CONCURRENT_CHANGE, 'the resource was changed by someone else since it was read'),
    );

    await assert.rejects(
      startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW),
      (error: unknown) => error instanceof TransientError && error.code === CONCURRENT_CHANGE,
    );
    // Nothing asked yet: the retry reads and asks afresh.
    const pending = await recordOn(kube);
    assert.ok(typeof pending === 'object');
    assert.equal(pending.capacityAsked, undefined);
    compute.addInstance(SCALE_SET, '3');
    assert.deepEqual(await startSurge(handle, FENCE, SCALE_SET, RECORD, true, NOW), {
      baseline: ['0', '1', '2', '3'],
      capacityAsked: 5,
    });
  });
});

void describe("readRetirementLeftover: a dead run's surge", () => {
  async function leftover(
    record: RetirementRecord,
    extra: readonly string[],
    deleting: readonly string[] = [],
  ) {
    const { kube, compute, handle } = await world('run-2');
    for (const id of extra) compute.addInstance(SCALE_SET, id, { createdAt: NOW.toISOString() });
    for (const id of deleting) {
      compute.addInstance(SCALE_SET, id, { createdAt: NOW.toISOString(), provisioningState: 'Deleting' });
    }
    const lease = await kube.leases.get(LEASE.namespace, LEASE.name);
    assert.ok(lease);
    await kube.leases.replace(
      {
        ...lease,
        annotations: { ...lease.annotations, [LEASE_ANNOTATIONS.retirement]: writeRetirementRecord(record) },
      },
      lease.resourceVersion ?? '',
    );
    return readRetirementLeftover(handle, LEASE, SCALE_SET, 'run-2');
  }

  void it('no scale-out asked: an instance an outsider added is not its surge', async () => {
    const found = await leftover({ ...RECORD, baseline: ['0', '1', '2'] }, ['3']);
    assert.ok(typeof found === 'object');
    assert.equal(found.surge, undefined);
  });

  void it('its scale-out asked: a new instance not in the baseline is its surge', async () => {
    const found = await leftover({ ...RECORD, baseline: ['0', '1', '2'], capacityAsked: 4 }, ['3']);
    assert.ok(typeof found === 'object');
    assert.equal(found.surge?.instanceId, '3');
  });

  void it('an instance noted as its surge is the one, whatever else was added', async () => {
    const found = await leftover(
      { ...RECORD, baseline: ['0', '1', '2'], capacityAsked: 4, surgeInstanceId: '3' },
      ['3', '4'],
    );
    assert.ok(typeof found === 'object');
    assert.equal(found.surge?.instanceId, '3');
  });

  void it("the retired node's instance being deleted: the surge is its replacement, not given back", async () => {
    const found = await leftover(
      { ...RECORD, baseline: ['0', '1', '2'], capacityAsked: 4, surgeInstanceId: '3' },
      ['3'],
      ['0'],
    );
    assert.ok(typeof found === 'object');
    assert.equal(found.retiredInstanceExists, false);
    assert.equal(found.surge?.instanceId, '3');
  });

  void it('a surge being deleted already is not named to give back again', async () => {
    const found = await leftover(
      { ...RECORD, baseline: ['0', '1', '2'], capacityAsked: 4, surgeInstanceId: '3' },
      [],
      ['3'],
    );
    assert.ok(typeof found === 'object');
    assert.equal(found.retiredInstanceExists, true);
    assert.equal(found.surge, undefined);
  });
});
