import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import type { OrchestrationHandler } from 'durable-functions';
import * as df from 'durable-functions';

import { replayWithSdk } from '../../../cli/runner/durable-internals.js';
import { historyEvent } from '../../../cli/runner/history.js';

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const require = createRequire(import.meta.url);

// Canary for the internals the runner reads (cli/runner/durable-internals.ts): when a
// durable-functions upgrade changes them, this names what broke.
void describe('durable-functions internals used by the runner', () => {
  void it('is the version the internals were verified against', () => {
    const { version } = require('durable-functions/package.json') as { version: string };
    assert.match(version, /^3\.5\./, 're-verify cli/runner/durable-internals.ts before upgrading');
  });

  void it('exposes open tasks, retry timers and waiting events after a replay', async () => {
    const orchestrator: OrchestrationHandler = function* (context) {
      yield context.df.Task.all([
        context.df.callActivityWithRetry('flaky', new df.RetryOptions(1_000, 2)),
        context.df.waitForExternalEvent('approval'),
      ]);
      return 'done';
    };
    const history = [
      historyEvent('OrchestratorStarted', T0),
      historyEvent('ExecutionStarted', T0, { Name: 'o' }),
      historyEvent('TaskScheduled', T0, { EventId: 0, Name: 'flaky' }),
      historyEvent('OrchestratorCompleted', T0),
      historyEvent('OrchestratorStarted', T0),
      historyEvent('TaskFailed', T0, {
        TaskScheduledId: 0,
        Reason: 'boom',
        Details: 'boom',
        FailureDetails: { ErrorType: 'Error', ErrorMessage: 'boom' },
      }),
    ];

    const replay = await replayWithSdk(orchestrator, {
      instanceId: 'canary',
      parentInstanceId: undefined,
      functionName: 'o',
      history,
      input: undefined,
      log: () => undefined,
    });

    assert.equal(replay.failed, false);
    assert.deepEqual(Object.keys(replay.executor.openTasks), ['1']);
    const retryTimer = replay.executor.openTasks['1'];
    assert.equal(retryTimer?.action, 'noOp');
    assert.equal(retryTimer.parent?.isWaitingOnTimer, true);
    assert.equal(retryTimer.parent.attemptNumber, 2);
    assert.equal(retryTimer.parent.retryOptions?.firstRetryIntervalInMilliseconds, 1_000);
    assert.deepEqual(Object.keys(replay.executor.openEvents), ['approval']);
    assert.equal(replay.state.actions[0]?.[0]?.actionType, 12);
  });

  void it('recovers the orchestrator state and exception when it fails', async () => {
    const orchestrator: OrchestrationHandler = function* (context) {
      context.df.setCustomStatus('about to fail');
      yield context.df.createTimer(new Date(T0 + 1_000));
      throw new TypeError('selecting prototype node: no candidates');
    };
    const history = [
      historyEvent('OrchestratorStarted', T0),
      historyEvent('ExecutionStarted', T0, { Name: 'o' }),
      historyEvent('TimerCreated', T0, { EventId: 0, FireAt: new Date(T0 + 1_000).toISOString() }),
      historyEvent('OrchestratorCompleted', T0),
      historyEvent('OrchestratorStarted', T0 + 1_000),
      historyEvent('TimerFired', T0 + 1_000, { TimerId: 0, FireAt: new Date(T0 + 1_000).toISOString() }),
    ];

    const replay = await replayWithSdk(orchestrator, {
      instanceId: 'canary-fail',
      parentInstanceId: undefined,
      functionName: 'o',
      history,
      input: undefined,
      log: () => undefined,
    });

    assert.equal(replay.failed, true);
    assert.equal(replay.state.error, 'selecting prototype node: no candidates');
    assert.equal(replay.state.customStatus, 'about to fail');
    assert.ok(replay.exception instanceof TypeError);
  });
});
