/**
 * Durable timers and external events raced against them, made so that no task is ever sent twice
 * (docs/conventions.md): durable-functions 3.5 sends the whole action tree of every new Task.any
 * (azure-functions-durable-js#574) and the Durable extension makes each copy a task of its own, after
 * which its ids and the SDK's drift apart.
 *
 * A timer or a race that was already sent and must be waited for again (by `inParallel`, when the other
 * branch moved on) is stood in for by a new one equivalent to it: `standInFor` says how.
 */
import type { OrchestrationContext, Task, TimerTask } from 'durable-functions';

/** Fire times of the timers made by `durableTimer`. */
const fireTimes = new WeakMap<Task, number>();

/** How to make a new task that stands in for one already sent (a timer or a race). */
const standIns = new WeakMap<Task, () => Task>();

/** A durable timer whose fire time is known to `fireTimeOf`, and which a new timer can stand in for. */
export function durableTimer(context: OrchestrationContext, fireAt: Date): TimerTask {
  const timer = context.df.createTimer(fireAt);
  fireTimes.set(timer, fireAt.getTime());
  standIns.set(timer, () => durableTimer(context, fireAt));
  return timer;
}

/** When a timer made by `durableTimer` fires (ms); undefined for any other task. */
export function fireTimeOf(task: Task): number | undefined {
  return fireTimes.get(task);
}

/**
 * How to make a new task equivalent to `task`, already sent: a timer at the same time, or a race with a
 * new timer at the same time and a new event wait. Undefined for anything else (an activity: wait for it
 * alone).
 */
export function standInOf(task: Task): (() => Task) | undefined {
  return standIns.get(task);
}

/**
 * An external event raced against timers, with a new wait for each race. A wait is never sent twice: a
 * reused wait would be answered in the SDK while the extension's copy stays open and its ids drift. The
 * timer of a race the event won is cancelled, which is what lets the extension's replay move on.
 *
 * The SDK hands an event to the newest open wait of its name. One delivered while no race runs (during
 * an activity) is taken by the wait of an earlier race, whose timer fired first: `take` finds it there,
 * so no event is heard twice or lost. One delivered before any wait was made is kept by the SDK and given
 * to the first wait made.
 */
export class EventWatch {
  private readonly waits: Task[] = [];
  private readonly taken = new Set<Task>();

  constructor(
    private readonly context: OrchestrationContext,
    readonly name: string,
  ) {}

  /** An event that arrived and was not taken yet, marked taken; undefined when none. */
  take(): Task | undefined {
    const arrived = this.waits.find((wait) => wait.isCompleted && !this.taken.has(wait));
    if (arrived !== undefined) this.taken.add(arrived);
    return arrived;
  }

  /**
   * Waits for `timer` or the event, whichever comes first: the event's wait (taken) when the event came
   * first — the timer is then cancelled — or undefined when the timer fired.
   */
  *race(timer: TimerTask): Generator<Task, Task | undefined, unknown> {
    const early = this.take();
    if (early !== undefined) {
      timer.cancel();
      return early;
    }
    const timers: TimerTask[] = [];
    yield this.raceOf(timer, timers);
    // The race may have been stood in for (inParallel): whichever of its waits completed is found here.
    const event = this.take();
    if (event === undefined) return undefined;
    for (const sent of timers) if (!sent.isCompleted && !sent.isFaulted) sent.cancel();
    return event;
  }

  private raceOf(timer: TimerTask, timers: TimerTask[]): Task {
    timers.push(timer);
    const wait = this.context.df.waitForExternalEvent(this.name);
    this.waits.push(wait);
    const race = this.context.df.Task.any([timer, wait]);
    const fireAt = fireTimeOf(timer);
    if (fireAt !== undefined) {
      standIns.set(race, () => this.raceOf(durableTimer(this.context, new Date(fireAt)), timers));
    }
    return race;
  }
}
