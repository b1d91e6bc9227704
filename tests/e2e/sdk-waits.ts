/**
 * On the manual clock, the Azure SDK's retry waits cost no wall time. The SDK's retry policy sleeps
 * (`Retry-After` of a throttled answer up to the product's inline cap, or its exponential backoff after
 * a 5xx or a dropped connection) with a real timer, while simulated time stands still: the wait changes
 * nothing in the simulated world, yet the local runner fires no durable timer while an activity is in
 * flight, so one sleeping call held every run of a test (a fleet under throttling spent nine of its ten
 * minutes so). While a manual-clock harness runs, those waits end at once; the retries themselves, their
 * number and what the product does with each answer are unchanged. Any other timer keeps its delay.
 */

/** How the retry policy's wait is recognised: the SDK's `delay` helper called from `retryPolicy`. */
const RETRY_WAIT = /[\\/]ts-http-runtime[\\/].*[\\/]retryPolicy\.js/;
/** Frames enough to reach the retry policy from the timer call (timer, delay's executor, delay, policy). */
const FRAMES = 8;

let users = 0;
let original: typeof setTimeout | undefined;
let skipped = 0;

function isRetryWait(): boolean {
  // The call sites themselves, not the formatted stack: formatting (and source-mapping) every timer's stack
  // cost about 5 % of an explorer run's CPU.
  const limit = Error.stackTraceLimit;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, never called here
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = FRAMES;
  Error.prepareStackTrace = (_error, sites) => sites;
  try {
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder, isRetryWait);
    const sites = holder.stack as readonly NodeJS.CallSite[] | undefined;
    return sites?.some((site) => RETRY_WAIT.test(site.getFileName() ?? '')) ?? false;
  } finally {
    Error.stackTraceLimit = limit;
    Error.prepareStackTrace = prepare;
  }
}

/**
 * Makes the SDK's retry waits end at once until the returned function is called (calls nest: the
 * waits keep their delay again once every caller has restored them).
 */
export function skipSdkRetryWaits(): () => void {
  users += 1;
  if (users === 1) {
    const real = globalThis.setTimeout;
    original = real;
    const patched = function (this: unknown, handler: unknown, delay?: number, ...args: unknown[]) {
      const wait = typeof delay === 'number' && delay > 0 && isRetryWait() ? 0 : delay;
      if (wait !== delay) skipped += 1;
      return Reflect.apply(real, this, [handler, wait, ...args]) as ReturnType<typeof setTimeout>;
    };
    Object.assign(patched, real);
    globalThis.setTimeout = patched as typeof setTimeout;
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    users -= 1;
    if (users === 0 && original !== undefined) {
      globalThis.setTimeout = original;
      original = undefined;
    }
  };
}

/** How many SDK retry waits were cut short in this process (for the tests of this module). */
export function skippedSdkRetryWaits(): number {
  return skipped;
}
