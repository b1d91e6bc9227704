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

void describe('a plan made stale by another run', () => {
  const at = (seconds: number): Date => new Date(NOW.getTime() + seconds * 1000);
  const cases: {
    readonly name: string;
    /** The run that held the lease before, and when it released it (seconds after NOW). */
    readonly before?: { readonly runId: string; readonly releasedAfter: number };
    /** When this run (run-b) began its plan, seconds after NOW; absent: it passes no plan time. */
    readonly plannedAfter?: number;
    readonly expected: 'acquired' | 'superseded';
  }[] = [
    {
      name: 'another run released after the plan began',
      before: { runId: 'run-a', releasedAfter: 60 },
      plannedAfter: 30,
      expected: 'superseded',
    },
    {
      name: 'another run released before the plan began',
      before: { runId: 'run-a', releasedAfter: 30 },
      plannedAfter: 60,
      expected: 'acquired',
    },
    {
      name: 'released at the very moment the plan began',
      before: { runId: 'run-a', releasedAfter: 30 },
      plannedAfter: 30,
      expected: 'acquired',
    },
    {
      name: 'this run released it itself (a retried acquire)',
      before: { runId: 'run-b', releasedAfter: 60 },
      plannedAfter: 30,
      expected: 'acquired',
    },
    {
      name: 'no plan time (release, rollback)',
      before: { runId: 'run-a', releasedAfter: 60 },
      expected: 'acquired',
    },
    { name: 'never held before', plannedAfter: 30, expected: 'acquired' },
  ];
  for (const c of cases) {
    void it(c.name, async () => {
      const kube = new FakeKubernetes({ now: () => NOW.getTime() });
      if (c.before !== undefined) {
        await acquirePoolLease(kube, REF, { runId: c.before.runId, runner: CLI, purpose: PURPOSE }, NOW);
        await releasePoolLease(kube, REF, c.before.runId, at(c.before.releasedAfter));
      }
      const plannedAt = c.plannedAfter === undefined ? {} : { plannedAt: at(c.plannedAfter).toISOString() };
      const outcome = await acquirePoolLease(
        kube,
        REF,
        { runId: 'run-b', runner: CLI, purpose: PURPOSE, ...plannedAt },
        at(90),
      );
      assert.equal(outcome.kind, c.expected);
      const holder = kube.leases.lease(REF.namespace, REF.name)?.holder;
      if (c.expected === 'superseded') {
        assert.equal(holder, undefined, 'a stale plan takes nothing');
        assert.match(
          outcome.kind === 'superseded' ? outcome.description : '',
          /^run run-a of cli on laptop held it and released it at \S+, after this run planned at \S+$/,
        );
      } else {
        assert.equal(holder, 'cli/laptop/run-b');
      }
    });
  }
});

// Runners' clocks disagree; the API server's is the one every lease decision and every lease time uses.
void describe("the pool lease on the API server's clock", () => {
  const SKEW_MS = 16 * 60_000;
  const other = { kind: 'function-app', host: 'vmssp-app' };
  /** A cluster whose server clock reads `server`; `run-0` renewed its lease `renewedAgoMs` before that. */
  function heldSince(server: Date, renewedAgoMs: number): FakeKubernetes {
    const kube = new FakeKubernetes({ now: () => server.getTime(), serverNow: () => server.getTime() });
    const renewed = new Date(server.getTime() - renewedAgoMs).toISOString();
    kube.leases.put({
      ...REF,
      holder: 'function-app/vmssp-app/run-0',
      acquiredAt: renewed,
      renewedAt: renewed,
      durationSeconds: 900,
      annotations: {},
    });
    return kube;
  }

  void it("a runner whose clock is 16 min ahead leaves a live run's lease alone", async () => {
    const kube = heldSince(NOW, 5 * 60_000);
    const ahead = new Date(NOW.getTime() + SKEW_MS);
    const outcome = await acquirePoolLease(
      kube,
      REF,
      { runId: 'run-1', runner: CLI, purpose: PURPOSE },
      ahead,
    );
    assert.equal(outcome.kind, 'held');
    assert.equal(kube.leases.lease(REF.namespace, REF.name)?.holder, 'function-app/vmssp-app/run-0');
  });

  void it("a runner whose clock is 16 min behind takes a dead run's expired lease", async () => {
    const kube = heldSince(NOW, 16 * 60_000);
    const behind = new Date(NOW.getTime() - SKEW_MS);
    const outcome = await acquirePoolLease(
      kube,
      REF,
      { runId: 'run-1', runner: CLI, purpose: PURPOSE },
      behind,
    );
    assert.equal(outcome.kind, 'acquired');
    assert.equal(outcome.kind === 'acquired' && outcome.tookOverFrom, 'function-app/vmssp-app/run-0');
    assert.equal(outcome.kind === 'acquired' && outcome.expiresAt, '2026-11-22T12:15:00.000Z');
  });

  void it("writes the server's time, whatever the writer's clock: acquire, renew, release", async () => {
    const server = { now: NOW };
    const kube = new FakeKubernetes({ serverNow: () => server.now.getTime() });
    const skewed = (): Date => new Date(server.now.getTime() - SKEW_MS);
    // An absent lease is created free (no holder, no times), then taken at the server's time of a read.
    await acquirePoolLease(kube, REF, { runId: 'run-1', runner: other, purpose: PURPOSE }, skewed());
    const created = kube.callsTo('leases.create')[0]?.args[0] as { holder?: string; renewedAt?: string };
    assert.equal(created.holder, undefined);
    assert.equal(created.renewedAt, undefined);
    let lease = kube.leases.lease(REF.namespace, REF.name);
    assert.equal(lease?.acquiredAt, NOW.toISOString());
    assert.equal(lease?.renewedAt, NOW.toISOString());
    server.now = new Date(NOW.getTime() + 60_000);
    const renewed = await renewPoolLease(kube, REF, 'run-1', skewed());
    assert.equal(renewed.kind === 'renewed' && renewed.expiresAt, '2026-11-22T12:16:00.000Z');
    assert.equal(kube.leases.lease(REF.namespace, REF.name)?.renewedAt, server.now.toISOString());
    server.now = new Date(NOW.getTime() + 120_000);
    await releasePoolLease(kube, REF, 'run-1', skewed());
    lease = kube.leases.lease(REF.namespace, REF.name);
    assert.equal(lease?.annotations[LEASE_ANNOTATIONS.releasedAt], server.now.toISOString());
    assert.equal(lease?.serverTime, undefined, "the server's time is never stored");
  });
});
