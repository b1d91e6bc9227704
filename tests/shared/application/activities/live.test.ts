// Live capture's attach and detach requests (requestCopyAttach, requestCopyDetach): judged on the run's
// last view of the donor's disks when it hands one over (no read first), judged again on a fresh read
// only when ARM refuses the request; a transient failure is the retry's, not a reason to read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LIVE_ACTIVITIES } from '../../../../shared/application/activities/live.js';
import { acquirePoolLease } from '../../../../shared/application/pool-lease.js';
import type { RefreshDependencies } from '../../../../shared/application/refresh-dependencies.js';
import { TerminalError, TransientError } from '../../../../shared/domain/errors.js';
import type { ScaleSetRef } from '../../../../shared/domain/resource-id.js';
import { FakeCompute } from '../../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../../../shared/ports/fake/kubernetes/index.js';
import { DEFAULT_POOL } from '../../../builders/node.js';
import { aScaleSet } from '../../../builders/scale-set.js';

const NOW = new Date('2026-12-05T12:00:00Z');
const REF: ScaleSetRef = {
  subscriptionId: DEFAULT_POOL.subscriptionId,
  resourceGroup: DEFAULT_POOL.resourceGroup,
  name: 'vmss-pool',
};
const DISK = `/subscriptions/${DEFAULT_POOL.subscriptionId}/resourceGroups/${DEFAULT_POOL.resourceGroup}/providers/Microsoft.Compute/disks/vmssp-copy-pool`;
const LEASE = { namespace: 'vmss-prototype', name: 'vmssp-pool' };
const FENCE = { ...LEASE, runId: 'run-1' };

async function world(): Promise<{ compute: FakeCompute; deps: RefreshDependencies; resourceId: string }> {
  const compute = new FakeCompute({ now: () => NOW.getTime() });
  compute.addScaleSet(aScaleSet(REF));
  const { resourceId } = compute.addInstance(REF, '1');
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
  return { compute, deps, resourceId };
}

function methodsSince(compute: FakeCompute, from: number): string[] {
  return compute.calls
    .slice(from)
    .map((call) => call.method)
    .filter((method) => method.startsWith('instances.'));
}

/** The attach of the copy at LUN 0, with the run's view of the donor's disks when given. */
function attachInput(seen?: { resourceId: string; dataDisks: [] }) {
  return {
    cluster: 'c1',
    scaleSet: REF,
    instanceId: '1',
    diskId: DISK,
    lun: 0,
    fence: FENCE,
    ...(seen === undefined ? {} : { seen }),
  };
}

const refused = (): TerminalError => new TerminalError('OperationNotAllowed', 'already attached to the VM');

void describe('requestCopyAttach and requestCopyDetach', () => {
  void it('an attach from the run’s last view is asked for without a read', async () => {
    const { compute, deps, resourceId } = await world();
    const from = compute.calls.length;
    compute.nextError('instances.requestDataDiskAttach', new TransientError('Throttled', 'throttled'));
    await assert.rejects(
      LIVE_ACTIVITIES.requestCopyAttach.run(deps, attachInput({ resourceId, dataDisks: [] })),
      TransientError,
    );
    // A transient failure goes to the activity's retry: nothing read in between.
    assert.deepEqual(methodsSince(compute, from), ['instances.requestDataDiskAttach']);
  });

  void it('an attach refused on a past view is judged again on a read, then asked once more', async () => {
    const { compute, deps, resourceId } = await world();
    const from = compute.calls.length;
    compute.nextError('instances.requestDataDiskAttach', refused(), refused());
    await assert.rejects(
      LIVE_ACTIVITIES.requestCopyAttach.run(deps, attachInput({ resourceId, dataDisks: [] })),
      /already attached/,
    );
    assert.deepEqual(methodsSince(compute, from), [
      'instances.requestDataDiskAttach',
      'instances.get',
      'instances.requestDataDiskAttach',
    ]);
  });

  void it('without a view the instance is read first, as before', async () => {
    const { compute, deps } = await world();
    const from = compute.calls.length;
    compute.nextError('instances.requestDataDiskAttach', refused());
    await assert.rejects(LIVE_ACTIVITIES.requestCopyAttach.run(deps, attachInput()), /already attached/);
    assert.deepEqual(methodsSince(compute, from), ['instances.get', 'instances.requestDataDiskAttach']);
  });

  void it('a detach from a view that lists the disk is asked for unread; one not listed is a no-op', async () => {
    const { compute, deps, resourceId } = await world();
    const from = compute.calls.length;
    await LIVE_ACTIVITIES.requestCopyDetach.run(deps, {
      cluster: 'c1',
      scaleSet: REF,
      instanceId: '1',
      diskId: DISK,
      seen: { resourceId, dataDisks: [{ lun: 0, diskId: DISK, detaching: false }] },
    });
    // The fake's instance has no such disk: the request itself finds nothing to detach.
    assert.deepEqual(methodsSince(compute, from), ['instances.requestDataDiskDetach']);
    const [target] = (compute.calls.at(-1)?.args ?? []) as [{ resourceId: string; dataDisks: unknown[] }];
    assert.equal(target.resourceId, resourceId);
    assert.equal(target.dataDisks.length, 1, 'judged on the view handed over');
  });
});
