/**
 * Runs racing for the same pool, and a fleet of pools refreshing at once under ARM throttling. Each
 * scenario asserts the outcome and every invariant.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import type { OrchestrationStatus } from '../../cli/runner/index.js';
import type { DurableRunner } from '../../cli/runner/index.js';
import { ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { OrchestrationClient, StartOutcome } from '../../shared/application/singleton.js';
import { startSingleton } from '../../shared/application/singleton.js';
import type { InjectedFault } from '../../sim/contracts.js';
import type { ScenarioData } from '../e2e/harness.js';
import { POOL1, POOL2 } from '../e2e/harness.js';
import { assertInvariants, fleetCluster, startChaos, summaryTable } from './chaos-harness.js';

type Settled = { ok: true; status: OrchestrationStatus } | { ok: false; error: unknown };

/**
 * The DurableClient calls the triggers make, over the local runner: `startNew` returns once the
 * instance exists (or the start was refused), the run goes on in the background.
 */
function clientOver(runner: DurableRunner, runs: Promise<Settled>[]): OrchestrationClient {
  return {
    async getStatus(instanceId) {
      const status = await runner.getStatus(instanceId);
      if (status === undefined) throw new Error(`instance ${instanceId} not found (404)`);
      return status;
    },
    async startNew(name, options) {
      const settled: Promise<Settled> = runner
        .startOrchestration(name, options.input, options.instanceId)
        .then(
          (status) => ({ ok: true, status }),
          (error: unknown) => ({ ok: false, error }),
        );
      const first = await Promise.race([
        settled,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 0)),
      ]);
      if (first !== undefined && !first.ok) throw first.error;
      runs.push(settled);
      return options.instanceId;
    },
    raiseEvent() {
      return Promise.reject(new Error('raiseEvent is not used here'));
    },
  };
}

/** 3 clusters × 7, 7 and 6 pools of 2 nodes each, patched 6 h ago, with a CustomScript bootstrap. */
function fleetScenario(scenario: ScenarioData): void {
  const sizes = [7, 7, 6];
  scenario.clusters = sizes.map((pools, c) =>
    fleetCluster(`fleet${c + 1}`, { pools, capacity: 2 }, [
      { kind: 'Deployment', namespace: 'default', name: 'web', replicas: 6, pdb: { maxUnavailable: 1 } },
    ]),
  );
}

/**
 * Compute's scale-set write limit, about 12 a minute: a token bucket per operation (the injector
 * sees no resource, so this is stricter than the real per-scale-set bucket) answering 429 with a
 * Retry-After for the next token.
 */
function throttleScaleSetWrites(
  faults: { check(api: 'arm' | 'kube', operation: string): InjectedFault | undefined },
  nowMs: () => number,
  perMinute: number,
): { throttled: () => number; peakPerMinute: () => number } {
  const buckets = new Map<string, { tokens: number; atMs: number }>();
  // Scale-set VM calls, instance-view reads included (the pools' power-state polls are most of them).
  const limited =
    /^Microsoft\.Compute\/virtualMachineScaleSets\/(write|extensions\/delete|virtualMachines\/.*(read|action))$/i;
  let throttled = 0;
  const calls = new Map<string, number[]>();
  const original = faults.check.bind(faults);
  faults.check = (api, operation) => {
    const injected = original(api, operation);
    if (injected !== undefined || api !== 'arm' || !limited.test(operation)) return injected;
    const now = nowMs();
    calls.set(operation, [...(calls.get(operation) ?? []), now]);
    const bucket = buckets.get(operation) ?? { tokens: perMinute, atMs: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + ((now - bucket.atMs) / 60_000) * perMinute);
    bucket.atMs = now;
    buckets.set(operation, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    throttled += 1;
    return {
      status: 429,
      code: 'TooManyRequests',
      message: `The request is being throttled as the limit has been reached for operation type - 'VMScaleSetVMUpdates'.`,
      retryAfterSeconds: Math.ceil(((1 - bucket.tokens) * 60) / perMinute),
    };
  };
  return {
    throttled: () => throttled,
    // The busiest simulated minute of any one limited operation (requests, throttled ones included).
    peakPerMinute: () =>
      Math.max(
        0,
        ...[...calls.values()].flatMap((times) =>
          times.map((start) => times.filter((t) => t >= start && t < start + 60_000).length),
        ),
      ),
  };
}

void describe('runs racing and fleets refreshing at once', { concurrency: false }, () => {
  after(() => {
    console.log(summaryTable('chaos: concurrency'));
  });

  void it('two auto runs and an HTTP refresh racing: one capture per pool', async () => {
    const chaos = await startChaos();
    try {
      const runs: Promise<Settled>[] = [];
      const client = clientOver(chaos.runner, runs);
      const cluster = { cluster: 'prod', trigger: 'timer' };
      const starts = await Promise.all([
        startSingleton(client, {
          name: ORCHESTRATION.refreshCluster,
          instanceId: 'refresh:prod',
          input: cluster,
        }),
        startSingleton(client, {
          name: ORCHESTRATION.refreshCluster,
          instanceId: 'refresh:prod',
          input: cluster,
        }),
        startSingleton(client, {
          name: ORCHESTRATION.refreshPool,
          instanceId: poolInstanceId('prod', POOL2),
          input: { cluster: 'prod', pool: POOL2, trigger: 'http' },
          blockers: ['refresh:prod'],
        }),
      ]);
      const settled = await Promise.all(runs);
      const kinds = starts.map((start: StartOutcome) => start.kind);
      assert.equal(kinds.filter((kind) => kind === 'started').length, runs.length);
      assert.equal(
        kinds.slice(0, 2).filter((kind) => kind === 'started').length,
        1,
        `one of the two auto runs starts, the other sees it running (${kinds.join(', ')})`,
      );
      for (const result of settled) assert.ok(result.ok && result.status.runtimeStatus !== 'Failed');
      // One capture per pool: one prep pod per pool, whoever ran it.
      const preps = chaos.harness.sim.running.world.prepRecords();
      for (const pool of [POOL1, POOL2]) {
        const count = preps.filter((record) => JSON.stringify(record).includes(pool)).length;
        assert.ok(count <= 1, `${pool} captured ${count} times`);
      }
      const clusterRun = settled.find((s) => s.ok && s.status.name === ORCHESTRATION.refreshCluster);
      const pools = clusterRun?.ok === true ? (clusterRun.status.output as ClusterRefreshResult).pools : [];
      const pool2 = pools.find((pool) => pool.pool === POOL2);
      // The HTTP run of pool2 and the cluster run's child share the singleton id: whichever started second
      // reports the other as the refresh (skipped), never a failure.
      assert.ok(
        pool2 === undefined || pool2.outcome === 'refreshed' || pool2.outcome === 'skipped',
        `pool2 in the cluster run: ${pool2?.outcome ?? 'n/a'}: ${pool2?.reason ?? ''}`,
      );
      const outcome = `starts ${kinds.join('/')}; pool2 in cluster run: ${pool2?.outcome ?? 'n/a'}`;
      assertInvariants(chaos, 'two auto runs + HTTP refresh racing', outcome, {
        message: `cluster run, pool2: ${pool2?.reason ?? 'n/a'}`,
      });
    } finally {
      await chaos.stop();
    }
  });

  for (const perMinute of [12, 3]) {
    void it(`20 pools across 3 clusters at once, scale-set VM calls limited to ${perMinute}/min`, async () => {
      const chaos = await startChaos({ scenario: fleetScenario });
      try {
        const running = chaos.harness.sim.running;
        const throttle = throttleScaleSetWrites(running.faults, () => running.clock.nowMs(), perMinute);
        const wallStart = performance.now();
        const statuses = await Promise.all(
          ['fleet1', 'fleet2', 'fleet3'].map((cluster) =>
            chaos.runner.startOrchestration(
              ORCHESTRATION.refreshCluster,
              { cluster, trigger: 'test' },
              `refresh:${cluster}`,
            ),
          ),
        );
        const wallSeconds = Math.round((performance.now() - wallStart) / 100) / 10;
        const pools = statuses.flatMap((status) => {
          assert.equal(status.runtimeStatus, 'Completed', status.failure?.ErrorMessage);
          return (status.output as ClusterRefreshResult).pools;
        });
        assert.equal(pools.length, 20);
        const failed = pools.filter((pool) => pool.outcome === 'failed');
        for (const pool of failed) assert.match(pool.reason, /^[a-z-]+: /, 'a failure names its step');
        assert.ok(pools.every((pool) => pool.outcome === 'refreshed' || pool.outcome === 'failed'));
        const refreshed = pools.length - failed.length;
        const summary =
          `${refreshed} refreshed, ${failed.length} failed, ${throttle.throttled()} throttled ` +
          `(peak ${throttle.peakPerMinute()}/min), ${wallSeconds} s wall`;
        console.log(
          `fleet at ${perMinute}/min: ${summary}, ${chaos.simSeconds()} s simulated` +
            failed.map((pool) => `\n  ${pool.cluster}/${pool.pool}: ${pool.reason}`).join(''),
        );
        assertInvariants(chaos, `20 pools × 3 clusters, ${perMinute}/min`, summary);
      } finally {
        await chaos.stop();
      }
    });
  }
});
