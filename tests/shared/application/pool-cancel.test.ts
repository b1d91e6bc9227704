// A cancel asked on the pool's lease, read by the activity a run calls next: the watch travels in the
// activity's input and leaves it untouched; the lease's request is the run's only while the run holds it;
// a lease that cannot be read asks nothing; and runActivity answers CancelRequested without doing the work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { z } from 'zod';

import { defineActivity, runActivity } from '../../../shared/application/activities/activity.js';
import type { CancelWatch } from '../../../shared/application/pool-cancel.js';
import {
  CANCEL_REQUESTED,
  cancelAskedOn,
  splitCancelWatch,
  withCancelWatch,
} from '../../../shared/application/pool-cancel.js';
import { acquirePoolLease, requestPoolCancel } from '../../../shared/application/pool-lease.js';
import type { ClusterHandle, RefreshDependencies } from '../../../shared/application/refresh-dependencies.js';
import { TransientError } from '../../../shared/domain/errors.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';

const LEASE = { namespace: 'vmss-prototype', name: 'vmssp-pool1-abc' };
const NOW = new Date('2026-11-20T10:00:00Z');
const WATCH: CancelWatch = { cluster: 'prod', ...LEASE, runId: 'run-1' };

async function world(holder: string | undefined, cancel?: string) {
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  if (holder !== undefined) {
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
  }
  if (cancel !== undefined) await requestPoolCancel(kube, LEASE, cancel, NOW);
  const deps: RefreshDependencies = {
    clusterNames: ['prod'],
    cluster: () => Promise.resolve({ kube } as unknown as ClusterHandle),
    now: () => NOW,
    runner: { kind: 'test', host: 'pool-cancel-test' },
  };
  return { kube, deps };
}

void describe('withCancelWatch / splitCancelWatch', () => {
  void it('carries the watch beside the input and gives the input back untouched', () => {
    const input = { cluster: 'prod', node: 'n1' };
    const carried = withCancelWatch(input, WATCH);
    assert.notDeepEqual(carried, input);
    assert.deepEqual(splitCancelWatch(carried), { input, watch: WATCH });
    assert.deepEqual(input, { cluster: 'prod', node: 'n1' }, 'the input itself is not changed');
  });

  void it('an input without a watch is passed on as it is', () => {
    const input = { cluster: 'prod' };
    assert.deepEqual(splitCancelWatch(input), { input });
    assert.deepEqual(splitCancelWatch('text'), { input: 'text' });
  });
});

void describe('cancelAskedOn', () => {
  const cases: { name: string; holder?: string; cancel?: string; want?: string }[] = [
    { name: 'the run holds the lease, nothing asked', holder: 'run-1' },
    {
      name: 'the run holds the lease, a cancel asked',
      holder: 'run-1',
      cancel: 'window closed',
      want: 'window closed',
    },
    { name: "another run's cancel is not this run's", holder: 'run-2', cancel: 'window closed' },
    { name: 'no lease', holder: undefined },
  ];
  for (const c of cases) {
    void it(c.name, async () => {
      const { deps } = await world(c.holder, c.cancel);
      assert.equal(await cancelAskedOn(deps, WATCH), c.want);
    });
  }

  void it('a lease read that does not answer asks nothing, after a short wait', async () => {
    const { deps } = await world('run-1', 'window closed');
    const silent: RefreshDependencies = {
      ...deps,
      cluster: () =>
        Promise.resolve({
          kube: { leases: { get: () => new Promise(() => undefined) } },
        } as unknown as ClusterHandle),
    };
    assert.equal(await cancelAskedOn(silent, WATCH, 20), undefined);
  });

  void it('a lease that cannot be read asks nothing', async () => {
    const { kube, deps } = await world('run-1', 'window closed');
    kube.nextError('leases.get', new TransientError('ClusterUnreachable', 'reading lease: ECONNREFUSED'));
    assert.equal(await cancelAskedOn(deps, WATCH), undefined);
  });
});

void describe('runActivity with a cancel watch', () => {
  let runs = 0;
  const work = defineActivity('work', z.object({ count: z.number() }), (_deps, input) => {
    runs += 1;
    return Promise.resolve(input.count * 2);
  });

  void it('a cancel asked on the lease: CancelRequested with its reason, the work not done', async () => {
    const { deps } = await world('run-1', 'window closed');
    runs = 0;
    assert.deepEqual(await runActivity(work, deps, withCancelWatch({ count: 2 }, WATCH)), {
      ok: false,
      failure: { kind: 'terminal', code: CANCEL_REQUESTED, message: 'window closed' },
    });
    assert.equal(runs, 0);
  });

  void it('nothing asked: the work is done, one lease read first', async () => {
    const { kube, deps } = await world('run-1');
    runs = 0;
    const before = kube.callsTo('leases.get').length;
    assert.deepEqual(await runActivity(work, deps, withCancelWatch({ count: 2 }, WATCH)), {
      ok: true,
      value: 4,
    });
    assert.equal(runs, 1);
    assert.equal(kube.callsTo('leases.get').length, before + 1);
  });

  void it('without a watch the lease is not read', async () => {
    const { kube, deps } = await world('run-1', 'window closed');
    const before = kube.callsTo('leases.get').length;
    assert.deepEqual(await runActivity(work, deps, { count: 3 }), { ok: true, value: 6 });
    assert.equal(kube.callsTo('leases.get').length, before);
  });
});
