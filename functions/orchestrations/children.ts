/**
 * Sub-orchestrations through their handles (functions/orchestration.ts): a child is started with a typed
 * input and its end is read as a value, `{ ok: true, output }` or `{ ok: false, failure }`, the failure a
 * FailedStep (step, kind, code, message, advice). Nothing here parses a message to learn the step:
 * - a child that failed recorded its failure value in its custom status before it ended (orchestration.ts);
 *   the parent reads it with the instance-status activity, a recorded (replayed) step of its history;
 * - a child whose failure the host made (it recorded none, or the read failed) is a failure of
 *   `refreshing` with the host's message;
 * - a start the host refused because the id is in use is `CHILD_ALREADY_RUNNING` (isAlreadyRunning: the
 *   host's own wording, the one thing it offers for that case).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { readInstanceStatus } from '../instance-status.activity.js';
import type { OrchestrationHandle } from '../orchestration.js';
import { carriedOutput } from '../orchestration.js';
import { call, childFailureMessage, isAlreadyRunning } from './call.js';
import type { FailedStep } from './step-failure.js';

/** How a child ended: its output, or its failure as a value. */
export type ChildResult<Output> =
  { readonly ok: true; readonly output: Output } | { readonly ok: false; readonly failure: FailedStep };

/** The failure code of a child the host would not start: its instance id is in use by a running one. */
export const CHILD_ALREADY_RUNNING = 'OrchestrationAlreadyRunning';

/** A started child: its task (to wait for, alone or in a race) and what reads its end. */
export interface ChildTask<Output> {
  readonly task: Task;
  readonly instanceId: string;
  readonly orchestration: OrchestrationHandle<unknown, Output>;
}

/** Starts `orchestration` as a sub-orchestration `instanceId`; wait for `task`, then read `childResult`. */
export function startChild<Input, Output>(
  context: OrchestrationContext,
  orchestration: OrchestrationHandle<Input, Output>,
  input: NoInfer<Input>,
  instanceId: string,
): ChildTask<Output> {
  return {
    task: context.df.callSubOrchestrator(orchestration.name, input, instanceId),
    instanceId,
    orchestration,
  };
}

export function isFinished(child: ChildTask<unknown>): boolean {
  return child.task.isCompleted || child.task.isFaulted;
}

/** How a finished child ended (reads its recorded failure when it failed). */
export function* childResult<Output>(
  context: OrchestrationContext,
  child: ChildTask<Output>,
): Generator<Task, ChildResult<Output>, unknown> {
  if (!child.task.isFaulted) {
    return { ok: true, output: carriedOutput(child.orchestration, child.task.result) };
  }
  const error = child.task.result;
  if (isAlreadyRunning(error)) {
    return {
      ok: false,
      failure: {
        step: 'refreshing',
        kind: 'transient',
        code: CHILD_ALREADY_RUNNING,
        message: `instance ${child.instanceId} is already running`,
      },
    };
  }
  let recorded: FailedStep | undefined;
  try {
    ({ failure: recorded } = yield* call(
      context,
      readInstanceStatus,
      { instanceId: child.instanceId },
      { step: 'refreshing' },
    ));
  } catch {
    // Unreadable: the host's message stands for it.
  }
  return {
    ok: false,
    failure: recorded ?? {
      step: 'refreshing',
      kind: 'terminal',
      code: 'ChildFailed',
      message: childFailureMessage(error),
    },
  };
}

/** Runs `orchestration` as a sub-orchestration and returns how it ended, as a value. */
export function* callChild<Input, Output>(
  context: OrchestrationContext,
  orchestration: OrchestrationHandle<Input, Output>,
  input: NoInfer<Input>,
  instanceId: string,
): Generator<Task, ChildResult<Output>, unknown> {
  const child = startChild(context, orchestration, input, instanceId);
  try {
    yield child.task;
  } catch {
    // Read from the task below.
  }
  return yield* childResult(context, child);
}

/** The text a failure value reads as: `<step>: <cause>` (StepFailure's message). */
export function failureText(failure: FailedStep): string {
  return `${failure.step}: ${failure.message}`;
}
