import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

import type { ActivityHandler, OrchestrationContext, OrchestrationHandler, Task } from 'durable-functions';
import * as df from 'durable-functions';

import {
  createDurableRunner,
  createFileStore,
  createMemoryStore,
  createSystemClock,
  createVirtualClock,
  type HistoryEvent,
  historyEventName,
  NonDeterminismError,
  type OrchestrationStatus,
  type RunnerOptions,
} from '../../../cli/runner/index.js';

const START = Date.parse('2026-11-22T10:00:00.000Z');
const HOUR = 3_600_000;

function names(history: HistoryEvent[] | undefined): string[] {
  return (history ?? []).map((event) => historyEventName(event.EventType));
}

function setupRunner(overrides: Partial<RunnerOptions> & Pick<RunnerOptions, 'orchestrators'>) {
  const clock = createVirtualClock({ startMs: START });
  const statuses: OrchestrationStatus[] = [];
  const runner = createDurableRunner({
    activities: {},
    clock,
    onStatus: (status) => statuses.push(status),
    ...overrides,
  });
  return { runner, clock, statuses };
}

/** Waits for an event nobody raises. */
const forever: OrchestrationHandler = function* (context) {
  yield context.df.waitForExternalEvent('never');
  return 'no';
};

function retry(first: number, attempts: number, extra: Partial<df.RetryOptions> = {}): df.RetryOptions {
  return Object.assign(new df.RetryOptions(first, attempts), extra);
}

// Every behaviour twice: replaying the whole history each episode (what tests and the function app's
// host do), and with extended sessions (what the CLI does: the orchestrator stays in memory).
for (const extendedSessions of [false, true]) {
  void describe(`local durable runner${extendedSessions ? ', extended sessions' : ''}`, () => {
    const setup = (overrides: Partial<RunnerOptions> & Pick<RunnerOptions, 'orchestrators'>) =>
      setupRunner({ extendedSessions, ...overrides });
    // Only a replay compares an orchestrator's decisions with the recorded ones.
    const replaysOnly = { skip: extendedSessions && 'a session replays nothing to compare' };

    void it('runs activities in sequence, records scheduling ids and exposes custom status', async () => {
      const seen: unknown[] = [];
      const pipeline: OrchestrationHandler = function* (context: OrchestrationContext) {
        const input = context.df.getInput<{ pool: string }>();
        context.df.setCustomStatus({ step: 'resolve' });
        const scaleSet = (yield context.df.callActivity('resolvePool', input.pool)) as string;
        context.df.setCustomStatus({ step: 'capture' });
        const version = (yield context.df.callActivity('capture', { scaleSet })) as { version: string };
        return { scaleSet, version: version.version };
      };
      const activities: Record<string, ActivityHandler> = {
        resolvePool: (pool: string) => {
          seen.push(pool);
          return Promise.resolve(`vmss-${pool}`);
        },
        capture: (input: { scaleSet: string }) => {
          seen.push(input);
          return { version: `2026.1122.1000-${input.scaleSet}` };
        },
      };
      const { runner, statuses } = setup({ orchestrators: { pipeline }, activities });

      const status = await runner.startOrchestration('pipeline', { pool: 'a' }, 'refresh-a');

      assert.equal(status.runtimeStatus, 'Completed');
      assert.deepEqual(status.output, { scaleSet: 'vmss-a', version: '2026.1122.1000-vmss-a' });
      assert.deepEqual(status.input, { pool: 'a' });
      assert.deepEqual(seen, ['a', { scaleSet: 'vmss-a' }]);
      assert.deepEqual(status.customStatus, { step: 'capture' });
      assert.deepEqual(
        statuses.map((s) => [s.runtimeStatus, s.customStatus]),
        [
          ['Pending', undefined],
          ['Running', { step: 'resolve' }],
          ['Running', { step: 'capture' }],
          ['Completed', { step: 'capture' }],
        ],
      );
      const history = await runner.getHistory('refresh-a');
      assert.deepEqual(names(history), [
        'OrchestratorStarted',
        'ExecutionStarted',
        'TaskScheduled',
        'OrchestratorCompleted',
        'OrchestratorStarted',
        'TaskCompleted',
        'TaskScheduled',
        'OrchestratorCompleted',
        'OrchestratorStarted',
        'TaskCompleted',
        'OrchestratorCompleted',
        'ExecutionCompleted',
      ]);
      const scheduled = (history ?? []).filter((e) => historyEventName(e.EventType) === 'TaskScheduled');
      assert.deepEqual(
        scheduled.map((e) => [e.EventId, e.Name, e.Input]),
        [
          [0, 'resolvePool', '"a"'],
          [1, 'capture', '{"scaleSet":"vmss-a"}'],
        ],
      );
      const completed = (history ?? []).filter((e) => historyEventName(e.EventType) === 'TaskCompleted');
      assert.deepEqual(
        completed.map((e) => e.TaskScheduledId),
        [0, 1],
      );
    });

    void it('retries an activity with backoff timers in virtual time and then succeeds', async () => {
      let calls = 0;
      const flaky: OrchestrationHandler = function* (context) {
        const result = (yield context.df.callActivityWithRetry(
          'flaky',
          retry(5_000, 4, { backoffCoefficient: 2 }),
          'x',
        )) as string;
        return { result, at: context.df.currentUtcDateTime.toISOString() };
      };
      const { runner } = setup({
        orchestrators: { flaky },
        activities: {
          flaky: () => {
            calls += 1;
            if (calls < 3) throw new Error(`throttled (attempt ${calls})`);
            return 'ok';
          },
        },
      });

      const status = await runner.startOrchestration('flaky', undefined, 'retry-ok');

      assert.equal(status.runtimeStatus, 'Completed');
      assert.equal(calls, 3);
      // 5 s after the first failure, 10 s after the second.
      assert.deepEqual(status.output, { result: 'ok', at: new Date(START + 15_000).toISOString() });
      const history = (await runner.getHistory('retry-ok')) ?? [];
      const timers = history.filter((e) => historyEventName(e.EventType) === 'TimerCreated');
      assert.deepEqual(
        timers.map((e) => [e.EventId, e.FireAt]),
        [
          [1, new Date(START + 5_000).toISOString()],
          [3, new Date(START + 15_000).toISOString()],
        ],
      );
      const failures = history.filter((e) => historyEventName(e.EventType) === 'TaskFailed');
      assert.deepEqual(
        failures.map((e) => [e.TaskScheduledId, e.Reason]),
        [
          [0, 'throttled (attempt 1)'],
          [2, 'throttled (attempt 2)'],
        ],
      );
    });

    void it('fails the orchestration with the cause once retries are exhausted', async () => {
      let calls = 0;
      const doomed: OrchestrationHandler = function* (context) {
        yield context.df.callActivityWithRetry(
          'alwaysFails',
          retry(1_000, 3, { maxRetryIntervalInMilliseconds: 1_500, backoffCoefficient: 4 }),
        );
        return 'unreachable';
      };
      class ZoneRedundancyUnsupported extends Error {
        override readonly name = 'ZoneRedundancyUnsupported';
      }
      const { runner, clock } = setup({
        orchestrators: { doomed },
        activities: {
          alwaysFails: () => {
            calls += 1;
            throw new ZoneRedundancyUnsupported(`creating image version: ZRS not supported (call ${calls})`);
          },
        },
      });

      const status = await runner.startOrchestration('doomed', undefined, 'retry-exhausted');

      assert.equal(status.runtimeStatus, 'Failed');
      assert.equal(calls, 3);
      assert.equal(status.failure?.ErrorType, 'ZoneRedundancyUnsupported');
      assert.equal(status.failure.ErrorMessage, 'creating image version: ZRS not supported (call 3)');
      // Delays 1 s, then 4 s capped at 1.5 s; the host's dummy timer after the last attempt fires at once.
      assert.equal(clock.now(), START + 2_500);
      const timers = ((await runner.getHistory('retry-exhausted')) ?? []).filter(
        (e) => historyEventName(e.EventType) === 'TimerCreated',
      );
      assert.deepEqual(
        timers.map((e) => e.FireAt),
        [START + 1_000, START + 2_500, START + 2_500].map((t) => new Date(t).toISOString()),
      );
    });

    void it('surfaces an activity failure as TaskFailedError with failure details the orchestrator can catch', async () => {
      const careful: OrchestrationHandler = function* (context) {
        try {
          yield context.df.callActivity('explode', { node: 'n1' });
          return 'no error';
        } catch (error) {
          const failed = error as df.TaskFailedError;
          return {
            name: failed.name,
            message: failed.message,
            errorType: failed.failureDetails.errorType,
            task: failed.taskName,
            cause: failed.failureDetails.innerFailure?.errorMessage,
            code: failed.failureDetails.properties?.code,
          };
        }
      };
      const { runner } = setup({
        orchestrators: { careful },
        activities: {
          explode: () => {
            throw Object.assign(
              new RangeError('draining node n1', { cause: new Error('PDB blocks eviction') }),
              {
                code: 'DrainTimeout',
              },
            );
          },
        },
        exceptionProperties: (error) => ('code' in error ? { code: error.code } : undefined),
      });

      const status = await runner.startOrchestration('careful', undefined, 'catching');

      assert.deepEqual(status.output, {
        name: 'TaskFailedError',
        message: 'RangeError: draining node n1',
        errorType: 'RangeError',
        task: 'explode',
        cause: 'PDB blocks eviction',
        code: 'DrainTimeout',
      });
    });

    void it('fires a one-hour timer in virtual time and advances currentUtcDateTime, calling onAdvance', async () => {
      const advances: number[] = [];
      const clock = createVirtualClock({ startMs: START, onAdvance: (to) => void advances.push(to) });
      const monitor: OrchestrationHandler = function* (context) {
        const before = context.df.currentUtcDateTime.toISOString();
        yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + HOUR));
        const state = (yield context.df.callActivity('poll')) as string;
        return { before, after: context.df.currentUtcDateTime.toISOString(), state };
      };
      const runner = createDurableRunner({
        orchestrators: { monitor },
        activities: { poll: () => 'Succeeded' },
        clock,
      });

      const status = await runner.startOrchestration('monitor', undefined, 'monitor-1');

      assert.deepEqual(status.output, {
        before: new Date(START).toISOString(),
        after: new Date(START + HOUR).toISOString(),
        state: 'Succeeded',
      });
      assert.deepEqual(advances, [START + HOUR]);
      assert.equal(clock.now(), START + HOUR);
    });

    void it('splits a ten-day timer the way the SDK does under replay schema V3', async () => {
      const sleeper: OrchestrationHandler = function* (context) {
        yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 240 * HOUR));
        return context.df.currentUtcDateTime.toISOString();
      };
      const { runner } = setup({ orchestrators: { sleeper } });

      const status = await runner.startOrchestration('sleeper', undefined, 'long-timer');

      assert.equal(status.output, new Date(START + 240 * HOUR).toISOString());
      const timers = ((await runner.getHistory('long-timer')) ?? []).filter(
        (e) => historyEventName(e.EventType) === 'TimerCreated',
      );
      // 3-day slices while more than 6 days remain, then the remainder.
      assert.deepEqual(
        timers.map((e) => e.FireAt),
        [72, 144, 240].map((h) => new Date(START + h * HOUR).toISOString()),
      );
    });

    void it('fans out with Task.all and honours the concurrency bound', async () => {
      let running = 0;
      let peak = 0;
      const fanOut: OrchestrationHandler = function* (context) {
        const nodes = context.df.getInput<string[]>();
        const tasks = nodes.map((node) => context.df.callActivity('drain', node));
        return (yield context.df.Task.all(tasks)) as string[];
      };
      const { runner } = setup({
        orchestrators: { fanOut },
        maxConcurrentActivities: 3,
        activities: {
          drain: async (node: string) => {
            running += 1;
            peak = Math.max(peak, running);
            for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
            running -= 1;
            return `drained ${node}`;
          },
        },
      });
      const nodes = Array.from({ length: 10 }, (_, i) => `node-${i}`);

      const status = await runner.startOrchestration('fanOut', nodes, 'fan-out');

      assert.equal(status.runtimeStatus, 'Completed');
      assert.deepEqual(
        status.output,
        nodes.map((n) => `drained ${n}`),
      );
      assert.equal(peak, 3);
    });

    void it('lets an activity win Task.any against a timeout timer and cancels the timer', async () => {
      const race: OrchestrationHandler = function* (context) {
        const deadline = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + HOUR));
        const work = context.df.callActivity('work');
        const winner = (yield context.df.Task.any([work, deadline])) as Task;
        if (winner === work) {
          deadline.cancel();
          return { won: 'work', result: work.result as string };
        }
        return { won: 'timer' };
      };
      const { runner, clock } = setup({ orchestrators: { race }, activities: { work: () => 'done' } });

      const status = await runner.startOrchestration('race', undefined, 'race-1');

      assert.deepEqual(status.output, { won: 'work', result: 'done' });
      assert.equal(clock.now(), START);
    });

    void it('on a virtual clock, replays concurrent completions in the order they were sent', async () => {
      // The activity sent first answers last in wall time: the machine's speed must not pick the winner.
      const race: OrchestrationHandler = function* (context) {
        const slow = context.df.callActivity('slow');
        const fast = context.df.callActivity('fast');
        const winner = (yield context.df.Task.any([slow, fast])) as Task;
        yield context.df.Task.all([slow, fast]);
        return winner === slow ? 'slow' : 'fast';
      };
      const { runner } = setup({
        orchestrators: { race },
        activities: {
          slow: () => new Promise((resolve) => setTimeout(() => resolve('slow'), 50)),
          fast: () => 'fast',
        },
      });

      const status = await runner.startOrchestration('race', undefined, 'race-order');

      assert.equal(status.output, 'slow');
      const completions = (await runner.getHistory('race-order'))
        ?.filter((event) => historyEventName(event.EventType) === 'TaskCompleted')
        .map((event) => event.TaskScheduledId);
      assert.deepEqual(completions, [0, 1]);
    });

    void it('runs sub-orchestrations, with their results and failures reaching the parent', async () => {
      const child: OrchestrationHandler = function* (context) {
        const node = context.df.getInput<string>();
        if (node === 'bad') {
          yield context.df.callActivity('fail', node);
        }
        return (yield context.df.callActivity('echo', node)) as string;
      };
      const parent: OrchestrationHandler = function* (context) {
        const ok = (yield context.df.callSubOrchestrator('child', 'good')) as string;
        try {
          yield context.df.callSubOrchestrator('child', 'bad', `${context.df.instanceId}-bad`);
          return 'no failure';
        } catch (error) {
          return { ok, caught: (error as Error).message };
        }
      };
      const strict: OrchestrationHandler = function* (context) {
        yield context.df.callSubOrchestrator('child', 'bad');
        return 'unreachable';
      };
      const { runner } = setup({
        orchestrators: { child, parent, strict },
        activities: {
          echo: (input: string) => `echo ${input}`,
          fail: (input: string) => {
            throw new Error(`capturing node ${input}: disk busy`);
          },
        },
      });

      const caught = await runner.startOrchestration('parent', undefined, 'p1');
      assert.equal(caught.runtimeStatus, 'Completed');
      assert.deepEqual(caught.output, {
        ok: 'echo good',
        caught: 'Error: capturing node bad: disk busy',
      });
      assert.deepEqual(
        (await runner.listInstances()).map((s) => [s.instanceId, s.runtimeStatus]),
        [
          ['p1', 'Completed'],
          ['p1-bad', 'Failed'],
          ['p1:0', 'Completed'],
        ],
      );
      const childStatus = await runner.getStatus('p1:0');
      assert.equal(childStatus?.runtimeStatus, 'Completed');
      assert.equal(childStatus?.parentInstanceId, 'p1');
      assert.equal((await runner.getStatus('p1-bad'))?.runtimeStatus, 'Failed');

      const propagated = await runner.startOrchestration('strict', undefined, 'p2');
      assert.equal(propagated.runtimeStatus, 'Failed');
      assert.match(propagated.failure?.ErrorMessage ?? '', /capturing node bad: disk busy/);
    });

    void it('fans out sub-orchestrations that wait for events; the parent completes when they do', async () => {
      const drainNode: OrchestrationHandler = function* (context) {
        const node = context.df.getInput<string>();
        const evicted = (yield context.df.waitForExternalEvent('evicted')) as number;
        return `${node}: ${evicted} pods`;
      };
      const drainPool: OrchestrationHandler = function* (context) {
        const nodes = context.df.getInput<string[]>();
        const children = nodes.map((node) =>
          context.df.callSubOrchestrator('drainNode', node, `${context.df.instanceId}:drain:${node}`),
        );
        return (yield context.df.Task.all(children)) as string[];
      };
      const { runner } = setup({ orchestrators: { drainNode, drainPool } });

      const waiting = await runner.startOrchestration('drainPool', ['n1', 'n2'], 'pool');
      assert.equal(waiting.runtimeStatus, 'Running');
      assert.deepEqual(waiting.waitingFor.subOrchestrations, ['pool:drain:n1', 'pool:drain:n2']);

      await runner.raiseEvent('pool:drain:n2', 'evicted', 3);
      assert.equal((await runner.getStatus('pool'))?.runtimeStatus, 'Running');
      await runner.raiseEvent('pool:drain:n1', 'evicted', 5);

      const done = await runner.getStatus('pool');
      assert.equal(done?.runtimeStatus, 'Completed');
      assert.deepEqual(done.output, ['n1: 5 pods', 'n2: 3 pods']);
    });

    void it('retries a failed sub-orchestration as new child instances', async () => {
      let attempts = 0;
      const child: OrchestrationHandler = function* (context) {
        return (yield context.df.callActivity('once', context.df.instanceId)) as string;
      };
      const parent: OrchestrationHandler = function* (context) {
        return (yield context.df.callSubOrchestratorWithRetry('child', retry(60_000, 3))) as string;
      };
      const { runner } = setup({
        orchestrators: { child, parent },
        activities: {
          once: (id: string) => {
            attempts += 1;
            if (attempts === 1) throw new Error('transient');
            return `done by ${id}`;
          },
        },
      });

      const status = await runner.startOrchestration('parent', undefined, 'sub-retry');

      assert.equal(status.output, 'done by sub-retry:2');
      assert.equal((await runner.getStatus('sub-retry:0'))?.runtimeStatus, 'Failed');
    });

    void it('waits for an external event, buffers early ones, and resumes on raiseEvent', async () => {
      const approval: OrchestrationHandler = function* (context) {
        const early = (yield context.df.waitForExternalEvent('early')) as string;
        context.df.setCustomStatus('awaiting approval');
        const decision = (yield context.df.waitForExternalEvent('approval')) as { approved: boolean };
        return { early, decision };
      };
      const { runner } = setup({ orchestrators: { approval } });

      const waiting = await runner.startOrchestration('approval', undefined, 'approve-1');
      assert.equal(waiting.runtimeStatus, 'Running');
      assert.deepEqual(waiting.waitingFor.events, ['early']);

      const still = await runner.raiseEvent('approve-1', 'early', 'first');
      assert.equal(still.runtimeStatus, 'Running');
      assert.equal(still.customStatus, 'awaiting approval');
      assert.deepEqual(still.waitingFor.events, ['approval']);

      const done = await runner.raiseEvent('approve-1', 'approval', { approved: true });
      assert.equal(done.runtimeStatus, 'Completed');
      assert.deepEqual(done.output, { early: 'first', decision: { approved: true } });
    });

    void it('buffers an event raised before the orchestrator waits for it', async () => {
      const store = createMemoryStore();
      const late: OrchestrationHandler = function* (context) {
        yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + HOUR));
        return (yield context.df.waitForExternalEvent('go')) as string;
      };
      const { runner } = setup({ orchestrators: { late }, store, timerHorizonMs: START });

      const parked = await runner.startOrchestration('late', undefined, 'late-1');
      assert.equal(parked.runtimeStatus, 'Running');
      assert.deepEqual(parked.waitingFor.timers, [new Date(START + HOUR).toISOString()]);
      const buffered = await runner.raiseEvent('late-1', 'go', 'green');
      assert.equal(buffered.runtimeStatus, 'Running');

      // A runner over the same store without the horizon fires the timer; the event is already there.
      const { runner: later } = setup({ orchestrators: { late }, store });
      const done = await later.resume('late-1');
      assert.equal(done.runtimeStatus, 'Completed');
      assert.equal(done.output, 'green');
    });

    void it('continues as new with fresh history until the orchestrator stops', async () => {
      const eternal: OrchestrationHandler = function* (context) {
        const state = context.df.getInput<{ generation: number }>();
        yield context.df.callActivity('refresh', state.generation);
        yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 6 * HOUR));
        if (state.generation < 3) {
          context.df.continueAsNew({ generation: state.generation + 1 });
          return undefined;
        }
        return { generations: state.generation, at: context.df.currentUtcDateTime.toISOString() };
      };
      const refreshed: unknown[] = [];
      const { runner } = setup({
        orchestrators: { eternal },
        activities: { refresh: (generation: number) => void refreshed.push(generation) },
      });

      const status = await runner.startOrchestration('eternal', { generation: 0 }, 'eternal-1');

      assert.equal(status.runtimeStatus, 'Completed');
      assert.equal(status.generation, 3);
      assert.deepEqual(status.input, { generation: 3 });
      assert.deepEqual(refreshed, [0, 1, 2, 3]);
      assert.deepEqual(status.output, { generations: 3, at: new Date(START + 24 * HOUR).toISOString() });
      // Only the last generation's history remains.
      assert.equal(
        names(await runner.getHistory('eternal-1')).filter((n) => n === 'TaskScheduled').length,
        1,
      );
    });

    void it(
      'detects a non-deterministic orchestrator that branches on module-level state',
      replaysOnly,
      async () => {
        let replays = 0;
        const flipFlop: OrchestrationHandler = function* (context) {
          replays += 1;
          yield context.df.callActivity(replays % 2 === 1 ? 'cordonNode' : 'drainNode', 'n1');
          yield context.df.callActivity('uncordonNode', 'n1');
          return 'done';
        };
        const { runner } = setup({
          orchestrators: { flipFlop },
          activities: { cordonNode: () => 'ok', drainNode: () => 'ok', uncordonNode: () => 'ok' },
        });

        await assert.rejects(runner.startOrchestration('flipFlop', undefined, 'nd-1'), (error: unknown) => {
          assert.ok(error instanceof NonDeterminismError);
          assert.equal(error.actionIndex, 0);
          assert.match(
            error.message,
            /action #0 differs in name: history recorded CallActivity 'cordonNode'/,
          );
          assert.match(error.message, /the replay produced CallActivity 'drainNode'/);
          return true;
        });
        const status = await runner.getStatus('nd-1');
        assert.equal(status?.runtimeStatus, 'Failed');
        assert.equal(status?.failure?.ErrorType, 'NonDeterminismError');
      },
    );

    void it('detects a non-deterministic timer fire time', replaysOnly, async () => {
      let offset = 0;
      const drifting: OrchestrationHandler = function* (context) {
        offset += 1_000;
        yield context.df.createTimer(new Date(START + offset));
        return 'done';
      };
      const { runner } = setup({ orchestrators: { drifting } });

      await assert.rejects(
        runner.startOrchestration('drifting', undefined, 'nd-2'),
        /action #0 differs in fireAt/,
      );
    });

    void it('persists to files so a new runner resumes a waiting instance', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'runner-store-'));
      try {
        const gate: OrchestrationHandler = function* (context) {
          const a = (yield context.df.callActivity('step', 'a')) as string;
          const go = (yield context.df.waitForExternalEvent('go')) as string;
          const b = (yield context.df.callActivity('step', go)) as string;
          return [a, b];
        };
        const steps: string[] = [];
        const options = {
          orchestrators: { gate },
          activities: { step: (x: string) => (steps.push(x), `step ${x}`) },
        };
        const first = createDurableRunner({ ...options, store: createFileStore(dir, { fsync: false }) });
        assert.equal(
          (await first.startOrchestration('gate', undefined, 'persist-1')).runtimeStatus,
          'Running',
        );

        const second = createDurableRunner({ ...options, store: createFileStore(dir, { fsync: false }) });
        const loaded = await second.getStatus('persist-1');
        assert.equal(loaded?.runtimeStatus, 'Running');
        const done = await second.raiseEvent('persist-1', 'go', 'b');

        assert.equal(done.runtimeStatus, 'Completed');
        assert.deepEqual(done.output, ['step a', 'step b']);
        assert.deepEqual(steps, ['a', 'b']);
        assert.deepEqual(await createFileStore(dir).list(), ['persist-1']);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    void it('resumes from a shared store after the first runner stopped at the timer horizon', async () => {
      const store = createMemoryStore();
      const waiter: OrchestrationHandler = function* (context) {
        yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + HOUR));
        return context.df.currentUtcDateTime.toISOString();
      };
      const first = createDurableRunner({
        orchestrators: { waiter },
        activities: {},
        store,
        clock: createVirtualClock({ startMs: START }),
        timerHorizonMs: START,
      });
      assert.equal((await first.startOrchestration('waiter', undefined, 'w-1')).runtimeStatus, 'Running');

      const second = createDurableRunner({
        orchestrators: { waiter },
        activities: {},
        store,
        clock: createVirtualClock({ startMs: START }),
      });
      const status = await second.resume('w-1');

      assert.equal(status.runtimeStatus, 'Completed');
      assert.equal(status.output, new Date(START + HOUR).toISOString());
    });

    void it('detects orchestrator code that changed between a crash and the resume', async () => {
      const store = createMemoryStore();
      const v1: OrchestrationHandler = function* (context) {
        yield context.df.callActivity('cordonNode', 'n1');
        return (yield context.df.waitForExternalEvent('go')) as string;
      };
      const v2: OrchestrationHandler = function* (context) {
        yield context.df.callActivity('annotateNode', 'n1');
        return (yield context.df.waitForExternalEvent('go')) as string;
      };
      const activities = { cordonNode: () => 'ok', annotateNode: () => 'ok' };
      const { runner } = setup({ orchestrators: { refresh: v1 }, activities, store });
      assert.equal(
        (await runner.startOrchestration('refresh', undefined, 'deploy-1')).runtimeStatus,
        'Running',
      );

      const { runner: redeployed } = setup({ orchestrators: { refresh: v2 }, activities, store });

      await assert.rejects(redeployed.raiseEvent('deploy-1', 'go', 'x'), NonDeterminismError);
      const status = await redeployed.getStatus('deploy-1');
      assert.equal(status?.failure?.ErrorType, 'NonDeterminismError');
      assert.match(
        status.failure.ErrorMessage,
        /action #0 differs in name: history recorded CallActivity 'cordonNode'/,
      );
    });

    void it("does not hand a restarted instance the results of its previous execution's children", async () => {
      let round = 0;
      const child: OrchestrationHandler = function* (context) {
        return (yield context.df.callActivity('work', context.df.getInput<number>())) as string;
      };
      const parent: OrchestrationHandler = function* (context) {
        return (yield context.df.callSubOrchestrator('child', context.df.getInput<number>())) as string;
      };
      const { runner } = setup({
        orchestrators: { child, parent },
        activities: { work: (n: number) => `round ${n} (call ${(round += 1)})` },
      });

      assert.equal((await runner.startOrchestration('parent', 1, 'again')).output, 'round 1 (call 1)');
      assert.equal((await runner.startOrchestration('parent', 2, 'again')).output, 'round 2 (call 2)');
    });

    void it('runs timers in real time with the system clock', async () => {
      const short: OrchestrationHandler = function* (context) {
        const start = context.df.currentUtcDateTime.getTime();
        yield context.df.createTimer(new Date(start + 20));
        return context.df.currentUtcDateTime.getTime() - start >= 20;
      };
      const runner = createDurableRunner({
        orchestrators: { short },
        activities: {},
        clock: createSystemClock(),
      });

      const status = await runner.startOrchestration('short', undefined, 'real-time');

      assert.equal(status.output, true);
    });

    void it('terminates a waiting instance and ignores later events', async () => {
      const { runner } = setup({ orchestrators: { forever } });
      await runner.startOrchestration('forever', undefined, 't-1');

      const status = await runner.terminate('t-1', 'operator cancelled the refresh');

      assert.equal(status.runtimeStatus, 'Terminated');
      assert.equal(status.output, 'operator cancelled the refresh');
      await assert.rejects(runner.raiseEvent('t-1', 'never'), /instance is Terminated/);
    });

    void it('refuses to start an instance id that is still running', async () => {
      const { runner } = setup({ orchestrators: { forever } });
      await runner.startOrchestration('forever', undefined, 'singleton');

      await assert.rejects(runner.startOrchestration('forever', undefined, 'singleton'), /already Running/);
      await assert.rejects(runner.startOrchestration('missing'), /no orchestrator named 'missing'/);
      await assert.rejects(runner.startOrchestration('forever', undefined, 'a/b'), /validating instance id/);
    });

    void it('fails an orchestration that calls an unregistered activity or an unsupported API', async () => {
      const typo: OrchestrationHandler = function* (context) {
        yield context.df.callActivity('cordonNdoe');
        return 'no';
      };
      const http: OrchestrationHandler = function* (context) {
        yield context.df.callHttp({ method: 'GET', url: 'https://management.azure.com/' });
        return 'no';
      };
      const { runner } = setup({ orchestrators: { typo, http } });

      const missing = await runner.startOrchestration('typo', undefined, 'typo-1');
      assert.equal(missing.runtimeStatus, 'Failed');
      assert.match(missing.failure?.ErrorMessage ?? '', /no activity named 'cordonNdoe' is registered/);

      const unsupported = await runner.startOrchestration('http', undefined, 'http-1');
      assert.equal(unsupported.runtimeStatus, 'Failed');
      assert.equal(unsupported.failure?.ErrorType, 'UnsupportedByLocalRunner');
      assert.match(unsupported.failure?.ErrorMessage ?? '', /does not support CallHttp/);
    });

    void it('reports a retry timeout instead of hanging like Azure does', async () => {
      const bounded: OrchestrationHandler = function* (context) {
        yield context.df.callActivityWithRetry(
          'fails',
          retry(10_000, 10, { retryTimeoutInMilliseconds: 15_000 }),
        );
        return 'no';
      };
      const { runner } = setup({
        orchestrators: { bounded },
        activities: {
          fails: () => {
            throw new Error('still busy');
          },
        },
      });

      const status = await runner.startOrchestration('bounded', undefined, 'rt-1');

      assert.equal(status.runtimeStatus, 'Failed');
      assert.equal(status.failure?.ErrorType, 'RetryTimeoutNotSupported');
      assert.match(status.failure?.ErrorMessage ?? '', /azure-functions-durable-js#629/);
    });
  });
}

void describe('local durable runner, extended sessions', () => {
  void it('runs an orchestrator body once per process, and replays it whole after a restart', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'runner-sessions-'));
    try {
      let bodies = 0;
      const steps: OrchestrationHandler = function* (context) {
        bodies += 1;
        for (let i = 0; i < 5; i++) yield context.df.callActivity('step', i);
        yield context.df.waitForExternalEvent('go');
        return 'done';
      };
      const options = { orchestrators: { steps }, activities: { step: (i: number) => i * 2 } };
      const first = setupRunner({
        ...options,
        extendedSessions: true,
        store: createFileStore(dir, { fsync: false }),
      });
      const waiting = await first.runner.startOrchestration('steps', undefined, 'sessions-1');
      assert.equal(waiting.runtimeStatus, 'Running');
      // Seven episodes (start, five completions, and the event's), one run of the body.
      assert.equal(bodies, 1);

      const second = setupRunner({
        ...options,
        extendedSessions: true,
        store: createFileStore(dir, { fsync: false }),
      });
      const done = await second.runner.raiseEvent('sessions-1', 'go');
      assert.equal(done.runtimeStatus, 'Completed');
      assert.equal(done.output, 'done');
      // The new process loaded the instance: it replayed the whole history once, then went on.
      assert.equal(bodies, 2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
