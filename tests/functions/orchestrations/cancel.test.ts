// The cancel watch of a refresh (functions/orchestrations/cancel.ts) on the local runner, with plain
// activities: a cancel event raised while an activity runs stops the run before the next one (before,
// with no wait open, the SDK kept it until the next race); a cancel asked on the lease is read by the
// activity called next, which does nothing; a shielded stretch finishes first; a sleep of one branch of
// inParallel races the event without holding the other branch back, and both ways of asking replay.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ActivityHandler, OrchestrationContext, OrchestrationHandler, Task } from 'durable-functions';

import { createDurableRunner, createVirtualClock, type DurableRunner } from '../../../cli/runner/index.js';
import type { ActivityHandle } from '../../../functions/activities.js';
import { call } from '../../../functions/orchestrations/call.js';
import { isCancel, shielded, watchCancel, watchLease } from '../../../functions/orchestrations/cancel.js';
import { inParallel } from '../../../functions/orchestrations/parallel.js';
import type { StepName } from '../../../functions/orchestrations/step-failure.js';
import { sleepUnlessCancelled } from '../../../functions/orchestrations/waits.js';
import { CANCEL_REQUESTED, splitCancelWatch } from '../../../shared/application/pool-cancel.js';

const START = Date.parse('2026-11-22T10:00:00.000Z');
const ID = 'cancel-test';
const step: ActivityHandle<{ readonly n: number; readonly at: string }, number> = { name: 'step' };

interface Seen {
  readonly n: number;
  readonly at: string;
  readonly watched: boolean;
}

/** A runner whose `step` activity records its calls; `during(n)` runs while call n is in flight. */
function setup(
  orchestrator: OrchestrationHandler,
  options: {
    during?: (n: number, runner: DurableRunner) => void;
    leaseCancel?: (n: number) => string | undefined;
  },
) {
  const seen: Seen[] = [];
  const activities: Record<string, ActivityHandler> = {
    step: (carried: unknown) => {
      const { input, watch } = splitCancelWatch(carried);
      const { n, at } = input as { n: number; at: string };
      const asked = watch === undefined ? undefined : options.leaseCancel?.(n);
      if (asked !== undefined) {
        return { ok: false, failure: { kind: 'terminal', code: CANCEL_REQUESTED, message: asked } };
      }
      seen.push({ n, at, watched: watch !== undefined });
      options.during?.(n, runner);
      return { ok: true, value: n };
    },
  };
  const runner = createDurableRunner({
    orchestrators: { test: orchestrator },
    activities,
    clock: createVirtualClock({ startMs: START }),
  });
  return { runner, seen };
}

/** Step n of a test run is named by the vocabulary's n-th step (steps are typed: StepName). */
const STEP = ['cordoning', 'draining', 'preparing-disk', 'snapshotting'] as const satisfies StepName[];

function stepName(n: number): StepName {
  return STEP[n - 1] ?? 'unknown';
}

function* steps(context: OrchestrationContext, from: number, to: number): Generator<Task, void, unknown> {
  for (let n = from; n <= to; n++) {
    yield* call(context, step, { n, at: context.df.currentUtcDateTime.toISOString() }, { step: stepName(n) });
  }
}

/** Runs `body` under a cancel watch; a cancel ends it with `cancelled <message>`. */
function watched(
  body: (context: OrchestrationContext) => Generator<Task, unknown, unknown>,
): OrchestrationHandler {
  return function* (context: OrchestrationContext) {
    yield* watchCancel(context);
    try {
      return yield* body(context);
    } catch (error) {
      if (isCancel(error)) return `cancelled ${error.message}`;
      throw error;
    }
  };
}

void describe('the cancel watch', () => {
  void it('an event raised while an activity runs stops the run before the next activity', async () => {
    const { runner, seen } = setup(
      watched((context) => steps(context, 1, 4)),
      {
        during: (n, r) => {
          if (n === 2) void r.raiseEvent(ID, 'cancel', 'Ctrl-C');
        },
      },
    );
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.output, 'cancelled preparing-disk: cancelled: Ctrl-C');
    assert.deepEqual(
      seen.map((call) => call.n),
      [1, 2],
    );
  });

  void it('an event raised before the watch opened is acted on at the first boundary', async () => {
    const orchestrator: OrchestrationHandler = function* (context) {
      yield context.df.callActivity('step', { n: 0, at: '' });
      return yield* watched((c) => steps(c, 1, 2))(context);
    };
    const { runner, seen } = setup(orchestrator, {
      during: (n, r) => {
        if (n === 0) void r.raiseEvent(ID, 'cancel', 'early');
      },
    });
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.output, 'cancelled cordoning: cancelled: early');
    assert.deepEqual(
      seen.map((call) => call.n),
      [0],
    );
  });

  void it('a cancel asked on the lease is read by the next activity, which does nothing', async () => {
    const { runner, seen } = setup(
      watched(function* (context) {
        watchLease(context, { cluster: 'prod', namespace: 'ns', name: 'lease', runId: 'run-1' });
        yield* steps(context, 1, 4);
      }),
      { leaseCancel: (n) => (n >= 3 ? 'window closed' : undefined) },
    );
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.output, 'cancelled preparing-disk: cancelled: window closed');
    assert.deepEqual(
      seen.map((call) => [call.n, call.watched]),
      [
        [1, true],
        [2, true],
      ],
    );
  });

  void it('a shielded stretch finishes, reads no lease, and the cancel is acted on after it', async () => {
    const { runner, seen } = setup(
      watched(function* (context) {
        watchLease(context, { cluster: 'prod', namespace: 'ns', name: 'lease', runId: 'run-1' });
        yield* shielded(context, steps(context, 1, 3));
        yield* steps(context, 4, 5);
      }),
      {
        during: (n, r) => {
          if (n === 1) void r.raiseEvent(ID, 'cancel', 'Ctrl-C');
        },
      },
    );
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.output, 'cancelled snapshotting: cancelled: Ctrl-C');
    assert.deepEqual(
      seen.map((call) => [call.n, call.watched]),
      [
        [1, false],
        [2, false],
        [3, false],
      ],
    );
  });

  void it('a sleep ends at once on the event', async () => {
    const { runner } = setup(
      watched(function* (context) {
        yield* steps(context, 1, 1);
        yield* sleepUnlessCancelled(context, 'waiting-for-power-off', new Date(START + 3_600_000));
        return 'slept';
      }),
      {
        during: (n, r) => {
          if (n === 1) void r.raiseEvent(ID, 'cancel', 'Ctrl-C');
        },
      },
    );
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.output, 'cancelled waiting-for-power-off: cancelled: Ctrl-C');
    assert.ok(status.lastUpdatedTime.getTime() < START + 3_600_000, 'long before the sleep would end');
  });
});

void describe('inParallel with a branch sleeping on a race', () => {
  const HOUR = 3_600_000;
  const sleeper = function* (context: OrchestrationContext): Generator<Task, string, unknown> {
    yield* sleepUnlessCancelled(context, 'waiting-for-power-off', new Date(START + HOUR));
    return 'slept';
  };
  const parallel = watched(function* (context) {
    return yield* inParallel(context, sleeper(context), shielded(context, steps(context, 1, 3)));
  });

  void it('the other branch is not held back by the race (it is stood in for)', async () => {
    const { runner, seen } = setup(parallel, {});
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.runtimeStatus, 'Completed');
    assert.deepEqual(
      seen.map((call) => call.at),
      [new Date(START).toISOString(), new Date(START).toISOString(), new Date(START).toISOString()],
      'every activity of the other branch ran at once, not after the hour',
    );
  });

  void it('the event ends the sleeping branch at once; the shielded branch finishes its work', async () => {
    const { runner, seen } = setup(parallel, {
      during: (n, r) => {
        if (n === 2) void r.raiseEvent(ID, 'cancel', 'Ctrl-C');
      },
    });
    const status = await runner.startOrchestration('test', undefined, ID);
    assert.equal(status.output, 'cancelled waiting-for-power-off: cancelled: Ctrl-C');
    assert.deepEqual(
      seen.map((call) => call.n),
      [1, 2, 3],
    );
    assert.ok(status.lastUpdatedTime.getTime() < START + HOUR, 'the sleep did not run out');
  });
});
