// The stop record's write and removal on the scale set's tags: the removal starts from what the write
// left (one conditional write, no read) and reads the model again only when someone wrote it since.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clearStopRecord, recordStop } from '../../../shared/application/stop-record.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { FakeCompute } from '../../../shared/ports/fake/compute/index.js';
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
