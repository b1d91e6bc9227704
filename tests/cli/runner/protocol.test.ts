// The out-of-process protocol's edge cases, where the local runner must behave exactly as the Durable
// extension does (cli/runner/extension-shim.ts): including where the real host gets it wrong, so an
// orchestrator that relies on any of these fails here as it fails on Azure. Each case names
// what the host does; the cases marked "host fails" failed on the runner before it modelled the shim.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OrchestrationContext, OrchestrationHandler, Task } from 'durable-functions';

import {
  createDurableRunner,
  createVirtualClock,
  type HistoryEvent,
  historyEventName,
  type RunnerOptions,
} from '../../../cli/runner/index.js';

const START = Date.parse('2026-11-22T10:00:00.000Z');
const SECOND = 1_000;

function setup(options: Partial<RunnerOptions> & Pick<RunnerOptions, 'orchestrators'>) {
  const clock = createVirtualClock({ startMs: START });
  const calls: string[] = [];
  const runnerOptions: RunnerOptions = {
    clock,
    activities: {
      // Answers its input, after recording the call.
      echo: (input: unknown) => {
        calls.push(String(input));
        return Promise.resolve(`echo:${String(input)}`);
      },
    },
    ...options,
  };
  return { runner: createDurableRunner(runnerOptions), clock, calls, runnerOptions };
}

function scheduled(history: HistoryEvent[] | undefined, type: string): HistoryEvent[] {
  return (history ?? []).filter((event) => historyEventName(event.EventType) === type);
}

function at(seconds: number, context: OrchestrationContext): Date {
  return new Date(context.df.currentUtcDateTime.getTime() + seconds * SECOND);
}

/**
 * Starts `orchestrator` with timers held until 20 s (its first race's 10 s timer fires), then raises
 * `go` at 30 s, during its second race.
 */
async function raiseAfterFirstRace(
  name: string,
  orchestrator: OrchestrationHandler,
  extendedSessions: boolean,
) {
  const { runner, clock, runnerOptions } = setup({
    orchestrators: { [name]: orchestrator },
    extendedSessions,
    timerHorizonMs: START + 20 * SECOND,
  });
  await runner.startOrchestration(name, undefined, name);
  await clock.advanceTo(START + 30 * SECOND);
  const raised = await runner.raiseEvent(name, 'go', 'now');
  return { raised, runner, runnerOptions };
}

for (const extendedSessions of [false, true]) {
  void describe(`durable protocol edge cases${extendedSessions ? ', extended sessions' : ''}`, () => {
    void it('host fails: a timer sent again in a new Task.any is scheduled twice, and an activity gets the timer’s completion', async () => {
      const resent: OrchestrationHandler = function* (context) {
        const timer = context.df.createTimer(at(60, context));
        const first = context.df.callActivity('echo', 'a');
        yield context.df.Task.any([first, timer]);
        // `timer` was sent with the first Task.any; this one sends it again (azure-functions-durable-js#574).
        const second = context.df.callActivity('echo', 'b');
        yield context.df.Task.any([timer, second]);
        return { second: second.result ?? null, at: context.df.currentUtcDateTime.toISOString() };
      };
      const { runner } = setup({ orchestrators: { resent }, extendedSessions });

      const status = await runner.startOrchestration('resent', undefined, 'resent');

      const history = await runner.getHistory('resent');
      const timers = scheduled(history, 'TimerCreated');
      assert.equal(timers.length, 2, 'the extension schedules the re-sent timer under a new id');
      assert.equal(timers[0]?.FireAt, timers[1]?.FireAt);
      // The host's ids run one ahead of the SDK's from there: `second` (SDK id 2) is answered by the
      // second timer's TimerFired (host id 2), with no value, a minute late; its own TaskCompleted
      // (host id 3) matches nothing. What every refresh met on the real host.
      assert.deepEqual(status.output, { second: null, at: new Date(START + 60 * SECOND).toISOString() });
    });

    void it('host fails: an activity sent again in a new Task.all runs twice', async () => {
      const twice: OrchestrationHandler = function* (context) {
        const a = context.df.callActivity('echo', 'a');
        yield context.df.Task.all([a]);
        const b = context.df.callActivity('echo', 'b');
        const results = (yield context.df.Task.all([a, b])) as unknown[];
        return results;
      };
      const { runner, calls } = setup({ orchestrators: { twice }, extendedSessions });

      const status = await runner.startOrchestration('twice', undefined, 'twice');

      assert.deepEqual(calls, ['a', 'a', 'b'], 'the extension schedules the re-sent activity again');
      assert.equal(scheduled(await runner.getHistory('twice'), 'TaskScheduled').length, 3);
      // `b` (SDK id 1) is answered by the second run of `a` (host id 1).
      assert.deepEqual(status.output, ['echo:a', 'echo:a']);
    });

    void it('a task sent before and yielded alone is not sent again', async () => {
      const alone: OrchestrationHandler = function* (context) {
        const a = context.df.callActivity('echo', 'a');
        const timer = context.df.createTimer(at(60, context));
        yield context.df.Task.any([timer, a]);
        yield timer;
        const b = (yield context.df.callActivity('echo', 'b')) as string;
        return b;
      };
      const { runner, calls } = setup({ orchestrators: { alone }, extendedSessions });

      const status = await runner.startOrchestration('alone', undefined, 'alone');

      assert.equal(status.output, 'echo:b');
      assert.deepEqual(calls, ['a', 'b']);
      assert.equal(scheduled(await runner.getHistory('alone'), 'TimerCreated').length, 1);
    });

    void it('a new timer at the same time stands in for one already sent (what parallel.ts does)', async () => {
      const standIn: OrchestrationHandler = function* (context) {
        const fireAt = at(60, context);
        const first = context.df.callActivity('echo', 'a');
        yield context.df.Task.any([first, context.df.createTimer(fireAt)]);
        const second = context.df.callActivity('echo', 'b');
        const winner = (yield context.df.Task.any([second, context.df.createTimer(fireAt)])) as Task;
        return { secondWon: winner === second, second: second.result };
      };
      const { runner } = setup({ orchestrators: { standIn }, extendedSessions });

      const status = await runner.startOrchestration('standIn', undefined, 'stand-in');

      assert.deepEqual(status.output, { secondWon: true, second: 'echo:b' });
    });

    void it('host fails: a wait sent again in a second race leaves the extension waiting for the timer', async () => {
      // The extension makes each copy of the wait a waiter of its own, served first come, first served:
      // the event goes to the first race's waiter, and the second race only ends in the extension when
      // its timer fires. The SDK hears the event at once, but nothing it asks for next is scheduled.
      const reused: OrchestrationHandler = function* (context) {
        const wait = context.df.waitForExternalEvent('go');
        yield context.df.Task.any([context.df.createTimer(at(10, context)), wait]);
        yield context.df.Task.any([context.df.createTimer(at(600, context)), wait]);
        yield context.df.callActivity('echo', 'after');
        return context.df.currentUtcDateTime.toISOString();
      };
      const { raised, runner, runnerOptions } = await raiseAfterFirstRace('reused', reused, extendedSessions);
      assert.equal(raised.runtimeStatus, 'Running');
      assert.deepEqual(raised.waitingFor.activities, [], 'the activity after the event is not scheduled');

      runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
      const done = await runner.resume('reused');
      // Only when the second race's timer fired (10 s + 600 s) did the extension move on.
      assert.equal(done.runtimeStatus, 'Completed');
      assert.equal(done.output, new Date(START + 610 * SECOND).toISOString());
    });

    void it('a new wait for each race, the losing timer cancelled: the event moves the run on at once', async () => {
      const fresh: OrchestrationHandler = function* (context) {
        yield context.df.Task.any([
          context.df.createTimer(at(10, context)),
          context.df.waitForExternalEvent('go'),
        ]);
        const timer = context.df.createTimer(at(600, context));
        const wait = context.df.waitForExternalEvent('go');
        const winner = (yield context.df.Task.any([timer, wait])) as Task;
        if (winner === wait) timer.cancel();
        yield context.df.callActivity('echo', 'after');
        return context.df.currentUtcDateTime.toISOString();
      };
      const { raised: done } = await raiseAfterFirstRace('fresh', fresh, extendedSessions);

      assert.equal(done.runtimeStatus, 'Completed');
      assert.equal(done.output, new Date(START + 30 * SECOND).toISOString());
    });

    void it('host fails: a sub-orchestration started over a running id replaces that run', async () => {
      const child: OrchestrationHandler = function* (context) {
        const input = context.df.getInput<string>();
        yield context.df.waitForExternalEvent('finish');
        return `child:${input}`;
      };
      const parent: OrchestrationHandler = function* (context) {
        try {
          return (yield context.df.callSubOrchestrator('child', 'second', 'the-child')) as string;
        } catch (error) {
          return `refused: ${(error as Error).message}`;
        }
      };
      const { runner } = setup({ orchestrators: { child, parent }, extendedSessions });

      const first = await runner.startOrchestration('child', 'first', 'the-child');
      assert.equal(first.runtimeStatus, 'Running');
      await runner.startOrchestration('parent', undefined, 'the-parent');

      // The Azure Storage backend does not refuse the start: the running instance begins a second
      // execution with the parent's input, and the first one is gone.
      const replaced = await runner.getStatus('the-child');
      assert.equal(replaced?.runtimeStatus, 'Running');
      assert.equal(replaced?.input, 'second');
      await runner.raiseEvent('the-child', 'finish');
      assert.equal((await runner.getStatus('the-parent'))?.output, 'child:second');
    });

    void it('continue-as-new starts numbering again, and a race in the new execution hears its own tasks', async () => {
      const loop: OrchestrationHandler = function* (context) {
        const round = context.df.getInput<number>();
        const timer = context.df.createTimer(at(60, context));
        const call = context.df.callActivity('echo', `round-${round}`);
        const winner = (yield context.df.Task.any([call, timer])) as Task;
        if (winner === call) timer.cancel();
        if (round < 2) {
          context.df.continueAsNew(round + 1);
          return undefined;
        }
        return call.result;
      };
      const { runner, calls } = setup({ orchestrators: { loop }, extendedSessions });

      const status = await runner.startOrchestration('loop', 0, 'loop');

      assert.equal(status.output, 'echo:round-2');
      assert.deepEqual(calls, ['round-0', 'round-1', 'round-2']);
      const history = await runner.getHistory('loop');
      assert.deepEqual(
        scheduled(history, 'TaskScheduled').map((event) => event.EventId),
        [0],
        'the last execution numbers from 0',
      );
    });
  });
}
