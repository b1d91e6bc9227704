/**
 * Two phases of a run at once, each written as the usual sequential generator (`yield*` of calls, polls
 * and sleeps). Each branch runs until it yields a task; the orchestrator waits for whichever of the two
 * pending tasks completes first and resumes the branch that yielded it with what the runtime would have
 * given it directly (the task's result, or its error thrown in).
 *
 * No task is ever sent twice. durable-functions 3.5 sends the whole action tree of each new Task.any, and
 * the Durable extension schedules every copy again under a new id, after which its ids and the SDK's no
 * longer match (azure-functions-durable-js#574; the real host failed every refresh this way).
 * So when one branch moves on while the other's task was already sent:
 * - a pending timer is stood in for by a new timer at the same time (`durableTimer`); the first one
 *   still fires, unheard; a pending race of a timer and an event (a sleep the operator's cancel may end)
 *   by a new race with a new timer at the same time and a new event wait (races.ts `standInOf`);
 * - any other pending task (an activity) is waited for on its own (a task yielded alone is never sent
 *   again); the branch that moved on has its next task held back until then. Activities take seconds,
 *   and a held timer loses nothing (it fires at its own time, or at once when that has passed).
 * A task that completed while the orchestrator waited for the other resumes its branch without a yield.
 *
 * A branch that fails does not stop the other: both run to their end (giving the donor back must finish
 * whatever the image does), then the first failure is thrown.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { standInOf } from './races.js';

type Branch<T> = Generator<Task, T, unknown>;

interface Running<T> {
  readonly branch: Branch<T>;
  pending?: Task;
  done: boolean;
  value?: T;
  failed: boolean;
  error?: unknown;
}

interface Step {
  readonly value?: unknown;
  readonly error?: unknown;
  readonly throws: boolean;
}

/** Advances a branch with `input` (or throws `error` into it) until it yields a task or ends. */
function advance<T>(running: Running<T>, step: Step): void {
  try {
    const next = step.throws ? running.branch.throw(step.error) : running.branch.next(step.value);
    if (next.done === true) {
      running.done = true;
      running.value = next.value;
      running.pending = undefined;
    } else {
      running.pending = next.value;
    }
  } catch (error) {
    running.done = true;
    running.failed = true;
    running.error = error;
    running.pending = undefined;
  }
}

/** What a completed task gives the branch that yielded it. */
function outcomeOf(task: Task): Step {
  return task.isFaulted ? { error: task.result, throws: true } : { value: task.result, throws: false };
}

function isDone(task: Task): boolean {
  return task.isCompleted || task.isFaulted;
}

/** Runs both branches to their end; returns both values, or throws the first failure once both ended. */
export function* inParallel<A, B>(
  context: OrchestrationContext,
  first: Branch<A>,
  second: Branch<B>,
): Generator<Task, [A, B], unknown> {
  const a: Running<A> = { branch: first, done: false, failed: false };
  const b: Running<B> = { branch: second, done: false, failed: false };
  advance(a, { throws: false });
  advance(b, { throws: false });
  const sent = new WeakSet<Task>();
  const failures: unknown[] = [];
  const resume = (running: Running<unknown>, step: Step): void => {
    advance(running, step);
    if (running.failed) failures.push(running.error);
  };
  for (;;) {
    const pending = ([a, b] as Running<unknown>[]).filter(
      (running): running is Running<unknown> & { pending: Task } =>
        !running.done && running.pending !== undefined,
    );
    if (pending.length === 0) break;
    // A task already sent that completed meanwhile: its branch goes on without a yield.
    const finished = pending.find((running) => sent.has(running.pending) && isDone(running.pending));
    if (finished !== undefined) {
      resume(finished, outcomeOf(finished.pending));
      continue;
    }
    // One branch left, or an already sent task that only its own completion can end: wait for it alone.
    const blocking =
      pending.length === 1
        ? pending[0]
        : pending.find((running) => sent.has(running.pending) && standInOf(running.pending) === undefined);
    if (blocking !== undefined) {
      const task = blocking.pending;
      sent.add(task);
      let step: Step;
      try {
        step = { value: yield task, throws: false };
      } catch (error) {
        step = { error, throws: true };
      }
      resume(blocking, step);
      continue;
    }
    // Every task here is new: a timer or a race sent before is stood in for by a new one.
    const race = pending.map((running) => ({
      running,
      task: (sent.has(running.pending) ? standInOf(running.pending)?.() : undefined) ?? running.pending,
    }));
    for (const entry of race) sent.add(entry.task);
    const winner = (yield context.df.Task.any(race.map((entry) => entry.task))) as Task;
    const entry = race.find((candidate) => candidate.task === winner);
    if (entry === undefined) continue;
    resume(entry.running, outcomeOf(winner));
  }
  for (const running of [a, b]) {
    if (running.failed && !failures.includes(running.error)) failures.push(running.error);
  }
  if (failures.length > 0) throw failures[0];
  return [a.value as A, b.value as B];
}
