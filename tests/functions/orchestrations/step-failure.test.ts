// How a failed step reads for operators: the step, the cause, the advice once, and what else went wrong.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { asStepFailure, StepFailure } from '../../../functions/orchestrations/step-failure.js';

void describe('StepFailure', () => {
  void it('reads "<step>: <cause> — <advice>" and keeps every part', () => {
    const failure = StepFailure.ofActivity(
      'snapshotting',
      { kind: 'terminal', code: 'OperationNotAllowed', message: 'quota exceeded', advice: 'raise the quota' },
      'the node was given back',
    );
    assert.equal(failure.message, 'snapshotting: quota exceeded — raise the quota; the node was given back');
    assert.equal(failure.reason, 'quota exceeded — raise the quota; the node was given back');
    assert.deepEqual(
      [failure.step, failure.kind, failure.code],
      ['snapshotting', 'terminal', 'OperationNotAllowed'],
    );
  });

  void it('shows an advice the message already contains only once', () => {
    const failure = StepFailure.terminal(
      'draining',
      'Timeout',
      'timed out; raise the timeout',
      'raise the timeout',
    );
    assert.equal(failure.message, 'draining: timed out; raise the timeout');
  });

  void it('appends what else went wrong last', () => {
    const failure = StepFailure.terminal('draining', 'Timeout', 'timed out', 'wait').withFollowUp(
      'restoring the node also failed: restoring-node: unreachable',
    );
    assert.equal(
      failure.message,
      'draining: timed out — wait; restoring the node also failed: restoring-node: unreachable',
    );
  });
});

void describe('asStepFailure', () => {
  void it('keeps a StepFailure as it is', () => {
    const failure = StepFailure.terminal('snapshotting', 'SnapshotFailed', 'failed');
    assert.equal(asStepFailure('capturing', failure), failure);
  });

  for (const [thrown, detail] of [
    [new Error('boom'), 'boom'],
    ['plain text', 'plain text'],
    [42, '42'],
    [undefined, 'undefined'],
  ] as const) {
    void it(`makes ${String(thrown)} an unexpected terminal failure of the step`, () => {
      const failure = asStepFailure('capturing', thrown);
      assert.deepEqual(
        [failure.step, failure.kind, failure.code, failure.detail],
        ['capturing', 'terminal', 'UnexpectedError', detail],
      );
      assert.equal(failure.message, `capturing: ${detail}`);
    });
  }
});
