/**
 * A window of sub-orchestrations (a cluster's pools, a subscription's pools): the caller starts children
 * while slots are free, then waits one round here. Each child is sent once (docs/conventions.md, issue
 * 26): the children started in this round race only a new timer; children started in earlier rounds are
 * never put in a new race, only waited for on their own, or looked at when a timer wakes the window.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { ChildResult, ChildTask } from './children.js';
import { childResult, isFinished } from './children.js';
import { durableTimer } from './races.js';

/** A child in the window, with what the caller keeps about it (a pool's name, a cluster's). */
export interface WindowEntry<Key, Output> {
  readonly key: Key;
  readonly child: ChildTask<Output>;
}

/**
 * One round: waits until a child started this round ends, or until `wakeAtMs` (something waits to
 * start: a slot, a jitter) when given; with nothing waiting to start, until a child of this round ends,
 * or else the oldest child in the window. Then takes every finished child out of `inFlight` (in start
 * order) and returns how each ended.
 */
export function* awaitWindowRound<Key, Output>(
  context: OrchestrationContext,
  inFlight: WindowEntry<Key, Output>[],
  started: readonly Task[],
  wakeAtMs: number | undefined,
): Generator<Task, { readonly key: Key; readonly ended: ChildResult<Output> }[], unknown> {
  if (wakeAtMs !== undefined) {
    const check = durableTimer(context, new Date(wakeAtMs));
    yield started.length === 0 ? check : context.df.Task.any([...started, check]);
  } else if (started.length > 0) {
    // The children of this round are sent together (they run at once).
    try {
      yield context.df.Task.any([...started]);
    } catch {
      // Read from the task below.
    }
  } else {
    const first = inFlight[0];
    if (first !== undefined && !isFinished(first.child)) {
      try {
        yield first.child.task;
      } catch {
        // Read from the task below.
      }
    }
  }
  const ended: { key: Key; ended: ChildResult<Output> }[] = [];
  for (const finished of inFlight.filter((entry) => isFinished(entry.child))) {
    inFlight.splice(inFlight.indexOf(finished), 1);
    ended.push({ key: finished.key, ended: yield* childResult(context, finished.child) });
  }
  return ended;
}
