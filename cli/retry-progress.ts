/**
 * One progress line on stderr per retry of an API server the run cannot reach (connection refused, a
 * timeout, a name that does not resolve), while the run backs off before its next attempt:
 * `retrying: the API server https://10.0.0.4:443 is unreachable (ECONNREFUSED); attempt 2 of 6, next in 10s`.
 * With --json, the same as one JSON object per line. The cause's wording is doctor's
 * (cli/doctor-reachability.ts); other transient failures (ARM throttling, a conflict) are not reported
 * here, their runs' progress says what they wait for.
 */
import type { RetryNotice } from '../functions/orchestrations/retry-notices.js';
import { formatDuration } from '../shared/config/duration.js';
import { isUnreachableCode } from './doctor-reachability.js';
import type { ProgressStream } from './progress.js';

/** One retry as `--json` writes it (one per line on stderr, beside the progress events). */
export interface RetryEvent {
  readonly event: 'retrying';
  readonly instanceId: string;
  readonly cluster?: string;
  readonly apiServer?: string;
  readonly code: string;
  readonly networkCode?: string;
  readonly attempt: number;
  /** Absent for a retry bounded by time only (the give-back of a node). */
  readonly maxAttempts?: number;
  readonly nextInSeconds: number;
}

/**
 * A listener for functions/orchestrations/retry-notices.ts. `apiServerOf` gives a cluster's API server
 * URL from the settings (never a credential: the URL is what doctor prints too).
 */
export function createRetryPrinter(
  stream: ProgressStream,
  apiServerOf: (cluster: string) => string | undefined,
  options: { readonly json: boolean } = { json: false },
): (notice: RetryNotice) => void {
  return (notice) => {
    const { failure } = notice;
    if (failure.kind !== 'transient' || !isUnreachableCode(failure.code)) return;
    const apiServer = notice.cluster === undefined ? undefined : apiServerOf(notice.cluster);
    const event: RetryEvent = {
      event: 'retrying',
      instanceId: notice.instanceId,
      ...(notice.cluster === undefined ? {} : { cluster: notice.cluster }),
      ...(apiServer === undefined ? {} : { apiServer }),
      code: failure.code,
      ...(failure.networkCode === undefined ? {} : { networkCode: failure.networkCode }),
      attempt: notice.nextAttempt,
      ...(Number.isFinite(notice.maxAttempts) ? { maxAttempts: notice.maxAttempts } : {}),
      nextInSeconds: Math.max(1, Math.round(notice.waitMs / 1000)),
    };
    stream.write(`${options.json ? JSON.stringify(event) : retryLine(event)}\n`);
  };
}

/** `retrying: the API server https://… is unreachable (ECONNREFUSED); attempt 2 of 6, next in 10s` */
export function retryLine(event: RetryEvent): string {
  const server = event.apiServer === undefined ? 'the API server' : `the API server ${event.apiServer}`;
  const cause =
    event.networkCode ?? (event.code === 'ClusterRequestTimeout' ? 'no answer in time' : event.code);
  const of = event.maxAttempts === undefined ? '' : ` of ${event.maxAttempts}`;
  return (
    `retrying: ${server} is unreachable (${cause}); attempt ${event.attempt}${of}, ` +
    `next in ${formatDuration(event.nextInSeconds)} (${event.instanceId})`
  );
}
