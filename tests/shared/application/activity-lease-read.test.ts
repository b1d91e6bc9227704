// One pool-lease read per activity (issue 49): the cancel watch's read before the work also answers the
// activity's fence, so a fenced activity reads the lease once; the fence still refuses a lost lease, a
// later read or one after a lease write goes to the server, and a failed read is not shared.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { z } from 'zod';

import { defineActivity, runActivity } from '../../../shared/application/activities/activity.js';
import type { CancelWatch } from '../../../shared/application/pool-cancel.js';
import { withCancelWatch } from '../../../shared/application/pool-cancel.js';
import { acquirePoolLease, checkFence, renewPoolLease } from '../../../shared/application/pool-lease.js';
import type { ClusterHandle, RefreshDependencies } from '../../../shared/application/refresh-dependencies.js';
import { TransientError } from '../../../shared/domain/errors.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';

const LEASE = { namespace: 'vmss-prototype', name: 'vmssp-pool1-abc' };
const NOW = new Date('2026-11-20T10:00:00Z');
const WATCH: CancelWatch = { cluster: 'prod', ...LEASE, runId: 'run-1' };
const FENCE = { ...LEASE, runId: 'run-1' };

async function world(holder: string) {
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  await acquirePoolLease(
    kube,
    LEASE,
    {
      runId: holder,
      runner: { kind: 'cli', host: 'laptop' },
      purpose: { cluster: 'prod', pool: 'pool1', instanceId: 'refresh:prod:pool1', purpose: 'refresh' },
    },
    NOW,
  );
  const deps: RefreshDependencies = {
    clusterNames: ['prod'],
    cluster: () => Promise.resolve({ kube } as unknown as ClusterHandle),
    now: () => NOW,
    runner: { kind: 'test', host: 'lease-read-test' },
  };
  const before = kube.callsTo('leases.get').length;
  return { kube, deps, reads: () => kube.callsTo('leases.get').length - before };
}

/** An activity that fences `times` times, then "changes the pool" (counted). */
function fenced(times: number, changes: string[]) {
  return defineActivity('fencedChange', z.object({ what: z.string() }), async (deps, input) => {
    const { kube } = await deps.cluster('prod');
    for (let i = 0; i < times; i++) await checkFence(kube, FENCE, `changing ${input.what}`, deps.now());
    changes.push(input.what);
    return { done: true };
  });
}

void describe('one lease read per activity', () => {
  void it('a fenced activity with a cancel watch reads the lease once', async () => {
    const { deps, reads } = await world('run-1');
    const changes: string[] = [];
    const result = await runActivity(fenced(1, changes), deps, withCancelWatch({ what: 'x' }, WATCH));
    assert.deepEqual(result, { ok: true, value: { done: true } });
    assert.deepEqual(changes, ['x']);
    assert.equal(reads(), 1);
  });

  void it('the shared read still fences: a lease another run holds refuses the change', async () => {
    const { deps, reads } = await world('run-2');
    const changes: string[] = [];
    const result = await runActivity(fenced(1, changes), deps, withCancelWatch({ what: 'x' }, WATCH));
    assert.equal(result.ok === false && result.failure.code, 'LeaseLost');
    assert.deepEqual(changes, []);
    assert.equal(reads(), 1);
  });

  void it('only the first read is shared: a second fence reads the server', async () => {
    const { deps, reads } = await world('run-1');
    await runActivity(fenced(2, []), deps, withCancelWatch({ what: 'x' }, WATCH));
    assert.equal(reads(), 2);
  });

  void it('a lease write drops the shared read', async () => {
    const { deps, reads } = await world('run-1');
    const renewing = defineActivity('renewThenFence', z.object({}), async (d) => {
      const { kube } = await d.cluster('prod');
      await renewPoolLease(kube, LEASE, 'run-1', d.now());
      await checkFence(kube, FENCE, 'changing x', d.now());
      return {};
    });
    await runActivity(renewing, deps, withCancelWatch({}, WATCH));
    // The watch's read serves the renewal's; the fence after the renewal's write reads again.
    assert.equal(reads(), 2);
  });

  void it('a failed read is not shared: the fence reads again', async () => {
    const { kube, deps, reads } = await world('run-1');
    kube.nextError('leases.get', new TransientError('KubeUnavailable', 'reading lease: 503'));
    const changes: string[] = [];
    const result = await runActivity(fenced(1, changes), deps, withCancelWatch({ what: 'x' }, WATCH));
    assert.equal(result.ok, true);
    assert.equal(reads(), 2);
  });

  void it('without a watch the activity reads for itself', async () => {
    const { deps, reads } = await world('run-1');
    await runActivity(fenced(1, []), deps, { what: 'x' });
    assert.equal(reads(), 1);
  });
});
