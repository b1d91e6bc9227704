/**
 * The operator's cancel of a pool refresh ("Ctrl-C and cancel are truthful at every step"): the
 * cancel event (Ctrl-C in the CLI, the HTTP API's cancel) and a cancel asked on the pool's lease
 * (`vmss-prototype cancel`, any machine) stop the run at its next activity boundary, wherever it is, and
 * the run gives back what it holds before it ends.
 *
 * - `watchCancel` starts the watch once the plan decided to refresh, before the lease is taken. It opens a
 *   wait for the event at once (raced against a timer due now): from then on an event raised while an
 *   activity runs completes an open wait, which the next boundary finds (races.ts EventWatch); one raised
 *   during planning, kept by the SDK until a wait exists, is found right there.
 * - Every boundary — before an activity is called (call.ts) and before a sleep (waits.ts) — acts on an
 *   event that arrived or on a request the lease carried: it throws `cancelled`, once. Every sleep races
 *   the event, so a long wait ends at once.
 * - While the run holds the pool, every activity carries the lease to read first (`leaseWatchOf`;
 *   shared/application/pool-cancel.ts): a request written there is seen by the very next activity, which
 *   then does nothing. An activity right after the lease's renewal at its boundary carries none: the
 *   renewal has just read the lease and taken its request (`askCancel`), acted on before the call.
 * - `shielded` runs a generator the cancel never interrupts: giving back, deleting what a failed step
 *   left, and the waits for changes that cannot be undone (publishing a version). A cancel that comes then
 *   is acted on at the first boundary after it.
 * - Once acted on, nothing stops the run again: it gives back and ends.
 * - The run notes what it gave back (`noteGivenBack`) and, once nothing can be given back any more, where
 *   it stands (`notePastReturn`): the failure of a cancelled run says both (`cancelReport`).
 * Everything here is per orchestration context (one per replay) and rebuilt deterministically by replay.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { EVENT } from '../../shared/application/orchestration-ids.js';
import type { CancelWatch } from '../../shared/application/pool-cancel.js';
import { durableTimer, EventWatch } from './races.js';
import type { StepName } from './step-failure.js';
import { StepFailure } from './step-failure.js';

/** The failure code of a cancelled run. */
export const CANCELLED = 'Cancelled';

interface RunCancel {
  readonly events: EventWatch;
  /** A cancel seen (event or lease) and not acted on yet: its reason. */
  asked?: string;
  /** Acted on: the run is giving back; nothing stops it again. */
  acted: boolean;
  /** Depth of the shielded generators running now. */
  shield: number;
  /** The pool's lease while the run holds it: activities read it first. */
  lease?: CancelWatch;
  readonly gaveBack: string[];
  pastReturn?: string;
}

const runs = new WeakMap<OrchestrationContext, RunCancel>();

/** Starts the run's cancel watch (see above); a cancel already raised is acted on at the next boundary. */
export function* watchCancel(context: OrchestrationContext): Generator<Task, void, unknown> {
  const state: RunCancel = {
    events: new EventWatch(context, EVENT.cancel),
    acted: false,
    shield: 0,
    gaveBack: [],
  };
  runs.set(context, state);
  const now = new Date(context.df.currentUtcDateTime.getTime());
  const event = yield* state.events.race(durableTimer(context, now));
  if (event !== undefined) state.asked = reasonOf(event.result);
}

/** The pool's lease for activities to read first, while the run holds it (undefined: no longer). */
export function watchLease(context: OrchestrationContext, lease: CancelWatch | undefined): void {
  const state = runs.get(context);
  if (state === undefined) return;
  if (lease === undefined) delete state.lease;
  else state.lease = lease;
}

/** A cancel asked through the lease, as a renewal read it: acted on at the next boundary. */
export function askCancel(context: OrchestrationContext, reason: string): void {
  const state = runs.get(context);
  if (state !== undefined) state.asked ??= reasonOf(reason);
}

/** The watch while a cancel may still be acted on here (not shielded, not acted on yet). */
function open(context: OrchestrationContext): RunCancel | undefined {
  const state = runs.get(context);
  return state === undefined || state.acted || state.shield > 0 ? undefined : state;
}

/** A boundary: throws the cancel when one was asked (event or lease) and may be acted on here. */
export function stopIfCancelled(context: OrchestrationContext, step: StepName): void {
  const state = open(context);
  if (state === undefined) return;
  const event = state.events.take();
  if (event !== undefined) state.asked ??= reasonOf(event.result);
  if (state.asked !== undefined) throw act(state, step, state.asked);
}

/** The lease an activity called now reads first; undefined when a cancel cannot be acted on here. */
export function leaseWatchOf(context: OrchestrationContext): CancelWatch | undefined {
  return open(context)?.lease;
}

/** An activity found a cancel asked on the lease (it did nothing): the failure to throw. */
export function cancelledByLease(context: OrchestrationContext, step: StepName, reason: string): StepFailure {
  const state = runs.get(context);
  if (state === undefined) return cancelled(step, reason);
  state.asked ??= reasonOf(reason);
  return act(state, step, state.asked);
}

/** The event watch a sleep races against, when a cancel may be acted on here. */
export function cancelEventsOf(context: OrchestrationContext): EventWatch | undefined {
  return open(context)?.events;
}

/** A sleep's race was won by the cancel event: the failure to throw. */
export function cancelledByEvent(context: OrchestrationContext, step: StepName, event: Task): StepFailure {
  const state = runs.get(context);
  if (state === undefined) return cancelled(step, event.result);
  state.asked ??= reasonOf(event.result);
  return act(state, step, state.asked);
}

function act(state: RunCancel, step: StepName, reason: string): StepFailure {
  state.acted = true;
  return cancelled(step, reason);
}

/** The failure a cancel ends the step with: `<step>: cancelled: <reason>`. */
export function cancelled(step: StepName, reason: unknown): StepFailure {
  const why = reasonOf(reason);
  return StepFailure.terminal(step, CANCELLED, /^cancel/i.test(why) ? why : `cancelled: ${why}`);
}

export function isCancel(error: unknown): error is StepFailure & { readonly code: typeof CANCELLED } {
  return error instanceof StepFailure && error.code === CANCELLED;
}

function reasonOf(value: unknown): string {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : 'asked by the operator';
}

/**
 * Runs `work` so that no cancel interrupts it: no boundary inside acts on one, no sleep races the event,
 * no activity reads the lease first. Nests; a branch of `inParallel` may be shielded alone.
 */
export function* shielded<T>(
  context: OrchestrationContext,
  work: Generator<Task, T, unknown>,
): Generator<Task, T, unknown> {
  const state = runs.get(context);
  if (state === undefined) return yield* work;
  let input: { readonly value?: unknown; readonly error?: unknown; readonly throws: boolean } = {
    throws: false,
  };
  for (;;) {
    state.shield += 1;
    let next: IteratorResult<Task, T>;
    try {
      next = input.throws ? work.throw(input.error) : work.next(input.value);
    } finally {
      state.shield -= 1;
    }
    if (next.done === true) return next.value;
    try {
      input = { value: yield next.value, throws: false };
    } catch (error) {
      input = { error, throws: true };
    }
  }
}

/** Something the run gave back (a node, a snapshot, a version), for a cancelled run's message. */
export function noteGivenBack(context: OrchestrationContext, what: string): void {
  runs.get(context)?.gaveBack.push(what);
}

/** Where the run stands once nothing can be given back any more (a version published), in words. */
export function notePastReturn(context: OrchestrationContext, where: string): void {
  const state = runs.get(context);
  if (state !== undefined) state.pastReturn = where;
}

/** True once the run passed the point where a cancel can give everything back. */
export function pastReturn(context: OrchestrationContext): boolean {
  return runs.get(context)?.pastReturn !== undefined;
}

/**
 * The failure a cancelled run ends with, once it gave back what it held and released its lease (or
 * never took it): what it gave back, and where it stands when that was not everything.
 */
export function cancelReport(
  context: OrchestrationContext,
  failure: StepFailure,
  ended: { readonly leaseReleased: boolean },
): StepFailure {
  const state = runs.get(context);
  const gaveBack = state?.gaveBack ?? [];
  // A give-back that failed is in the failure's follow-up already.
  const nothing = failure.followUp === undefined ? ['it had changed nothing that needed giving back'] : [];
  const parts = [
    ...(gaveBack.length === 0 ? nothing : [`gave back ${gaveBack.join(', ')}`]),
    ...(state?.pastReturn === undefined ? [] : [state.pastReturn]),
    ended.leaseReleased ? "the pool's lease was released" : "the pool's lease was never taken",
  ];
  return failure.withFollowUp(parts.join('; '));
}
