// The wait scale of a run (waits.ts): a poll's schedule — first read, interval, backoff cap — shrinks by
// the scale its pool lease carried (VMSSP_SIMULATOR_WAIT_SCALE); its timeout and the operator's own delays
// do not. Run on the local runner with a virtual clock, so read times are exact.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OrchestrationContext, OrchestrationHandler } from 'durable-functions';

import { createDurableRunner, createVirtualClock } from '../../../cli/runner/index.js';
import { pollUntil, setWaitScale } from '../../../functions/orchestrations/waits.js';

const START = Date.parse('2026-12-02T10:00:00.000Z');

interface Case {
  readonly name: string;
  readonly scale?: number;
  readonly timeoutSeconds?: number;
  readonly nextDelaySeconds?: number;
  /** Seconds after the start of each read. */
  readonly reads: readonly number[];
  readonly outcome?: RegExp;
}

/** Reads until the third read (or times out), first read due at 100 s, every 10 s after. */
function poller(scale: number | undefined, timeoutSeconds: number, nextDelay: number | undefined) {
  const handler: OrchestrationHandler = function* (context: OrchestrationContext) {
    if (scale !== undefined) setWaitScale(context, scale);
    let reads = 0;
    const times: number[] = [];
    yield* pollUntil(context, {
      step: 'snapshotting',
      expectedSeconds: 100,
      intervalSeconds: 10,
      timeoutSeconds,
      read: function* () {
        const now = (yield context.df.callActivity('readNow')) as number;
        times.push((now - START) / 1000);
        reads += 1;
        return reads;
      },
      done: (count) => count >= 3,
      describe: (count) => `${count} reads`,
      ...(nextDelay === undefined ? {} : { nextDelaySeconds: () => nextDelay }),
    });
    return times;
  };
  return handler;
}

const CASES: readonly Case[] = [
  { name: 'no scale: Azure’s schedule', reads: [100, 110, 120] },
  { name: 'a scale of 1 changes nothing', scale: 1, reads: [100, 110, 120] },
  {
    name: 'a scale of 0.05: the first read shrinks, the interval to a second',
    scale: 0.05,
    reads: [5, 6, 7],
  },
  { name: 'a scale of 0.5: both shrink', scale: 0.5, reads: [50, 55, 60] },
  {
    name: 'the operator’s own delay (a soak) is not scaled',
    scale: 0.05,
    nextDelaySeconds: 30,
    reads: [5, 35, 65],
  },
  {
    name: 'the timeout is not scaled: 0.05 of it would have failed this poll',
    scale: 0.05,
    timeoutSeconds: 20,
    reads: [5, 6, 7],
  },
  {
    name: 'a timeout still ends a poll under a scale',
    scale: 0.05,
    timeoutSeconds: 5.5,
    reads: [5, 5.5],
    outcome: /timed out after 6 s: 2 reads/,
  },
];

void describe('pollUntil under a wait scale', () => {
  for (const testCase of CASES) {
    void it(testCase.name, async () => {
      const clock = createVirtualClock({ startMs: START });
      const runner = createDurableRunner({
        orchestrators: {
          poll: poller(testCase.scale, testCase.timeoutSeconds ?? 3_600, testCase.nextDelaySeconds),
        },
        activities: { readNow: () => Promise.resolve(clock.now()) },
        clock,
      });
      const result = await runner.startOrchestration('poll', undefined, 'poll-1');
      if (testCase.outcome !== undefined) {
        assert.equal(result.runtimeStatus, 'Failed');
        assert.match(JSON.stringify(result.failure), testCase.outcome);
        return;
      }
      assert.equal(result.runtimeStatus, 'Completed', JSON.stringify(result.output));
      assert.deepEqual(result.output, testCase.reads);
    });
  }
});
