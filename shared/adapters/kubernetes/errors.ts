/**
 * Translates @kubernetes/client-node failures (ApiException with a Status body, fetch/TLS/socket errors,
 * timeouts) into the product's error taxonomy, so callers decide retry or stop by kind, never by text.
 */
import { ApiException } from '@kubernetes/client-node';

import {
  isRefreshError,
  NotFoundError,
  type RefreshError,
  TerminalError,
  TransientError,
} from '../../domain/errors.js';
import { KubeTransportError } from './https-library.js';
import { KubeStatus } from './schema.js';

/** `policy/v1` `DisruptionBudgetCause`: the cause an eviction refused by a PodDisruptionBudget carries. */
const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/** What a failed call was doing, for the message and the not-found code. */
export interface KubeCallContext {
  /** Lowercase gerund + object, e.g. `patching node aks-pool-vmss000001`. */
  readonly action: string;
  /** Kind of the object the call is about (`Node`, `Pod`…), giving not-found codes like `NodeNotFound`. */
  readonly kind: string;
  /** Which API server, for connection failures (`the API server of cluster prod (https://…)`). */
  readonly apiServer?: string;
}

/**
 * Reads the Status out of an ApiException body. client-node hands over the raw response text for
 * status codes its spec does not declare (nearly all errors), a parsed object for the others, and
 * nothing at all for 401.
 */
export function parseStatusBody(body: unknown): KubeStatus | undefined {
  let value: unknown = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const parsed = KubeStatus.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function hasCause(status: KubeStatus | undefined, reason: string): boolean {
  return (status?.details?.causes ?? []).some((cause) => cause.reason === reason || cause.type === reason);
}

/** The DisruptionBudget causes of a 429, joined; undefined when the 429 is not a PDB refusal. */
export function disruptionBudgetRefusal(status: KubeStatus | undefined): string | undefined {
  if (status === undefined) return undefined;
  const causes = (status.details?.causes ?? []).filter(
    (cause) => cause.reason === DISRUPTION_BUDGET_CAUSE || cause.type === DISRUPTION_BUDGET_CAUSE,
  );
  // API servers before the cause existed (< 1.20-ish) only said so in the message.
  if (causes.length === 0 && !/disruption budget/i.test(status.message ?? '')) return undefined;
  const parts = [status.message, ...causes.map((cause) => cause.message)].filter(
    (part): part is string => part !== undefined && part !== '',
  );
  return parts.length > 0 ? parts.join(' ') : "the pod's disruption budget does not allow evicting it now";
}

/** The wait the server asked for, from `Retry-After` (delta-seconds) or `details.retryAfterSeconds`. */
export function retryAfterMs(
  headers: Readonly<Record<string, string>> | undefined,
  status: KubeStatus | undefined,
): number | undefined {
  const header = headers?.['retry-after'] ?? headers?.['Retry-After'];
  if (header !== undefined && /^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const seconds = status?.details?.retryAfterSeconds;
  return seconds !== undefined && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * The RBAC denial in a 403 message, e.g. `User "system:serviceaccount:x:y" cannot patch resource "nodes"
 * in API group "" at the cluster scope` → `patch nodes (cluster-wide)`.
 */
export function missingPermission(message: string | undefined): string | undefined {
  const match =
    /cannot (?<verb>[\w-]+) resource "(?<resource>[^"]+)"(?: in API group "(?<group>[^"]*)")?(?<scope> at the cluster scope| in the namespace "[^"]+")?/.exec(
      message ?? '',
    );
  const groups = match?.groups;
  if (groups?.verb === undefined || groups.resource === undefined) return undefined;
  const resource = groups.group ? `${groups.resource}.${groups.group}` : groups.resource;
  const scope = groups.scope?.trim().startsWith('at the cluster') ? ' (cluster-wide)' : (groups.scope ?? '');
  return `${groups.verb} ${resource}${scope}`;
}

/** Node's codes of a TLS handshake that failed certificate verification. */
const TLS_VERIFICATION_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_CERT_ALTNAME_FORMAT',
  'HOSTNAME_MISMATCH',
]);

/** Connection-level failures worth retrying: the server or the path to it is down or slow. */
const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Follows `cause` links (the HTTPS library wraps the socket's error in a KubeTransportError). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = typeof current === 'object' && 'cause' in current ? current.cause : undefined;
  }
  return chain;
}

function stringField(value: unknown, field: 'code' | 'name' | 'message'): string | undefined {
  if (typeof value !== 'object' || value === null || !(field in value)) return undefined;
  const found = (value as Record<string, unknown>)[field];
  return typeof found === 'string' ? found : undefined;
}

/**
 * A short, safe description of the Status for the error's cause: status code, reason and the server's
 * message. ApiException's own message embeds response headers and the raw body, so it is not kept.
 */
function statusCause(code: number, status: KubeStatus | undefined): Error {
  const reason = status?.reason ? ` ${status.reason}` : '';
  const message = status?.message ? `: ${status.message}` : '';
  return new Error(`HTTP ${code}${reason}${message}`);
}

function withServerMessage(text: string, status: KubeStatus | undefined): string {
  return status?.message ? `${text}: ${status.message}` : text;
}

function fromApiException(error: ApiException<unknown>, context: KubeCallContext): RefreshError {
  const status = parseStatusBody(error.body);
  const code = error.code;
  const cause = statusCause(code, status);
  const { action } = context;
  switch (code) {
    case 400:
      return new TerminalError(
        'KubeBadRequest',
        withServerMessage(`${action}: the API server rejected the request`, status),
        {
          cause,
        },
      );
    case 401:
      return new TerminalError(
        'ClusterUnauthorized',
        `${action}: ${context.apiServer ?? 'the API server'} rejected the service account token — check the ` +
          `cluster's token reference (apiServer.auth) and that the token Secret still exists`,
        { cause },
      );
    case 403: {
      // Writes into a namespace being deleted: its pods are going away anyway, so retrying finds them gone
      // (kubectl drain waits and retries likewise).
      if (hasCause(status, 'NamespaceTerminating')) {
        return new TransientError(
          'NamespaceTerminating',
          withServerMessage(`${action}: the namespace is being deleted`, status),
          {
            cause,
          },
        );
      }
      const permission = missingPermission(status?.message);
      const text =
        permission === undefined
          ? withServerMessage(`${action}: forbidden`, status)
          : `${action}: forbidden, the service account may not ${permission} — grant it in the product's RBAC role`;
      return new TerminalError('ClusterForbidden', text, { cause });
    }
    case 404:
      return new NotFoundError(`${context.kind}NotFound`, withServerMessage(`${action}: not found`, status), {
        cause,
      });
    case 409:
      if (status?.reason === 'AlreadyExists') {
        return new TerminalError(
          'KubeAlreadyExists',
          withServerMessage(`${action}: already exists`, status),
          { cause },
        );
      }
      // Optimistic-concurrency conflicts (e.g. the PDB status update behind an eviction) pass on a retry.
      return new TransientError('KubeConflict', withServerMessage(`${action}: conflict`, status), {
        cause,
        retryAfterMs: retryAfterMs(error.headers, status),
      });
    case 410:
      return new TransientError(
        'KubeResourceExpired',
        withServerMessage(`${action}: list continuation expired`, status),
        {
          cause,
        },
      );
    case 415:
      return new TerminalError(
        'KubeUnsupportedMediaType',
        withServerMessage(`${action}: unsupported media type`, status),
        {
          cause,
        },
      );
    case 422:
      return new TerminalError(
        'KubeInvalid',
        withServerMessage(`${action}: the API server found the request invalid`, status),
        {
          cause,
        },
      );
    case 429: {
      const refusal = disruptionBudgetRefusal(status);
      if (refusal !== undefined) {
        return new TransientError('EvictionBlockedByDisruptionBudget', `${action}: ${refusal}`, {
          cause,
          retryAfterMs: retryAfterMs(error.headers, status),
        });
      }
      return new TransientError(
        'KubeThrottled',
        withServerMessage(`${action}: the API server is throttling requests`, status),
        {
          cause,
          retryAfterMs: retryAfterMs(error.headers, status),
        },
      );
    }
    default:
      break;
  }
  if (code === 500 && /more than one PodDisruptionBudget/i.test(status?.message ?? '')) {
    return new TerminalError(
      'MultiplePodDisruptionBudgets',
      `${action}: more than one PodDisruptionBudget selects the pod, which the Eviction API does not support — fix the budgets`,
      { cause },
    );
  }
  if (code >= 500) {
    return new TransientError(
      'KubeServerError',
      withServerMessage(`${action}: API server error ${code}`, status),
      {
        cause,
        retryAfterMs: retryAfterMs(error.headers, status),
      },
    );
  }
  return new TerminalError(
    'KubeRequestFailed',
    withServerMessage(`${action}: unexpected HTTP ${code}`, status),
    { cause },
  );
}

function fromNetworkError(error: unknown, context: KubeCallContext): RefreshError | undefined {
  const { action } = context;
  const server = context.apiServer ?? 'the API server';
  for (const link of causeChain(error)) {
    const code = stringField(link, 'code');
    const name = stringField(link, 'name');
    if (code !== undefined && TLS_VERIFICATION_CODES.has(code)) {
      return new TerminalError(
        'ClusterTlsVerificationFailed',
        `${action}: the TLS certificate of ${server} failed verification (${code}) — check the configured CA certificate and server URL`,
        { cause: error },
      );
    }
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') {
      return new TerminalError(
        'ClusterTlsHandshakeFailed',
        `${action}: the TLS handshake with ${server} failed (${code}) — check that the server URL points at an HTTPS endpoint`,
        { cause: error },
      );
    }
    if (name === 'TimeoutError' || code === 'ABORT_ERR' || name === 'AbortError') {
      return new TransientError('ClusterRequestTimeout', `${action}: the API server did not answer in time`, {
        cause: error,
      });
    }
    if (code !== undefined && TRANSIENT_NETWORK_CODES.has(code)) {
      return new TransientError('ClusterUnreachable', `${action}: cannot reach the API server (${code})`, {
        cause: error,
      });
    }
  }
  return undefined;
}

/**
 * Maps anything a client-node call threw. Product errors pass through unchanged (e.g. from the token
 * provider); unknown failures become terminal so that a bug is reported rather than retried forever.
 */
export function toRefreshError(error: unknown, context: KubeCallContext): RefreshError {
  if (isRefreshError(error)) return error;
  if (error instanceof ApiException) return fromApiException(error as ApiException<unknown>, context);
  const network = fromNetworkError(error, context);
  if (network !== undefined) return network;
  const chain = causeChain(error);
  const innermost = chain[chain.length - 1];
  const detail = stringField(innermost, 'message');
  // A transport failure (https-library.ts) with an unrecognised cause is still one.
  if (error instanceof KubeTransportError) {
    return new TransientError(
      'ClusterUnreachable',
      `${context.action}: cannot reach the API server (${detail ?? 'the request failed'})`,
      {
        cause: error,
      },
    );
  }
  return new TerminalError(
    'KubeRequestFailed',
    `${context.action}: ${detail !== undefined && detail !== '' ? detail : 'the request failed'}`,
    { cause: error },
  );
}
