/**
 * Translates what @azure/arm-compute throws (RestError from the pipeline, long-running-operation
 * failures, transport errors) into the domain's NotFound / Transient / Terminal errors.
 * Messages carry ARM's code and message only: never request bodies, headers or tokens.
 */
import {
  CONCURRENT_CHANGE,
  isRefreshError,
  NotFoundError,
  type RefreshError,
  TerminalError,
  TransientError,
} from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';

/** The parts of a RestError (either core-rest-pipeline's or ts-http-runtime's) we read, duck-typed. */
interface RestErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly statusCode?: unknown;
  readonly details?: unknown;
  readonly response?: { readonly headers?: { get(name: string): string | undefined } };
}

/** Header reader, so the policy (PipelineResponse) and the mapper (RestError) share the parsing. */
export type HeaderGetter = (name: string) => string | undefined;

const NOT_FOUND_CODES = new Set([
  'resourcenotfound',
  'notfound',
  'parentresourcenotfound',
  'resourcegroupnotfound',
]);

/** 409 codes that no retry will change: immutable properties, resource locks, a group being deleted. */
const TERMINAL_CONFLICT_CODES = new Set([
  'propertychangenotallowed',
  'scopelocked',
  'resourcegroupbeingdeleted',
  'subscriptionnotregistered',
]);

/** Transport failures worth retrying (the SDK already retried them `maxRetries` times). */
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'REQUEST_SEND_ERROR',
]);

/** TLS verification failures: a wrong CA or host name, not a flaky network. */
const TLS_CODE = /^(?:ERR_TLS_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_|ERR_SSL_)/;

const MAX_ARM_MESSAGE_LENGTH = 600;

/** `ZRS storage account type is not supported in this region.` (and the CLI's `ZRS is not supported`). */
const ZRS_UNSUPPORTED =
  /(?:^|[^A-Za-z])ZRS\b.*\b(?:not supported|unsupported|not available|is not allowed)\b/is;

/**
 * Maps any thrown value to a domain error whose message starts with `action` (a lowercase gerund and
 * object, e.g. `requesting snapshot snap-1`). Domain errors pass through with `action` prefixed.
 */
export function toRefreshError(error: unknown, action: string, nowMs: number = Date.now()): RefreshError {
  if (isRefreshError(error)) {
    return rewrap(error, action);
  }
  if (typeof error !== 'object' || error === null) {
    return new TerminalError('Unexpected', `${action}: ${String(error)}`, { cause: error });
  }
  const rest = error as RestErrorLike;
  const status = typeof rest.statusCode === 'number' ? rest.statusCode : undefined;
  const rawCode = typeof rest.code === 'string' && rest.code !== '' ? rest.code : undefined;
  const armMessage = sanitise(typeof rest.message === 'string' ? rest.message : '');
  const code = armCodeOf(rest) ?? rawCode;
  const lowerCode = code?.toLowerCase() ?? '';
  const describe = (label: string): string =>
    `${action}: ${armMessage === '' ? label : armMessage} (${[code, status === undefined ? undefined : `HTTP ${status}`].filter((part) => part !== undefined).join(', ')})`;

  if (rest.name === 'AbortError') {
    return new TransientError('Timeout', `${action}: the request was aborted or timed out`, { cause: error });
  }
  if (status === undefined) {
    return fromNonHttpError(error, rawCode, armMessage, action);
  }
  if (status === 404 || NOT_FOUND_CODES.has(lowerCode)) {
    return new NotFoundError(code ?? 'NotFound', describe('not found'), { cause: error });
  }
  if (status === 429) {
    const retryAfterMs = retryAfterFromHeaders(headerGetter(rest), nowMs);
    return new TransientError('ArmThrottled', describe('throttled by Azure Resource Manager'), {
      cause: error,
      ...definedOnly({ retryAfterMs }),
    });
  }
  if (status === 408) {
    return new TransientError(code ?? 'RequestTimeout', describe('request timed out'), { cause: error });
  }
  if (isZrsUnsupported(code, armMessage)) {
    return new TerminalError(
      'ZrsUnsupported',
      `${action}: zone-redundant storage (Standard_ZRS) is not supported in this region (${code ?? 'InvalidParameter'}, HTTP ${status}); use Standard_LRS or Premium_LRS`,
      { cause: error },
    );
  }
  if (status === 409) {
    return conflict(code, lowerCode, armMessage, describe('conflict'), error);
  }
  if (status === 412) {
    // If-Match named an etag the resource no longer has: another client changed it since our read.
    return new TerminalError(
      CONCURRENT_CHANGE,
      `${action}: the resource was changed by someone else since it was read (${code ?? 'PreconditionFailed'}, HTTP 412); nothing was overwritten`,
      {
        cause: error,
        advice: 'read it again and decide again (a run does this itself; run again if it stopped)',
      },
    );
  }
  if (status >= 500 && status !== 501 && status !== 505) {
    const retryAfterMs = retryAfterFromHeaders(headerGetter(rest), nowMs);
    return new TransientError(code ?? `Http${status}`, describe('server error'), {
      cause: error,
      ...definedOnly({ retryAfterMs }),
    });
  }
  if (status === 403 || status === 401) {
    return authorization(
      code ?? (status === 401 ? 'AuthenticationFailed' : 'Forbidden'),
      status,
      armMessage,
      action,
      error,
    );
  }
  return new TerminalError(code ?? `Http${status}`, describe('request refused'), { cause: error });
}

/** Runs `operation`, mapping anything it throws with `toRefreshError(…, action)`. */
export async function withArmErrors<T>(action: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error: unknown) {
    throw toRefreshError(error, action);
  }
}

/** True when ARM's code or message says ZRS is unavailable (matched loosely: the wording has varied). */
export function isZrsUnsupported(code: string | undefined, message: string): boolean {
  return ZRS_UNSUPPORTED.test(message) || /zrs.*not.*supported/i.test(code ?? '');
}

/**
 * Server-suggested wait: `retry-after-ms` / `x-ms-retry-after-ms` (ms), `Retry-After` (seconds or an
 * HTTP date). Without those, an exhausted Compute RP bucket (`x-ms-ratelimit-remaining-resource:
 * Microsoft.Compute/…;0`) refills per minute, so one minute is the honest guess.
 */
export function retryAfterFromHeaders(get: HeaderGetter, nowMs: number): number | undefined {
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const value = parseNonNegative(get(name));
    if (value !== undefined) {
      return value;
    }
  }
  const retryAfter = get('retry-after')?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    const seconds = parseNonNegative(retryAfter);
    if (seconds !== undefined) {
      return seconds * 1000;
    }
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) {
      return Math.max(0, date - nowMs);
    }
  }
  const remaining = get('x-ms-ratelimit-remaining-resource');
  if (remaining !== undefined && /;\s*0\s*(?:,|$)/.test(remaining)) {
    return 60_000;
  }
  return undefined;
}

function conflict(
  code: string | undefined,
  lowerCode: string,
  armMessage: string,
  message: string,
  cause: unknown,
): RefreshError {
  if (TERMINAL_CONFLICT_CODES.has(lowerCode) || /\bquota\b/i.test(armMessage)) {
    return new TerminalError(code ?? 'Conflict', message, { cause });
  }
  // `OperationNotAllowed` is both "another operation is in progress" (wait) and "not allowed on a
  // deallocated / deleted VM" or quota (never): only the former reads as a busy resource.
  if (lowerCode === 'operationnotallowed') {
    const busy =
      /in progress|another operation|currently|transition|pending|ongoing|try again|being (?:created|updated|deleted)/i.test(
        armMessage,
      );
    return busy
      ? new TransientError(code ?? 'Conflict', message, { cause })
      : new TerminalError(code ?? 'Conflict', message, { cause });
  }
  // Compute RP answers plain `Conflict`, `AnotherOperationInProgress`, `OperationPreempted` while the
  // resource is being changed; unknown 409 codes are treated the same way: the orchestrator's attempt
  // budget bounds the cost of being wrong.
  return new TransientError(code ?? 'Conflict', message, { cause });
}

function authorization(
  code: string,
  status: number,
  armMessage: string,
  action: string,
  cause: unknown,
): TerminalError {
  // "does not have authorization to perform action 'A' over scope 'S'" (AuthorizationFailed) and
  // "…has permission to perform action 'B' on scope …; however, it does not have permission to perform
  // action(s) 'A' on the linked scope(s) 'S'" (LinkedAuthorizationFailed): A is what is missing.
  const missing = /not have (?:authorization|permission) to perform action(?:\(s\))? '([^']+)'/i.exec(
    armMessage,
  )?.[1];
  const scope = /(?:over scope|on the linked scope\(s\)) '([^']+)'/i.exec(armMessage)?.[1];
  if (missing !== undefined) {
    const where = scope === undefined ? '' : ` on scope ${scope}`;
    return new TerminalError(
      code,
      `${action}: the identity lacks permission ${missing}${where} (${code}, HTTP ${status})`,
      {
        cause,
        advice:
          "add it to the role of the identity that runs this (the function app's managed identity, or yours when you run the CLI: docs/prerequisites.md)",
      },
    );
  }
  const detail = armMessage === '' ? 'access denied' : armMessage;
  return new TerminalError(code, `${action}: ${detail} (${code}, HTTP ${status})`, { cause });
}

function fromNonHttpError(
  error: unknown,
  rawCode: string | undefined,
  message: string,
  action: string,
): RefreshError {
  if (rawCode !== undefined && CONNECTION_CODES.has(rawCode)) {
    return new TransientError(
      'ConnectionFailed',
      `${action}: cannot reach Azure Resource Manager (${rawCode})`,
      {
        cause: error,
      },
    );
  }
  if (rawCode !== undefined && TLS_CODE.test(rawCode)) {
    return new TerminalError(
      'TlsVerificationFailed',
      `${action}: the Azure Resource Manager endpoint's certificate was not accepted (${rawCode})`,
      { cause: error },
    );
  }
  // core-lro: "The long-running operation has failed. <code>. <message>"
  const lro = /^The long-running operation has failed\.?\s*(?:([A-Za-z]+)\.\s*)?(.*)$/s.exec(message);
  if (lro !== null) {
    const code = lro[1] ?? 'OperationFailed';
    if (isZrsUnsupported(code, message)) {
      return new TerminalError('ZrsUnsupported', `${action}: Standard_ZRS is not supported in this region`, {
        cause: error,
      });
    }
    return new TerminalError(code, `${action}: the operation failed: ${lro[2] ?? message} (${code})`, {
      cause: error,
    });
  }
  return new TerminalError(
    rawCode ?? 'Unexpected',
    `${action}: ${message === '' ? 'unexpected error' : message}`,
    {
      cause: error,
    },
  );
}

function rewrap(error: RefreshError, action: string): RefreshError {
  const message = `${action}: ${error.message}`;
  const options = { cause: error, ...definedOnly({ advice: error.advice }) };
  switch (error.kind) {
    case 'not-found':
      return new NotFoundError(error.code, message, options);
    case 'transient':
      return new TransientError(error.code, message, {
        ...options,
        ...(error instanceof TransientError && error.retryAfterMs !== undefined
          ? { retryAfterMs: error.retryAfterMs }
          : {}),
      });
    case 'terminal':
      return new TerminalError(error.code, message, options);
  }
}

/** `details` as the SDK deserialised it (`{ error: { code, message, details[] } }`): the innermost code wins. */
function armCodeOf(rest: RestErrorLike): string | undefined {
  const details = rest.details as { error?: { code?: unknown } } | undefined;
  const code = details?.error?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

function headerGetter(rest: RestErrorLike): HeaderGetter {
  const headers = rest.response?.headers;
  return (name) => (headers === undefined ? undefined : headers.get(name));
}

function parseNonNegative(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+(?:\.\d+)?\s*$/.test(value)) {
    return undefined;
  }
  return Number(value);
}

/** ARM messages are safe to show, but keep them one line, bounded, and free of anything token-shaped. */
function sanitise(message: string): string {
  const oneLine = message.replace(/\s+/g, ' ').trim();
  const redacted = oneLine.replace(/\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, 'Bearer <redacted>');
  return redacted.length > MAX_ARM_MESSAGE_LENGTH
    ? `${redacted.slice(0, MAX_ARM_MESSAGE_LENGTH)}…`
    : redacted;
}

/** Snapshot and image version deletions take seconds to a minute (docs/design.md#timings). */
const DELETING_RETRY_AFTER_MS = 15_000;

/** Deletion is asynchronous: a request for the same name must wait until the old resource is gone. */
export function throwIfDeleting(provisioningState: string | undefined, action: string, what: string): void {
  if (provisioningState?.toLowerCase() === 'deleting') {
    throw new TransientError(
      'ResourceDeleting',
      `${action}: the previous ${what} of this name is still being deleted`,
      { retryAfterMs: DELETING_RETRY_AFTER_MS },
    );
  }
}
