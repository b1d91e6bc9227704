/**
 * Two phases of a run at once, each written as the usual sequential generator (`yield*` of calls, polls
 * and sleeps). Each branch runs until it yields a task; the orchestrator then waits for whichever of the
 * two pending tasks completes first (Task.any: replayed from history in the same order, so deterministic)
 * and resumes the branch that yielded it with what the runtime would have given it directly (the task's
 * result, or its error thrown in). A pending task stays in every Task.any until it completes, so none
 * completes unheard (as in call.ts callEach).
 *
 * A branch that fails does not stop the other: both run to their end (giving the donor back must finish
 * whatever the image does), then the first failure is thrown.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

type Branch<T> = Generator<Task, T, unknown>;

interface Running<T> {
  readonly branch: Branch<T>;
  pending?: Task;
  done: boolean;
  value?: T;
  failed: boolean;
  error?: unknown;
}

/** Advances a branch with `input` (or throws `error` into it) until it yields a task or ends. */
function advance<T>(running: Running<T>, step: { value?: unknown; error?: unknown; throws: boolean }): void {
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
  const failures: unknown[] = [];
  for (;;) {
    const pending = [a, b].filter((running) => !running.done && running.pending !== undefined);
    if (pending.length === 0) break;
    const [only] = pending;
    if (pending.length === 1 && only !== undefined && only.pending !== undefined) {
      // One branch left: it waits on its own task, exactly as it would alone.
      let value: unknown;
      let error: unknown;
      let throws = false;
      try {
        value = yield only.pending;
      } catch (thrown) {
        error = thrown;
        throws = true;
      }
      advance(only as Running<unknown>, { value, error, throws });
      if (only.failed) failures.push(only.error);
      continue;
    }
    const tasks = pending
      .map((running) => running.pending)
      .filter((task): task is Task => task !== undefined);
    const winner = (yield context.df.Task.any(tasks)) as Task;
    const owner = pending.find((running) => running.pending === winner);
    if (owner === undefined) continue;
    if (winner.isFaulted) advance(owner as Running<unknown>, { error: winner.result, throws: true });
    else advance(owner as Running<unknown>, { value: winner.result, throws: false });
    if (owner.failed) failures.push(owner.error);
  }
  for (const running of [a, b]) {
    if (running.failed && !failures.includes(running.error)) failures.push(running.error);
  }
  if (failures.length > 0) throw failures[0];
  return [a.value as A, b.value as B];
}
