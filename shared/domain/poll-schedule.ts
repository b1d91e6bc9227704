/**
 * When a wait for a long operation reads the world again: the schedule of the orchestrations' monitor
 * pattern (functions/orchestrations/waits.ts), as a pure function of the time waited so far. Every read of
 * Azure Resource Manager spends its read budget (reads are what it throttles first:
 * https://learn.microsoft.com/azure/virtual-machines/compute-throttling-limits), and every second read
 * too late keeps a donor out of service or a run going: a schedule trades one against the other.
 */

/** When a wait reads again: first at the expected completion, then at a short interval or backing off. */
export interface PollSchedule {
  readonly expectedSeconds: number;
  readonly intervalSeconds: number;
  /**
   * An operation whose length varies around its expected completion: once it is overdue, each sleep is
   * as long as it is overdue so far (the reads back off: interval, interval, 2×, 4×… after the expected
   * completion), from `intervalSeconds` up to this. A few seconds late costs one read at the interval;
   * minutes late costs a few reads, not one every interval, and waits at most as long again as it was late.
   * With `lateShare`, the cap of its sleeps instead.
   */
  readonly backoffToSeconds?: number | undefined;
  /**
   * An operation whose length varies in proportion to itself (a stop of 113–183 s, a start of 25–40 s):
   * once it is overdue, each sleep is this share of the time waited since the request, from
   * `intervalSeconds` up to `backoffToSeconds` (reads at E, E·(1+s), E·(1+s)²…). A miss by a few
   * percent then costs one read whatever the operation's length, where a fixed interval costs a read per
   * interval of the overrun: a stop done at 190 s is read three times from 135 s at a quarter (135, 169,
   * 212), seven times every 10 s.
   */
  readonly lateShare?: number | undefined;
  /**
   * An operation that keeps something out of service while it runs (the donor's stop and start), whose
   * length is spread over a known range: from the expected completion until this many seconds after the
   * request (the range's slow end), a read every `intervalSeconds`, so that no run finishes more than an
   * interval before the wait sees it; past it, the backoff above (`lateShare`, `backoffToSeconds`), since
   * an operation later than any seen is stuck, not slow.
   */
  readonly steadyUntilSeconds?: number | undefined;
  /**
   * A wait whose length varies by orders of magnitude: after the expected completion each sleep is as
   * long as the wait so far (so it doubles), from `intervalSeconds` up to this.
   */
  readonly growToSeconds?: number | undefined;
}

/** The shortest sleep a durable timer can make: a millisecond. */
const MIN_DELAY_SECONDS = 0.001;

/**
 * Seconds to sleep before the next read of a wait that started `elapsedSeconds` ago: until the expected
 * completion while it is ahead, the short interval or the schedule's backoff after it, and never less
 * than a server's Retry-After.
 */
export function pollDelaySeconds(
  schedule: PollSchedule,
  elapsedSeconds: number,
  retryAfterSeconds?: number,
): number {
  const untilExpected = schedule.expectedSeconds - elapsedSeconds;
  return Math.max(
    // Less than a millisecond to go is due: a timer cannot fire sooner than the next millisecond, and
    // one set at now would find the same clock again (a manual clock never moves past it).
    untilExpected >= MIN_DELAY_SECONDS ? untilExpected : overdueDelaySeconds(schedule, elapsedSeconds),
    retryAfterSeconds ?? 0,
  );
}

function overdueDelaySeconds(schedule: PollSchedule, elapsedSeconds: number): number {
  const { intervalSeconds, growToSeconds, backoffToSeconds, lateShare, steadyUntilSeconds } = schedule;
  if (steadyUntilSeconds !== undefined && elapsedSeconds < steadyUntilSeconds) return intervalSeconds;
  if (growToSeconds !== undefined) return Math.min(growToSeconds, Math.max(intervalSeconds, elapsedSeconds));
  if (lateShare !== undefined) {
    const share = Math.ceil(lateShare * elapsedSeconds);
    return Math.min(backoffToSeconds ?? Number.POSITIVE_INFINITY, Math.max(intervalSeconds, share));
  }
  if (backoffToSeconds !== undefined) {
    return Math.min(backoffToSeconds, Math.max(intervalSeconds, elapsedSeconds - schedule.expectedSeconds));
  }
  return intervalSeconds;
}
