// The holder's process id on the pool lease: written by a runner that is one process (the CLI), kept
// current by its renewals, never left behind for a process that is not the holder's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  acquirePoolLease,
  releasePoolLease,
  renewPoolLease,
} from '../../../shared/application/pool-lease.js';
import { LEASE_ANNOTATIONS } from '../../../shared/domain/ownership.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';

const REF = { namespace: 'vmss-prototype', name: 'vmssp-pool1-0a1b2c3d' };
const PURPOSE = { cluster: 'prod', pool: 'pool1', instanceId: 'refresh:prod:pool1', purpose: 'refresh' };
const NOW = new Date('2026-11-22T12:00:00Z');
const CLI = { kind: 'cli', host: 'laptop', pid: 31337 };

function pidOn(kube: FakeKubernetes): string | undefined {
  return kube.leases.lease(REF.namespace, REF.name)?.annotations[LEASE_ANNOTATIONS.holderPid];
}

void describe('the holder pid on the pool lease', () => {
  void it('a CLI run records its process with the lease; the function app records none', async () => {
    const kube = new FakeKubernetes({ now: () => NOW.getTime() });
    await acquirePoolLease(kube, REF, { runId: 'run-1', runner: CLI, purpose: PURPOSE }, NOW);
    assert.equal(pidOn(kube), '31337');
    await releasePoolLease(kube, REF, 'run-1', NOW);
    assert.equal(pidOn(kube), undefined, 'a released lease names no process');
    const app = { kind: 'function-app', host: 'vmssp-app' };
    await acquirePoolLease(kube, REF, { runId: 'run-2', runner: app, purpose: PURPOSE }, NOW);
    assert.equal(pidOn(kube), undefined);
  });

  void it('a run resumed by another process records that process at its next renewal', async () => {
    const kube = new FakeKubernetes({ now: () => NOW.getTime() });
    await acquirePoolLease(kube, REF, { runId: 'run-1', runner: CLI, purpose: PURPOSE }, NOW);
    const later = new Date(NOW.getTime() + 120_000);
    const renewed = await renewPoolLease(kube, REF, 'run-1', later, { ...CLI, pid: 4711 });
    assert.equal(renewed.kind, 'renewed');
    assert.equal(pidOn(kube), '4711');
    // Resumed by a runner that is not one process: the old pid goes, nobody judges the run by it.
    await renewPoolLease(kube, REF, 'run-1', later, { kind: 'crash-runner', host: 'laptop' });
    assert.equal(pidOn(kube), undefined);
    const lease = kube.leases.lease(REF.namespace, REF.name);
    assert.equal(lease?.annotations[LEASE_ANNOTATIONS.purpose], 'refresh', 'the other annotations stay');
    assert.equal(lease?.holder, 'cli/laptop/run-1');
  });
});
