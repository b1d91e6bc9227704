/**
 * Simulated time and the discrete-event scheduler every part of the simulator runs on. Manual mode moves
 * only when told to (tests, the local runner); scaled mode follows the wall clock times a factor.
 */
import type { Scheduler, SimClock } from '../contracts.js';

export type ClockMode = 'manual' | 'scaled';

export interface ScheduledEvent {
  readonly dueMs: number;
  readonly label: string;
}

export interface WorldClock extends SimClock, Scheduler {
  readonly mode: ClockMode;
  /** Simulated seconds per wall-clock second (1 in manual mode). */
  readonly timeFactor: number;
  /** Runs `action` at an absolute simulated time (now, if that time has passed). */
  at(dueMs: number, label: string, action: () => void): () => void;
  /** Moves simulated time forward, running every event that falls due on the way, in order. */
  advanceBy(seconds: number): void;
  /** Moves simulated time forward to `ms` (never backwards), running due events in order. */
  advanceTo(ms: number): void;
  /** Due time of the earliest pending event, so a runner can jump straight to it. */
  nextEventAt(): number | undefined;
  /** Pending events in the order they will run (for dumps and tests). */
  pending(): ScheduledEvent[];
  /** Scaled mode: stops the wall-clock timer. Pending events stay queued. Idempotent. */
  stop(): void;
  /**
   * Scaled mode: simulated time stops following the wall clock (only advanceBy/advanceTo move it) until
   * `thaw`, so a test can measure a simulated interval that its own wall-clock work (HTTP round trips on a
   * busy machine) must not stretch. Idempotent; a no-op in manual mode.
   */
  freeze(): void;
  /** Scaled mode: simulated time follows the wall clock again, from where it stood. Idempotent. */
  thaw(): void;
}

export interface ClockOptions {
  mode: ClockMode;
  /** Simulated start, epoch ms. */
  startMs: number;
  /** Scaled mode only: simulated seconds per wall second. */
  timeFactor?: number;
  /** Scaled mode only: wall clock in ms; defaults to `performance.now()`. Tests inject a fake. */
  wallMs?: () => number;
  /** Scaled mode only: arm a real timer that runs due events (default true; tests turn it off). */
  autoRun?: boolean;
  /** Called with an error an event threw; the scheduler goes on with the next event. */
  onEventError?: (label: string, error: unknown) => void;
}

interface QueuedEvent extends ScheduledEvent {
  readonly seq: number;
  readonly action: () => void;
  cancelled: boolean;
}

/** Upper bound on one timer sleep, so a changed factor or a jump never leaves the timer far off. */
const MAX_TIMER_SLEEP_MS = 1000;

export function createClock(options: ClockOptions): WorldClock {
  const mode = options.mode;
  const timeFactor = mode === 'scaled' ? (options.timeFactor ?? 1) : 1;
  if (!Number.isFinite(options.startMs)) throw new Error('creating clock: startMs must be a finite number');
  if (!(timeFactor > 0) || !Number.isFinite(timeFactor)) {
    throw new Error(
      `creating clock: timeFactor must be a positive number, got ${String(options.timeFactor)}`,
    );
  }
  const wallMs = options.wallMs ?? (() => performance.now());
  let wallStart = mode === 'scaled' ? wallMs() : 0;
  // While frozen, the wall clock reads as the moment of the freeze.
  let frozenWallMs: number | undefined;
  const autoRun = mode === 'scaled' && (options.autoRun ?? true);
  const onEventError =
    options.onEventError ??
    ((label: string, error: unknown) => {
      console.error(`sim clock: event "${label}" failed:`, error);
    });

  const queue: QueuedEvent[] = [];
  let seq = 0;
  // Manual: the current time. Scaled: the offset added by explicit jumps (advanceBy/advanceTo).
  let manualNow = options.startMs;
  let jumpMs = 0;
  // Time never goes backwards, even if the wall clock source does.
  let lastReported = options.startMs;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function computeNow(): number {
    const raw =
      mode === 'manual'
        ? manualNow
        : options.startMs + jumpMs + ((frozenWallMs ?? wallMs()) - wallStart) * timeFactor;
    lastReported = Math.max(lastReported, Math.floor(raw));
    return lastReported;
  }

  function insert(event: QueuedEvent): void {
    // Binary search for the first event that must run after this one (later due, or same due inserted later).
    let low = 0;
    let high = queue.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const other = queue[mid];
      if (other && (other.dueMs < event.dueMs || (other.dueMs === event.dueMs && other.seq < event.seq))) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    queue.splice(low, 0, event);
  }

  function dropCancelledHead(): void {
    while (queue[0]?.cancelled) queue.shift();
  }

  /** Runs events due at or before `limitMs`; in manual mode time steps to each event's due time. */
  function drain(limitMs: () => number): void {
    if (running) return;
    running = true;
    try {
      for (;;) {
        dropCancelledHead();
        const next = queue[0];
        if (!next || next.dueMs > limitMs()) break;
        queue.shift();
        if (mode === 'manual') manualNow = Math.max(manualNow, next.dueMs);
        try {
          next.action();
        } catch (error) {
          onEventError(next.label, error);
        }
      }
    } finally {
      running = false;
    }
  }

  function armTimer(): void {
    if (!autoRun || stopped || frozenWallMs !== undefined) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    dropCancelledHead();
    const next = queue[0];
    if (!next) return;
    const wait = Math.min(MAX_TIMER_SLEEP_MS, Math.max(0, (next.dueMs - computeNow()) / timeFactor));
    timer = setTimeout(() => {
      timer = undefined;
      clock.runDue();
    }, wait);
    // The servers keep the process alive; a pending simulated event alone must not.
    timer.unref();
  }

  function schedule(dueMs: number, label: string, action: () => void): () => void {
    seq += 1;
    const event: QueuedEvent = { dueMs: Math.round(dueMs), label, action, seq, cancelled: false };
    insert(event);
    armTimer();
    return () => {
      event.cancelled = true;
    };
  }

  const clock: WorldClock = {
    mode,
    timeFactor,
    nowMs: computeNow,
    now: () => new Date(computeNow()),
    after(delaySeconds, label, action) {
      if (!Number.isFinite(delaySeconds) || delaySeconds < 0) {
        throw new Error(`scheduling "${label}": delay must be a non-negative number of seconds`);
      }
      return schedule(computeNow() + delaySeconds * 1000, label, action);
    },
    at(dueMs, label, action) {
      return schedule(Math.max(dueMs, computeNow()), label, action);
    },
    runDue() {
      drain(computeNow);
      armTimer();
    },
    advanceBy(seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) {
        throw new Error(`advancing clock: seconds must be a non-negative number, got ${String(seconds)}`);
      }
      clock.advanceTo(computeNow() + seconds * 1000);
    },
    advanceTo(ms) {
      const target = Math.max(Math.floor(ms), computeNow());
      if (mode === 'manual') {
        drain(() => target);
        manualNow = Math.max(manualNow, target);
      } else {
        // Scaled: jump event by event, so a chain of events (each scheduling the next) plays out in
        // simulated time during the jump instead of bunching up at the target.
        for (;;) {
          dropCancelledHead();
          const next = queue[0];
          if (!next || next.dueMs > target) break;
          const now = computeNow();
          if (next.dueMs > now) jumpMs += next.dueMs - now;
          drain(computeNow);
        }
        const now = computeNow();
        if (target > now) jumpMs += target - now;
        drain(computeNow);
      }
      armTimer();
    },
    nextEventAt() {
      dropCancelledHead();
      return queue[0]?.dueMs;
    },
    pending() {
      return queue.filter((event) => !event.cancelled).map(({ dueMs, label }) => ({ dueMs, label }));
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    freeze() {
      if (mode !== 'scaled' || frozenWallMs !== undefined) return;
      frozenWallMs = wallMs();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    thaw() {
      if (frozenWallMs === undefined) return;
      wallStart += wallMs() - frozenWallMs;
      frozenWallMs = undefined;
      armTimer();
    },
  };
  return clock;
}
