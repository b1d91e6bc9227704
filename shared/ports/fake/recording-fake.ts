/**
 * What every in-memory fake of a port shares (karpenter's cloudprovider/fake shape): a log of the calls
 * it received, one-shot errors queued per method, and `reset()` for a fresh start. A `CallLog` holds
 * them with the clock; the per-resource fakes of one bundle (e.g. FakeKubernetes) share one, so its
 * calls come in one order and one outage fails them all.
 */

export interface RecordedCall<Method extends string> {
  readonly method: Method;
  readonly args: readonly unknown[];
  /** The fake's clock when the call arrived (epoch ms). */
  readonly at: number;
}

interface QueuedError {
  readonly error: unknown;
  readonly when?: (args: readonly unknown[]) => boolean;
}

/** The clock, the calls in order, the queued errors and the outage of one fake (or one bundle of them). */
export class CallLog<Method extends string> {
  readonly #calls: RecordedCall<Method>[] = [];
  readonly #errors = new Map<Method, QueuedError[]>();
  #outage: { readonly untilMs: number; readonly error: unknown } | undefined;

  /** `now`: the clock calls are stamped with and outages end by (epoch ms). */
  constructor(readonly now: () => number) {}

  /** Every call so far, in order. */
  get calls(): readonly RecordedCall<Method>[] {
    return this.#calls;
  }

  /** The calls of one method, in order. */
  callsTo(method: Method): readonly RecordedCall<Method>[] {
    return this.#calls.filter((call) => call.method === method);
  }

  /**
   * Makes the next call(s) of `method` throw: one error per call, in the order given. Pass the errors
   * the real adapter would throw (e.g. what its error mapping makes of an HTTP 429) to test the callers.
   */
  nextError(method: Method, ...errors: unknown[]): void {
    this.#queue(
      method,
      errors.map((error) => ({ error })),
    );
  }

  /** Like `nextError`, for the next call(s) of `method` whose arguments match (e.g. one scale set). */
  nextErrorWhen(method: Method, when: (args: readonly unknown[]) => boolean, ...errors: unknown[]): void {
    this.#queue(
      method,
      errors.map((error) => ({ error, when })),
    );
  }

  /** Every call fails with `error` until the clock reaches `untilMs` (an API server outage). */
  failAllUntil(untilMs: number, error: unknown): void {
    this.#outage = { untilMs, error };
  }

  /** Errors still queued for `method`. */
  pendingErrors(method: Method): number {
    return this.#errors.get(method)?.length ?? 0;
  }

  /** Forgets the calls, the queued errors and the outage. */
  reset(): void {
    this.#calls.length = 0;
    this.#errors.clear();
    this.#outage = undefined;
  }

  /**
   * One call of a port: recorded, failed with the next matching queued error, or answered by `body`
   * with a copy of its result (callers must not alias the fake's state), asynchronously as an adapter.
   */
  call<T>(method: Method, args: unknown[], body: () => T): Promise<T> {
    this.#calls.push({ method, args, at: this.now() });
    const queued = this.#errors.get(method) ?? [];
    const index = queued.findIndex((entry) => entry.when === undefined || entry.when(args));
    const entry = queued[index];
    try {
      if (this.#outage !== undefined && this.now() < this.#outage.untilMs) throw this.#outage.error;
      if (entry !== undefined) {
        queued.splice(index, 1);
        throw entry.error;
      }
      return Promise.resolve(structuredClone(body()));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #queue(method: Method, entries: QueuedError[]): void {
    this.#errors.set(method, [...(this.#errors.get(method) ?? []), ...entries]);
  }
}

/** A fake with its own call log, or the bundle of per-resource fakes that share one. */
export abstract class RecordingFake<Method extends string> {
  protected readonly log: CallLog<Method>;
  protected readonly now: () => number;

  /** `clock`: the fake's clock (a new log), or the log it shares. */
  protected constructor(clock: (() => number) | CallLog<Method>) {
    this.log = clock instanceof CallLog ? clock : new CallLog(clock);
    this.now = this.log.now;
  }

  /** Every call so far, in order. */
  get calls(): readonly RecordedCall<Method>[] {
    return this.log.calls;
  }

  /** The calls of one method, in order. */
  callsTo(method: Method): readonly RecordedCall<Method>[] {
    return this.log.callsTo(method);
  }

  /**
   * Makes the next call(s) of `method` throw: one error per call, in the order given. Pass the errors
   * the real adapter would throw (e.g. what its error mapping makes of an HTTP 429) to test the callers.
   */
  nextError(method: Method, ...errors: unknown[]): void {
    this.log.nextError(method, ...errors);
  }

  /** Like `nextError`, for the next call(s) of `method` whose arguments match (e.g. one scale set). */
  nextErrorWhen(method: Method, when: (args: readonly unknown[]) => boolean, ...errors: unknown[]): void {
    this.log.nextErrorWhen(method, when, ...errors);
  }

  /** Every call fails with `error` until the fake's clock reaches `untilMs` (an API server outage). */
  failAllUntil(untilMs: number, error: unknown): void {
    this.log.failAllUntil(untilMs, error);
  }

  /** Errors still queued for `method`. */
  pendingErrors(method: Method): number {
    return this.log.pendingErrors(method);
  }

  /** Forgets the calls and the queued errors (subclasses forget their state too). */
  reset(): void {
    this.log.reset();
  }

  /** One call of the port, through the log (`CallLog.call`). */
  protected call<T>(method: Method, args: unknown[], body: () => T): Promise<T> {
    return this.log.call(method, args, body);
  }
}
