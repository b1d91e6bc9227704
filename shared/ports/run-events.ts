/**
 * The port to where run events go: CloudEvents 1.0 for operators to automate on, published
 * to an Event Grid topic by shared/adapters/eventgrid/run-event-publisher.ts. What each event says is the
 * application's (shared/application/run-events.ts); this is only the envelope and the promise.
 */

/** One event as published: CloudEvents 1.0 context attributes and a JSON `data`. */
export interface RunEvent {
  /** Deterministic per run and event: a replayed or retried publication carries the same id (dedupe). */
  readonly id: string;
  /** `io.vmss-prototype.<noun>.<verb>`, e.g. `io.vmss-prototype.refresh.started`. */
  readonly type: string;
  /** The pool: `/clusters/{cluster}/pools/{pool}`. */
  readonly source: string;
  /** What in the pool: `runs/{runId}`, `versions/{version}`, `nodes/{node}`. */
  readonly subject: string;
  /** RFC 3339: when it happened (the orchestration's deterministic time). */
  readonly time: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface RunEventPublisher {
  /**
   * Hands events over for delivery, in order, and returns at once: delivery (and its bounded retries
   * with backoff) happens in the background. Never throws; what still fails after the retries is logged
   * and dropped. Callers that must not end before delivery (an activity) `flush` with a bound.
   */
  publish(events: readonly RunEvent[]): void;
  /** Waits until everything handed over was delivered or given up (at most `timeoutMs`). */
  flush(timeoutMs?: number): Promise<void>;
}

/** What records metrics from run events (shared/application/run-metrics.ts over @opentelemetry/api). */
export interface RunEventRecorder {
  record(events: readonly RunEvent[]): void;
}
