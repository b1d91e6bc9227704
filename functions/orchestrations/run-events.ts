/**
 * How the orchestrations report their milestones: they build the run events with the pure
 * builders of shared/application/run-events.ts, from their own deterministic time and ids, and hand
 * them to the `reportRunEvents` activity, which publishes in the background and records the metrics.
 * Events are built here but never sent from orchestrator code: a replay rebuilds identical events and
 * the activity's completed result comes from history, so nothing is published twice by a replay.
 *
 * One attempt, its failure ignored: reporting must never fail or delay a refresh.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { PhaseTiming } from '../../shared/application/run-events.js';
import type { RunEvent } from '../../shared/ports/run-events.js';
import { activities } from '../activities.js';
import { callOnce } from './call.js';

export function* reportRunEvents(
  context: OrchestrationContext,
  events: readonly RunEvent[],
): Generator<Task, void, unknown> {
  if (events.length === 0) return;
  yield* callOnce(context, activities.reportRunEvents, { events: [...events] });
}

/** The orchestration's deterministic time as RFC 3339. */
export function eventTime(context: OrchestrationContext): string {
  return context.df.currentUtcDateTime.toISOString();
}

/**
 * Times the phases of a run on the orchestration's clock (deterministic on replay): `enter(phase)` ends
 * the phase before; `timings()` ends the current one now.
 */
export class PhaseClock {
  readonly #entered: { readonly phase: string; readonly atMs: number }[] = [];

  constructor(private readonly context: OrchestrationContext) {}

  enter(phase: string): void {
    this.#entered.push({ phase, atMs: this.context.df.currentUtcDateTime.getTime() });
  }

  timings(): PhaseTiming[] {
    const nowMs = this.context.df.currentUtcDateTime.getTime();
    return this.#entered.map((entry, index) => ({
      phase: entry.phase,
      seconds: Math.max(0, ((this.#entered[index + 1]?.atMs ?? nowMs) - entry.atMs) / 1000),
    }));
  }
}
