/**
 * Request-rate accounting of the simulated ARM, in the shape Azure reports it:
 *
 * - Azure Resource Manager's token buckets (reads 250 / 25 per s, writes and deletes 200 / 10 per s,
 *   per subscription and principal; a global bucket per subscription 15 times as large for all
 *   principals together; learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling
 *   "Regional throttling and token bucket algorithm"), reported on every response as
 *   `x-ms-ratelimit-remaining-subscription-reads|writes|deletes` and
 *   `x-ms-ratelimit-remaining-subscription-global-reads|writes|deletes` (249 and 3749 after one read
 *   on a full bucket, as Azure answers). Tokens come back each whole second;
 * - the Compute resource provider's policies (learn.microsoft.com/azure/virtual-machines/compute-throttling-limits:
 *   per subscription and region, a bucket of a cap's tokens, one per request, refilled at the start of
 *   each minute), reported as `x-ms-ratelimit-remaining-resource: Microsoft.Compute/<policy>;<remaining>`
 *   with the policy names Compute sends (`GetVMScaleSet3Min`, `HighCostGetVMScaleSet3Min`, …). The
 *   count falls with every call within a minute and is back at the next minute, on any clock speed.
 *
 * When a bucket is empty and enforcement is on, the request is refused like Compute refuses it: 429,
 * code `OperationNotAllowed`, a `TooManyRequests` detail whose target is the policy and whose message
 * is the JSON Compute writes (operationGroup, window, allowed and measured counts), and `Retry-After`.
 * Buckets refill on simulated time only. Per-resource buckets and Compute's 30-minute policies are not
 * modelled (see sim/arm/README.md).
 */
import type { SimClock } from '../contracts.js';
import type { ArmErrorBody } from './compute-state.js';

/** A Compute RP throttling policy: a per-subscription bucket of `cap` requests refilled `perMinute`. */
export interface ComputePolicy {
  readonly name: string;
  readonly perMinute: number;
  readonly cap: number;
}

/**
 * Subscription-level limits of Microsoft's table (refill per minute / cap). Header names follow the
 * responses Compute sends; for the policies whose name is not published, the name follows the same
 * pattern (documented as unconfirmed in sim/README.md).
 */
export const COMPUTE_POLICIES = {
  getScaleSet: { name: 'GetVMScaleSet3Min', perMinute: 800, cap: 2400 },
  highCostGetScaleSet: { name: 'HighCostGetVMScaleSet3Min', perMinute: 360, cap: 1080 },
  getScaleSetVm: { name: 'GetVMScaleSetVM3Min', perMinute: 2000, cap: 6000 },
  updateScaleSet: { name: 'UpdateVMScaleSet3Min', perMinute: 500, cap: 1500 },
  deleteScaleSet: { name: 'DeleteVMScaleSet3Min', perMinute: 175, cap: 525 },
  scaleSetVmRequests: { name: 'VMScaleSetBatchedVMRequests5Min', perMinute: 500, cap: 1500 },
  lowCostGetVm: { name: 'LowCostGet3Min', perMinute: 8000, cap: 24000 },
  highCostGetVm: { name: 'HighCostGet3Min', perMinute: 300, cap: 900 },
  updateVm: { name: 'PutVM3Min', perMinute: 500, cap: 1500 },
} as const satisfies Record<string, ComputePolicy>;

const VMSS = 'microsoft.compute/virtualmachinescalesets';
const VM = 'microsoft.compute/virtualmachines';

/** The Compute policy an RBAC action (and, for reads, whether it is a list) is charged to. */
export function computePolicyOf(action: string, isCollection: boolean): ComputePolicy | undefined {
  const lower = action.toLowerCase();
  if (lower.startsWith(`${VMSS}/virtualmachines/`)) {
    if (lower.endsWith('/read')) {
      return isCollection && lower === `${VMSS}/virtualmachines/read`
        ? COMPUTE_POLICIES.highCostGetScaleSet
        : COMPUTE_POLICIES.getScaleSetVm;
    }
    return COMPUTE_POLICIES.scaleSetVmRequests;
  }
  if (lower.startsWith(`${VMSS}/`)) {
    if (lower === `${VMSS}/read`) {
      return isCollection ? COMPUTE_POLICIES.highCostGetScaleSet : COMPUTE_POLICIES.getScaleSet;
    }
    if (lower === `${VMSS}/instanceview/read`) return COMPUTE_POLICIES.highCostGetScaleSet;
    if (lower === `${VMSS}/extensions/read`) return COMPUTE_POLICIES.getScaleSetVm;
    if (
      lower === `${VMSS}/delete` ||
      lower === `${VMSS}/poweroff/action` ||
      lower === `${VMSS}/deallocate/action`
    ) {
      return COMPUTE_POLICIES.deleteScaleSet;
    }
    return COMPUTE_POLICIES.updateScaleSet;
  }
  if (lower.startsWith(`${VM}/`)) {
    if (lower.endsWith('/read')) {
      return isCollection && lower === `${VM}/read`
        ? COMPUTE_POLICIES.highCostGetVm
        : COMPUTE_POLICIES.lowCostGetVm;
    }
    return COMPUTE_POLICIES.updateVm;
  }
  return undefined;
}

interface Bucket {
  tokens: number;
  /** The last refill instant; the next comes `tickMs` later. */
  atMs: number;
  tickMs: number;
  /** Requests charged since the bucket was last full, for the 429 detail's measured count. */
  measured: number;
  sinceMs: number;
}

/** What charging a request decided: the headers to send and, when refused, the ARM error. */
export interface ThrottleDecision {
  headers: Record<string, string>;
  refused?: { body: ArmErrorBody; retryAfterSeconds: number };
}

export interface ArmThrottleOptions {
  clock: SimClock;
  /** Refuse requests once a bucket is empty (default: only report the remaining counts). */
  enforce?: boolean;
}

type ArmKind = 'reads' | 'writes' | 'deletes';

const ARM_BUCKETS: Record<ArmKind, { cap: number; perSecond: number }> = {
  reads: { cap: 250, perSecond: 25 },
  writes: { cap: 200, perSecond: 10 },
  deletes: { cap: 200, perSecond: 10 },
};

/** ARM's global subscription limit: 15 times a principal's, shared by every principal. */
const GLOBAL_FACTOR = 15;

export class ArmThrottle {
  private readonly buckets = new Map<string, Bucket>();
  private readonly clock: SimClock;
  private readonly enforce: boolean;

  constructor(options: ArmThrottleOptions) {
    this.clock = options.clock;
    this.enforce = options.enforce ?? false;
  }

  /**
   * Charges one request of `subscriptionId` to ARM's bucket for its method and, for Compute routes, to
   * the action's policy. Returns the headers to send; `refused` when a bucket was empty and enforcing.
   */
  charge(
    subscriptionId: string,
    method: string,
    action: string | undefined,
    isCollection: boolean,
    principal = '',
  ): ThrottleDecision {
    const kind: ArmKind =
      method === 'GET' || method === 'HEAD' ? 'reads' : method === 'DELETE' ? 'deletes' : 'writes';
    const arm = ARM_BUCKETS[kind];
    const armBucket = this.take(`${subscriptionId}|${principal}|arm|${kind}`, arm.cap, arm.perSecond, 1000);
    const globalBucket = this.take(
      `${subscriptionId}|arm-global|${kind}`,
      arm.cap * GLOBAL_FACTOR,
      arm.perSecond * GLOBAL_FACTOR,
      1000,
    );
    const headers: Record<string, string> = {
      [`x-ms-ratelimit-remaining-subscription-${kind}`]: String(Math.max(0, Math.floor(armBucket.tokens))),
      [`x-ms-ratelimit-remaining-subscription-global-${kind}`]: String(
        Math.max(0, Math.floor(globalBucket.tokens)),
      ),
    };
    const empty = [armBucket, globalBucket].find((bucket) => bucket.tokens < 0);
    if (this.enforce && empty) {
      const retryAfterSeconds = secondsUntilRefill(empty, this.clock.nowMs());
      return {
        headers,
        refused: {
          retryAfterSeconds,
          body: {
            code: 'SubscriptionRequestsThrottled',
            message: `Number of '${kind === 'reads' ? 'read' : kind === 'writes' ? 'write' : 'delete'}' requests for subscription '${subscriptionId}' actor '' scope '' exceeded. Please try again after '${retryAfterSeconds}' seconds after additional tokens are available. Refer to https://aka.ms/arm-throttling for additional information.`,
          },
        },
      };
    }
    const policy = action === undefined ? undefined : computePolicyOf(action, isCollection);
    if (!policy) return { headers };
    const bucket = this.take(
      `${subscriptionId}|compute|${policy.name}`,
      policy.cap,
      policy.perMinute,
      60_000,
    );
    headers['x-ms-ratelimit-remaining-resource'] =
      `Microsoft.Compute/${policy.name};${Math.max(0, Math.floor(bucket.tokens))}`;
    headers['x-ms-request-charge'] = '1';
    if (!this.enforce || bucket.tokens >= 0) return { headers };
    return { headers, refused: computeThrottled(policy, bucket, this.clock.nowMs()) };
  }

  /** Empties a Compute policy's bucket (tests, fault presets): the next request charged to it is refused. */
  exhaust(subscriptionId: string, policy: ComputePolicy): void {
    const bucket = this.take(
      `${subscriptionId}|compute|${policy.name}`,
      policy.cap,
      policy.perMinute,
      60_000,
    );
    bucket.tokens = 0;
  }

  /**
   * Takes a token from a bucket of `cap` that gets `perTick` tokens back at the end of each whole
   * `tickMs` since it was created (ARM: each second; Compute: each minute).
   */
  private take(key: string, cap: number, perTick: number, tickMs: number): Bucket {
    const nowMs = this.clock.nowMs();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: cap, atMs: nowMs, tickMs, measured: 0, sinceMs: nowMs };
      this.buckets.set(key, bucket);
    }
    const ticks = Math.floor((nowMs - bucket.atMs) / tickMs);
    if (ticks > 0) {
      bucket.tokens = Math.min(cap, bucket.tokens + ticks * perTick);
      bucket.atMs += ticks * tickMs;
    }
    if (bucket.tokens >= cap) {
      bucket.measured = 0;
      bucket.sinceMs = nowMs;
    }
    bucket.tokens -= 1;
    bucket.measured += 1;
    if (this.enforce && bucket.tokens < 0) bucket.tokens = -1; // a refused request costs nothing more
    return bucket;
  }
}

/** Whole seconds until the bucket's next refill (at least 1). */
function secondsUntilRefill(bucket: { atMs: number; tickMs: number }, nowMs: number): number {
  return Math.max(1, Math.ceil((bucket.atMs + bucket.tickMs - nowMs) / 1000));
}

/** Compute's throttling error, with `Retry-After` until the bucket's next refill. */
export function computeThrottled(
  policy: ComputePolicy,
  window: { measured: number; sinceMs: number; tokens: number; atMs: number; tickMs: number },
  nowMs: number,
): { body: ArmErrorBody; retryAfterSeconds: number } {
  const retryAfterSeconds = secondsUntilRefill(window, nowMs);
  return {
    body: computeThrottlingBody(
      policy,
      window.sinceMs,
      nowMs + retryAfterSeconds * 1000,
      policy.cap,
      window.measured,
    ),
    retryAfterSeconds,
  };
}

/** The body Compute answers a throttled request with (also used for injected 429 faults). */
export function computeThrottlingBody(
  policy: ComputePolicy,
  startMs: number,
  endMs: number,
  allowedRequestCount: number,
  measuredRequestCount: number,
): ArmErrorBody & { innererror: { internalErrorCode: string } } {
  return {
    code: 'OperationNotAllowed',
    message:
      'The server rejected the request because too many requests have been received for this subscription.',
    details: [
      {
        code: 'TooManyRequests',
        target: policy.name,
        message: JSON.stringify({
          operationGroup: policy.name,
          startTime: new Date(startMs).toISOString(),
          endTime: new Date(endMs).toISOString(),
          allowedRequestCount,
          measuredRequestCount,
        }),
      },
    ],
    innererror: { internalErrorCode: 'TooManyRequestsReceived' },
  };
}
