// Time source of the local durable runner: a virtual clock that jumps to the next durable timer
// (so a one-hour poll interval costs no wall time) or the system clock for real runs.

/** What the runner needs from time. */
export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
  /**
   * Resolves once `now() >= epochMs`. A virtual clock jumps there; a real one waits and resolves
   * early (without reaching the time) when `signal` aborts.
   */
  sleepUntil(epochMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * True when time moves only through `sleepUntil`. The runner then fires timers only when no
   * activity is in flight, so activities never lose a race against a timer they would beat.
   */
  readonly virtual: boolean;
}

export interface VirtualClockOptions {
  /** Start time in epoch milliseconds. */
  startMs: number;
  /**
   * Called before the clock jumps to a pending timer, with the target time. Plug the simulator's
   * clock in here so the simulated world reaches the same instant (e.g. LROs progress) first.
   */
  onAdvance?: (toMs: number) => void | Promise<void>;
}

export interface VirtualClock extends Clock {
  /** Moves time forward by hand (never backwards), e.g. to let a simulated operation finish. */
  advanceTo(epochMs: number): Promise<void>;
}

/** A clock that only moves when the runner (or a caller) advances it. */
export function createVirtualClock(options: VirtualClockOptions): VirtualClock {
  let current = options.startMs;
  async function advanceTo(epochMs: number): Promise<void> {
    if (epochMs <= current) return;
    await options.onAdvance?.(epochMs);
    current = Math.max(current, epochMs);
  }
  return {
    virtual: true,
    now: () => current,
    sleepUntil: advanceTo,
    advanceTo,
  };
}

/** Wall-clock time; timers really wait. */
export function createSystemClock(): Clock {
  return {
    virtual: false,
    now: () => Date.now(),
    sleepUntil(epochMs: number, signal?: AbortSignal): Promise<void> {
      const delay = epochMs - Date.now();
      if (delay <= 0 || signal?.aborted === true) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(done, delay);
        function done(): void {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
      });
    },
  };
}
