// `release` on the machine of a CLI run whose process is gone takes the pool over at once: the pid check
// (a real process that exited) and which holders it is ever asked about.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';

import { goneHolderOf, processIsGone } from '../../cli/dead-holder.js';
import type { Session } from '../../cli/session.js';
import { leaseRefOf } from '../../shared/application/pool-holdings.js';
import type { ClusterHandle, PoolConfiguration } from '../../shared/application/refresh-dependencies.js';
import { LEASE_ANNOTATIONS, LEASE_DURATION_SECONDS } from '../../shared/domain/ownership.js';
import { FakeCompute } from '../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../shared/ports/fake/kubernetes/index.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const SCALE_SET = {
  subscriptionId: '6b1f9c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
  resourceGroup: 'rg',
  name: 'pool1',
};
const LEASE = leaseRefOf(SCALE_SET, 'vmss-prototype');

/** The pid of a process that ran and exited (and was reaped): no process has it now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid;
  assert.ok(pid !== undefined, 'the child started');
  await new Promise((resolve) => child.on('exit', resolve));
  return pid;
}

function sessionWith(kube: FakeKubernetes): Pick<Session, 'composition'> {
  const handle = {
    configuration: {
      name: 'prod',
      subscriptionId: SCALE_SET.subscriptionId,
      resourceGroup: 'rg',
      maxParallelPools: 1,
      pools: [{ name: 'pool1', scaleSet: SCALE_SET }],
      poolConfiguration: () =>
        ({
          run: { prepNamespace: 'vmss-prototype' },
          gallery: {
            subscriptionId: SCALE_SET.subscriptionId,
            resourceGroup: 'rg',
            galleryName: 'g',
            imageDefinitionName: 'd',
          },
        }) as unknown as PoolConfiguration,
    },
    kube,
    compute: new FakeCompute({ now: () => NOW.getTime() }),
  } satisfies ClusterHandle;
  const dependencies = {
    clusterNames: ['prod'],
    cluster: (name: string) =>
      name === 'prod' ? Promise.resolve(handle) : Promise.reject(new Error(`${name} is not configured`)),
    now: () => NOW,
    runner: { kind: 'cli', host: 'laptop', pid: process.pid },
  };
  return { composition: { dependencies } } as unknown as Pick<Session, 'composition'>;
}

function holdBy(kube: FakeKubernetes, holder: string, pid: number): void {
  kube.leases.put({
    ...LEASE,
    holder,
    acquiredAt: new Date(NOW.getTime() - 60_000).toISOString(),
    renewedAt: new Date(NOW.getTime() - 60_000).toISOString(),
    durationSeconds: LEASE_DURATION_SECONDS,
    annotations: { [LEASE_ANNOTATIONS.holderPid]: String(pid) },
  });
}

void describe('processIsGone', () => {
  void it('is true for the pid of a process that exited, false for one that runs', async () => {
    assert.equal(processIsGone(await deadPid()), true);
    assert.equal(processIsGone(process.pid), false);
    assert.equal(processIsGone(process.ppid), false);
  });
});

void describe('goneHolderOf', () => {
  void it("names this machine's CLI run whose process exited", async () => {
    const kube = new FakeKubernetes({ now: () => NOW.getTime() });
    const pid = await deadPid();
    holdBy(kube, 'cli/laptop/run-dead', pid);
    assert.deepEqual(await goneHolderOf(sessionWith(kube), 'prod', 'pool1'), {
      runId: 'run-dead',
      host: 'laptop',
      pid,
    });
  });

  void it('leaves alone a CLI run whose process runs, a function-app run and another machine’s run', async () => {
    const pid = await deadPid();
    const cases: [string, number][] = [
      ['cli/laptop/run-live', process.ppid],
      ['function-app/laptop/run-app', pid],
      ['cli/other-machine/run-far', pid],
    ];
    for (const [holder, holderPid] of cases) {
      const kube = new FakeKubernetes({ now: () => NOW.getTime() });
      holdBy(kube, holder, holderPid);
      assert.equal(await goneHolderOf(sessionWith(kube), 'prod', 'pool1'), undefined, holder);
    }
  });

  void it('an unknown pool or cluster is left to the release to report', async () => {
    const kube = new FakeKubernetes({ now: () => NOW.getTime() });
    holdBy(kube, 'cli/laptop/run-dead', await deadPid());
    assert.equal(await goneHolderOf(sessionWith(kube), 'prod', 'nope'), undefined);
    assert.equal(await goneHolderOf(sessionWith(kube), 'nope', 'pool1'), undefined);
  });
});
