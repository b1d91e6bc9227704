/**
 * The @azure/arm-compute clients of the compute ports: one per subscription, restricted to the
 * configured subscriptions, with the product's pipeline policies (per-attempt timeout; a long
 * Retry-After ends the call so that a durable timer does the waiting instead of a blocked activity).
 */
import { ComputeManagementClient } from '@azure/arm-compute';
import type { TokenCredential } from '@azure/core-auth';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import type { Counter, Meter } from '@opentelemetry/api';

import { TerminalError, TransientError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { retryAfterFromHeaders } from './errors.js';

export interface ArmRetryOptions {
  /** SDK retries of 408/429/5xx/connection errors inside one call (default 3). */
  readonly maxRetries?: number;
  /** Base of the SDK's exponential backoff (default 1000 ms). */
  readonly retryDelayInMs?: number;
  readonly maxRetryDelayInMs?: number;
  /**
   * Longest `Retry-After` the SDK may sleep through inside one call (default 10 s). A longer one fails
   * the call at once with a TransientError carrying `retryAfterMs`, so a durable timer does the waiting
   * instead of a blocked activity.
   */
  readonly maxInlineThrottleWaitMs?: number;
}

export interface ArmComputeOptions {
  readonly credential: TokenCredential;
  /** Subscriptions these ports may touch; refs naming any other are refused. Omitted: any. */
  readonly subscriptionIds?: readonly string[];
  /** ARM base URL (https only), e.g. the simulator's; default `https://management.azure.com`. */
  readonly endpoint?: string;
  /** PEM of the CA that signs the endpoint's certificate (the simulator's private CA). Replaces the system CAs. */
  readonly ca?: string;
  readonly retry?: ArmRetryOptions;
  /** Poll interval for the few operations these ports wait for (gallery, image definition). */
  readonly pollIntervalMs?: number;
  /** Per-request timeout (default 60 s): a hung connection must not hold an activity until its own timeout. */
  readonly requestTimeoutMs?: number;
  /** Where the ARM throttling count goes (`vmssp.arm.throttled_requests`); absent: not counted. */
  readonly meter?: Meter;
}

/** The counter of ARM answers 429 (docs/metrics.md). */
export const ARM_THROTTLED_METRIC = 'vmssp.arm.throttled_requests';

const DEFAULT_MAX_INLINE_THROTTLE_WAIT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export class ArmClients {
  readonly #options: ArmComputeOptions;
  readonly #allowed: ReadonlySet<string> | undefined;
  readonly #clients = new Map<string, ComputeManagementClient>();
  readonly #throttled: Counter | undefined;

  constructor(options: ArmComputeOptions) {
    if (options.endpoint !== undefined) {
      let protocol: string;
      try {
        protocol = new URL(options.endpoint).protocol;
      } catch {
        throw new TerminalError(
          'InvalidEndpoint',
          `configuring the Azure connection: "${options.endpoint}" is not a URL`,
        );
      }
      if (protocol !== 'https:') {
        // The SDK would refuse to send the bearer token anyway; fail at configuration, not first call.
        throw new TerminalError(
          'InsecureEndpoint',
          `configuring the Azure connection: the ARM endpoint must use https (got ${protocol})`,
        );
      }
    }
    this.#options = options;
    this.#throttled = options.meter?.createCounter(ARM_THROTTLED_METRIC, {
      description: 'Azure Resource Manager requests answered 429 (throttled), each attempt counted',
      unit: '{request}',
    });
    this.#allowed =
      options.subscriptionIds === undefined || options.subscriptionIds.length === 0
        ? undefined
        : new Set(options.subscriptionIds.map((id) => id.toLowerCase()));
  }

  /** True when the gateway may touch this subscription. */
  allows(subscriptionId: string): boolean {
    return this.#allowed === undefined || this.#allowed.has(subscriptionId.toLowerCase());
  }

  /** The client of a configured subscription; any other is refused (TerminalError) before a request. */
  client(subscriptionId: string, action: string): ComputeManagementClient {
    const key = subscriptionId.toLowerCase();
    if (!this.allows(subscriptionId)) {
      throw new TerminalError(
        'SubscriptionNotConfigured',
        `${action}: subscription ${subscriptionId} is not among the configured subscriptions`,
      );
    }
    let client = this.#clients.get(key);
    if (client === undefined) {
      client = this.#createClient(subscriptionId);
      this.#clients.set(key, client);
    }
    return client;
  }

  /** The ARM base URL the clients talk to. */
  endpoint(): string {
    return (this.#options.endpoint ?? 'https://management.azure.com').replace(/\/+$/, '');
  }

  /** Options for the few operations waited for in the call (`…AndWait`). */
  pollOptions(): { updateIntervalInMs?: number } {
    const interval = this.#options.pollIntervalMs;
    return interval === undefined ? {} : { updateIntervalInMs: interval };
  }

  #createClient(subscriptionId: string): ComputeManagementClient {
    const { endpoint, ca, retry } = this.#options;
    return new ComputeManagementClient(this.#options.credential, subscriptionId, {
      ...definedOnly({ endpoint }),
      ...(ca === undefined ? {} : { tlsOptions: { ca } }),
      retryOptions: {
        ...definedOnly({
          maxRetries: retry?.maxRetries,
          retryDelayInMs: retry?.retryDelayInMs,
          maxRetryDelayInMs: retry?.maxRetryDelayInMs,
        }),
      },
      additionalPolicies: [
        {
          policy: requestTimeoutPolicy(this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
          position: 'perRetry',
        },
        ...(this.#throttled === undefined
          ? []
          : [{ policy: throttleCountPolicy(this.#throttled), position: 'perRetry' as const }]),
        {
          policy: throttleWaitCapPolicy(
            retry?.maxInlineThrottleWaitMs ?? DEFAULT_MAX_INLINE_THROTTLE_WAIT_MS,
          ),
          position: 'perRetry',
        },
      ],
      userAgentOptions: { userAgentPrefix: 'vmss-prototype' },
    });
  }
}

/**
 * A throttling answer whose `Retry-After` exceeds `maxWaitMs` ends the call with a TransientError
 * (not a RestError, so the SDK's retry policy rethrows it instead of sleeping). Placed per retry: it
 * sees every attempt's response before the retry policy does.
 */
function throttleWaitCapPolicy(maxWaitMs: number): PipelinePolicy {
  return {
    name: 'vmssPrototypeThrottleWaitCap',
    async sendRequest(request, next) {
      const response = await next(request);
      if (response.status === 429 || response.status === 503) {
        const waitMs = retryAfterFromHeaders((name) => response.headers.get(name), Date.now());
        if (waitMs !== undefined && waitMs > maxWaitMs) {
          const code = response.status === 429 ? 'ArmThrottled' : 'ServiceUnavailable';
          throw new TransientError(
            code,
            `Azure Resource Manager asked to retry in ${Math.ceil(waitMs / 1000)} s (HTTP ${response.status})`,
            { retryAfterMs: waitMs },
          );
        }
      }
      return response;
    },
  };
}

/**
 * Counts every attempt ARM answered 429, by operation (provider and resource types, no names: bounded
 * cardinality). Per retry: the SDK's own retries of a 429 are throttling seen too.
 */
function throttleCountPolicy(counter: Counter): PipelinePolicy {
  return {
    name: 'vmssPrototypeThrottleCount',
    async sendRequest(request, next) {
      const response = await next(request);
      if (response.status === 429) {
        counter.add(1, {
          'http.response.status_code': 429,
          'http.request.method': request.method,
          'vmssp.arm.operation': armOperationOf(request.method, request.url),
        });
      }
      return response;
    },
  };
}

/**
 * The ARM operation of a request, as role definitions name it: `Microsoft.Compute/virtualMachineScaleSets/read`
 * for a GET of a scale set (names dropped, only the provider and resource types kept).
 */
export function armOperationOf(method: string, url: string): string {
  const path = new URL(url).pathname.split('/').filter((segment) => segment !== '');
  const at = path.findLastIndex((segment) => segment.toLowerCase() === 'providers');
  const verb =
    method === 'GET' ? 'read' : method === 'DELETE' ? 'delete' : method === 'POST' ? 'action' : 'write';
  if (at < 0 || path[at + 1] === undefined) return `unknown/${verb}`;
  const types = path.slice(at + 2).filter((_, index) => index % 2 === 0);
  return [path[at + 1], ...types, verb].join('/');
}

/** Sets a timeout on every attempt that has none (the SDK sets none by default). */
function requestTimeoutPolicy(timeoutMs: number): PipelinePolicy {
  return {
    name: 'vmssPrototypeRequestTimeout',
    sendRequest(request, next) {
      if (request.timeout === 0) {
        request.timeout = timeoutMs;
      }
      return next(request);
    },
  };
}
