/**
 * The orchestration seam (functions/orchestration.ts, orchestrations/children.ts): the input read once
 * through the schema, the output read through the handle, a child's failure read as a value.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OrchestrationContext, Task } from 'durable-functions';
import { z } from 'zod';

import { createDurableRunner, createVirtualClock } from '../../cli/runner/index.js';
import {
  instanceStatusHandler,
  localDurableClient,
  READ_INSTANCE_STATUS,
} from '../../functions/instance-status.activity.js';
import { defineOrchestration, INVALID_ORCHESTRATION_INPUT, outputOf } from '../../functions/orchestration.js';
import type { ChildResult } from '../../functions/orchestrations/children.js';
import { callChild } from '../../functions/orchestrations/children.js';
import { StepFailure } from '../../functions/orchestrations/step-failure.js';

const START = Date.parse('2026-11-22T10:00:00.000Z');

/** A child that counts to `n`, or fails at `draining` when `fail` is set. */
const child = defineOrchestration(
  'refreshPool',
  z.object({ n: z.number().int(), fail: z.boolean().optional() }),
  function* (context: OrchestrationContext, input): Generator<Task, { counted: number }, unknown> {
    context.df.setCustomStatus({ step: 'draining', node: 'n1' });
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1000));
    if (input.fail === true) {
      throw StepFailure.terminal('draining', 'PdbBlocked', 'pod db would violate its budget', 'move it');
    }
    return { counted: input.n };
  },
);

/** A parent that runs the child and returns how it ended, as a value. */
const parent = defineOrchestration(
  'refreshCluster',
  z.object({ fail: z.boolean() }),
  function* (
    context: OrchestrationContext,
    input,
  ): Generator<Task, ChildResult<{ counted: number }>, unknown> {
    return yield* callChild(context, child, { n: 3, fail: input.fail }, 'child-1');
  },
);

function runner() {
  return createDurableRunner({
    clock: createVirtualClock({ startMs: START }),
    orchestrators: { [child.name]: child.handler, [parent.name]: parent.handler },
    activities: { [READ_INSTANCE_STATUS]: instanceStatusHandler(localDurableClient) },
  });
}

void describe('defineOrchestration', () => {
  void it('reads the input once through the schema; the output through the handle', async () => {
    const status = await runner().startOrchestration(child, { n: 2 }, 'typed');
    assert.equal(status.runtimeStatus, 'Completed');
    assert.deepEqual(outputOf(child, status), { counted: 2 });
    // Another orchestration's handle does not read it.
    assert.equal(outputOf(parent, status), undefined);
  });

  void it('fails a bad input at once, terminal, naming the field', async () => {
    const status = await runner().startOrchestration('refreshPool', { n: 'two' }, 'bad-input');
    assert.equal(status.runtimeStatus, 'Failed');
    assert.match(
      status.failure?.ErrorMessage ?? '',
      /^validating-input: parsing input of orchestration refreshPool: n: /,
    );
    assert.deepEqual(status.customStatus, {
      failure: {
        step: 'validating-input',
        kind: 'terminal',
        code: INVALID_ORCHESTRATION_INPUT,
        message: (status.failure?.ErrorMessage ?? '').replace(/^validating-input: /, ''),
      },
    });
    assert.equal(outputOf(child, status), undefined);
  });

  void it('keeps a failed run Failed with its message, and records the failure as a value', async () => {
    const status = await runner().startOrchestration(child, { n: 1, fail: true }, 'failing');
    assert.equal(status.runtimeStatus, 'Failed');
    assert.match(status.failure?.ErrorMessage ?? '', /^draining: pod db would violate its budget — move it/);
    assert.deepEqual(status.customStatus, {
      step: 'draining',
      node: 'n1',
      failure: {
        step: 'draining',
        kind: 'terminal',
        code: 'PdbBlocked',
        message: 'pod db would violate its budget — move it',
        advice: 'move it',
      },
    });
  });
});

void describe('callChild', () => {
  void it("returns the child's output", async () => {
    const status = await runner().startOrchestration(parent, { fail: false }, 'parent-ok');
    assert.deepEqual(outputOf(parent, status), { ok: true, output: { counted: 3 } });
  });

  void it("returns the child's failure as a value: its step, kind, code, message and advice", async () => {
    const run = runner();
    const status = await run.startOrchestration(parent, { fail: true }, 'parent-failing');
    assert.equal(status.runtimeStatus, 'Completed');
    assert.deepEqual(outputOf(parent, status), {
      ok: false,
      failure: {
        step: 'draining',
        kind: 'terminal',
        code: 'PdbBlocked',
        message: 'pod db would violate its budget — move it',
        advice: 'move it',
      },
    });
    // The child itself still ended Failed, as operators see it.
    assert.equal((await run.getStatus('child-1'))?.runtimeStatus, 'Failed');
  });
});
