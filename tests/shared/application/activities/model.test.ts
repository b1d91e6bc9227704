// The model update's request (requestScaleSetImageUpdate): from the model as the run's last write left
// it, one conditional PATCH and no read; a model written since is read and decided again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { MODEL_ACTIVITIES } from '../../../../shared/application/activities/model.js';
import { acquirePoolLease } from '../../../../shared/application/pool-lease.js';
import type { RefreshDependencies } from '../../../../shared/application/refresh-dependencies.js';
import type { ScaleSetRef } from '../../../../shared/domain/resource-id.js';
import { FakeCompute } from '../../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../../../shared/ports/fake/kubernetes/index.js';
import { DEFAULT_POOL } from '../../../builders/node.js';
import { aScaleSet } from '../../../builders/scale-set.js';

const NOW = new Date('2026-12-03T12:00:00Z');
const REF: ScaleSetRef = {
  subscriptionId: DEFAULT_POOL.subscriptionId,
  resourceGroup: DEFAULT_POOL.resourceGroup,
  name: 'vmss-pool',
};
const DEFINITION = `/subscriptions/${DEFAULT_POOL.subscriptionId}/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/pool`;
const VERSION = `${DEFINITION}/versions/2026.1203.1200`;
const LEASE = { namespace: 'vmss-prototype', name: 'vmssp-pool' };
const FENCE = { ...LEASE, runId: 'run-1' };
const RECORD_TAG = 'vmss-prototype.canary-run';

async function world(): Promise<{ compute: FakeCompute; deps: RefreshDependencies }> {
  const compute = new FakeCompute({ now: () => NOW.getTime() });
  compute.addScaleSet(aScaleSet({ ...REF, tags: { owner: 'team' } }));
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  const runner = { kind: 'function-app', host: 'vmssp-app' };
  const purpose = { cluster: 'c1', pool: 'pool', instanceId: 'refresh:c1:pool', purpose: 'refresh' };
  await acquirePoolLease(kube, LEASE, { runId: FENCE.runId, runner, purpose }, NOW);
  const handle = { compute, kube } as unknown as Awaited<ReturnType<RefreshDependencies['cluster']>>;
  const deps: RefreshDependencies = {
    clusterNames: ['c1'],
    cluster: () => Promise.resolve(handle),
    now: () => NOW,
    runner,
  };
  return { compute, deps };
}

/** The model as the canary's pin and record left it: the version pinned, the record in the tags. */
async function pinned(compute: FakeCompute): Promise<{ tags: Record<string, string>; etag: string }> {
  const tags = { owner: 'team', [RECORD_TAG]: 'run-1' };
  compute.changeScaleSetElsewhere(REF, VERSION);
  const written = await compute.scaleSets.requestChange(REF, { tags });
  assert.ok(written.etag !== undefined);
  return { tags, etag: written.etag };
}

function input(known: { tags: Record<string, string>; etag: string }) {
  return {
    cluster: 'c1',
    scaleSet: REF,
    imageId: DEFINITION,
    expectedImages: [{ id: VERSION }],
    fence: FENCE,
    known: { ...known, imageId: VERSION },
  };
}

void describe('requestScaleSetImageUpdate', () => {
  void it('writes from what the run last wrote: one PATCH with its etag, no read', async () => {
    const { compute, deps } = await world();
    const known = await pinned(compute);
    const before = compute.calls.length;
    const result = await MODEL_ACTIVITIES.requestScaleSetImageUpdate.run(deps, input(known));
    assert.deepEqual(result, { kind: 'requested' });
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.requestImageUpdate'],
    );
    const [, update] = (compute.calls.at(-1)?.args ?? []) as [unknown, Record<string, unknown>];
    assert.equal(update['imageId'], DEFINITION);
    assert.equal(update['ifMatch'], known.etag);
    assert.deepEqual(update['tags'], { owner: 'team' }, 'the canary record goes with the write');
    assert.deepEqual((await compute.scaleSets.get(REF)).tags, { owner: 'team' });
  });

  void it('reads the model and decides again when it was written since (412)', async () => {
    const { compute, deps } = await world();
    const known = await pinned(compute);
    await compute.scaleSets.requestChange(REF, { tags: { ...known.tags, added: 'since' } });
    const before = compute.calls.length;
    const result = await MODEL_ACTIVITIES.requestScaleSetImageUpdate.run(deps, input(known));
    assert.deepEqual(result, { kind: 'requested' });
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['scaleSets.requestImageUpdate', 'scaleSets.get', 'scaleSets.requestImageUpdate'],
    );
    assert.deepEqual((await compute.scaleSets.get(REF)).tags, { owner: 'team', added: 'since' });
  });

  void it('reports an image another tool put there since, never overwriting it', async () => {
    const { compute, deps } = await world();
    const known = await pinned(compute);
    compute.changeScaleSetElsewhere(REF, `${DEFINITION}-other`);
    const result = await MODEL_ACTIVITIES.requestScaleSetImageUpdate.run(deps, input(known));
    assert.equal(result.kind, 'changed-elsewhere');
    assert.equal((await compute.scaleSets.get(REF)).imageReferenceFields?.['id'], `${DEFINITION}-other`);
  });
});
