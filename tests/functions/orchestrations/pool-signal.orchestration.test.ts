import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OrchestrationContext, OrchestrationHandler, Task } from 'durable-functions';

import { createDurableRunner, createVirtualClock, type RunnerOptions } from '../../../cli/runner/index.js';
import {
  instanceStatusHandler,
  localDurableClient,
  READ_INSTANCE_STATUS,
} from '../../../functions/instance-status.activity.js';
import {
  type PoolSignalInput,
  poolSignalOrchestration,
  type PoolSignalResult,
} from '../../../functions/orchestrations/pool-signal.orchestration.js';
import { handleRefreshRequest } from '../../../functions/triggers/refresh-api.http.js';
import { EVENT, ORCHESTRATION, signalInstanceId } from '../../../shared/application/orchestration-ids.js';
import { REBOOT_NOTICE_SCHEMA, type RebootNotice } from '../../../shared/application/reboot-notices.js';
import { runnerClient } from '../triggers/durable-client-double.js';
import { fakeDependencies, recordingContext, request, uniformVm } from '../triggers/fixtures.js';

const START = Date.parse('2026-11-22T10:00:00.000Z');
const MINUTE = 60_000;
const ID = signalInstanceId('prod', 'pool1');

function notice(n: number): RebootNotice {
  return {
    schema: REBOOT_NOTICE_SCHEMA,
    source: 'health-resources',
    resourceId: uniformVm('k8s-pool1-12345678-vmss', String(n)),
    observedAt: new Date(START).toISOString(),
    eventId: `e-${n}`,
  };
}

const INPUT: PoolSignalInput = {
  cluster: 'prod',
  pool: 'pool1',
  quietPeriodSeconds: 600,
  minimumReadySeconds: 300,
  notice: notice(0),
};

/** A stand-in refreshPool: records its start time through an activity, optionally waits for 'release'. */
function setup(options: { holdRefresh?: boolean } = {}) {
  const refreshes: { at: number; input: unknown }[] = [];
  const clock = createVirtualClock({ startMs: START });
  const refreshPool: OrchestrationHandler = function* (
    context: OrchestrationContext,
  ): Generator<Task, unknown, unknown> {
    const input = context.df.getInput<{ cluster: string; pool: string }>();
    context.df.setCustomStatus({
      cluster: input.cluster,
      pool: input.pool,
      step: 'draining',
      since: context.df.currentUtcDateTime.toISOString(),
    });
    yield context.df.callActivity('recordRefresh', input);
    if (options.holdRefresh === true) yield context.df.waitForExternalEvent('release');
    return { cluster: input.cluster, pool: input.pool, outcome: 'refreshed', reason: 'test' };
  };
  const runnerOptions: RunnerOptions = {
    orchestrators: {
      [ORCHESTRATION.refreshPool]: refreshPool,
      [ORCHESTRATION.poolSignal]: poolSignalOrchestration.handler,
    },
    activities: {
      // The singleton check before each refresh (the product's own handler over the runner's client).
      [READ_INSTANCE_STATUS]: instanceStatusHandler(localDurableClient),
      recordRefresh: (input: unknown) => {
        refreshes.push({ at: clock.now(), input });
        return Promise.resolve(null);
      },
    },
    clock,
    // Timers stay pending until the test lets time pass.
    timerHorizonMs: START,
  };
  const runner = createDurableRunner(runnerOptions);
  return { runner, clock, refreshes, runnerOptions };
}

void describe('pool signal (debounce)', () => {
  void it('ten notices within the quiet period start exactly one refresh, after the last one', async () => {
    const { runner, clock, refreshes, runnerOptions } = setup();
    await runner.startOrchestration(ORCHESTRATION.poolSignal, INPUT, ID);
    for (let n = 1; n < 10; n++) {
      await clock.advanceTo(START + n * MINUTE);
      const status = await runner.raiseEvent(ID, EVENT.rebootNotice, notice(n));
      assert.equal(status.runtimeStatus, 'Running');
    }
    assert.equal(refreshes.length, 0);
    const waiting = await runner.getStatus(ID);
    assert.deepEqual(waiting?.customStatus, {
      cluster: 'prod',
      pool: 'pool1',
      step: 'waiting-quiet-period',
      notices: 10,
      refreshAt: new Date(START + 9 * MINUTE + 10 * MINUTE).toISOString(),
    });

    runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
    const done = await runner.resume(ID);

    assert.equal(done.runtimeStatus, 'Completed');
    assert.equal(refreshes.length, 1);
    // Quiet period (10 min) after the last notice (minute 9); minimum ready time (5 min) is shorter.
    assert.equal(refreshes[0]?.at, START + 19 * MINUTE);
    const output = done.output as PoolSignalResult;
    assert.equal(output.notices, 10);
    assert.deepEqual(output.runs, [
      { instanceId: 'refresh:prod:pool1', outcome: 'refreshed', reason: 'test' },
    ]);
    assert.equal((await runner.getStatus('refresh:prod:pool1'))?.runtimeStatus, 'Completed');
  });

  void it('waits for minimumReadyTime when it is longer than the quiet period', async () => {
    const { runner, refreshes, runnerOptions } = setup();
    runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
    await runner.startOrchestration(ORCHESTRATION.poolSignal, { ...INPUT, minimumReadySeconds: 3600 }, ID);
    assert.equal(refreshes[0]?.at, START + 60 * MINUTE);
  });

  void it('an HTTP refresh while the pool refreshes answers 409 with the instance; the debounce waits for it', async () => {
    const { runner, clock, refreshes, runnerOptions } = setup({ holdRefresh: true });
    const client = runnerClient(runner);
    // An operator's refresh runs (held open), then a reboot notice arrives for the same pool.
    await runner.startOrchestration(
      'refreshPool',
      { cluster: 'prod', pool: 'pool1', trigger: 'http' },
      'refresh:prod:pool1',
    );
    const conflict = await handleRefreshRequest(
      request({
        params: { cluster: 'prod' },
        headers: { 'content-type': 'application/json' },
        body: '{"pool":"pool1"}',
      }),
      client,
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(conflict.status, 409);
    const body = (await conflict.json()) as { error: { running: { instanceId: string; step: string } } };
    assert.deepEqual(body.error.running.instanceId, 'refresh:prod:pool1');
    assert.equal(body.error.running.step, 'draining');

    await runner.startOrchestration(ORCHESTRATION.poolSignal, INPUT, ID);
    runnerOptions.timerHorizonMs = START + 30 * MINUTE;
    const blocked = await runner.resume(ID);
    assert.equal((blocked.customStatus as { step: string }).step, 'waiting-for-running-refresh');
    assert.equal(refreshes.length, 1);

    // The operator's run finishes; the debounce's next check starts the pool's refresh once.
    await clock.advanceTo(START + 31 * MINUTE);
    runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
    await runner.raiseEvent('refresh:prod:pool1', 'release');
    const waitingForRelease = await runner.resume(ID);
    assert.equal(waitingForRelease.runtimeStatus, 'Running');
    assert.equal(refreshes.length, 2);
    await runner.raiseEvent('refresh:prod:pool1', 'release');
    const done = await runner.resume(ID);
    assert.equal(done.runtimeStatus, 'Completed');
    assert.deepEqual(
      (done.output as PoolSignalResult).runs.map((r) => r.outcome),
      ['refreshed'],
    );
  });

  void it('a notice during the refresh starts one more cycle', async () => {
    const { runner, refreshes, runnerOptions } = setup({ holdRefresh: true });
    runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
    await runner.startOrchestration(ORCHESTRATION.poolSignal, INPUT, ID);
    assert.equal(refreshes.length, 1);
    await runner.raiseEvent(ID, EVENT.rebootNotice, notice(1));
    await runner.raiseEvent('refresh:prod:pool1', 'release');
    await runner.resume(ID);
    assert.equal(refreshes.length, 2);
    await runner.raiseEvent('refresh:prod:pool1', 'release');
    const done = await runner.resume(ID);
    assert.equal(done.runtimeStatus, 'Completed');
    const output = done.output as PoolSignalResult;
    assert.equal(output.notices, 2);
    assert.equal(output.runs.length, 2);
  });
});
