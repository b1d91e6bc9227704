import { definedOnly } from './optional.js';
/**
 * The product's error taxonomy (docs/conventions.md#errors): adapters translate SDK failures into these at
 * the boundary so use cases and orchestrators decide on retry/fail by kind, never by parsing messages.
 */

/** How a failure should be handled: retried later, treated as absence, or reported and stopped. */
export type RefreshErrorKind = 'not-found' | 'transient' | 'terminal';

/** What `toJSON` exposes: never the cause, which may carry request bodies, headers or tokens. */
export interface RefreshErrorJson {
  readonly name: string;
  readonly code: string;
  readonly message: string;
  readonly advice?: string;
}

export interface RefreshErrorOptions {
  readonly cause?: unknown;
  /**
   * What an operator can do about it, in words (`add it to the role of the identity that runs this`).
   * Kept apart from the message so that an orchestrator can show it once, after the step's context.
   */
  readonly advice?: string;
}

/** Base of every product error. Not instantiated directly: pick the subclass that says how to react. */
export abstract class RefreshError extends Error {
  abstract readonly kind: RefreshErrorKind;
  /** Stable machine code, e.g. `ScaleSetNotFound`, `ArmThrottled`, `EphemeralOsDisk`. */
  readonly code: string;
  /** What an operator can do about it; undefined when the message says all there is. */
  readonly advice: string | undefined;

  protected constructor(code: string, message: string, options?: RefreshErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.advice = options?.advice === undefined || options.advice === '' ? undefined : options.advice;
    this.name = new.target.name;
  }

  /** Serialises for logs, HTTP bodies and durable outputs. The cause chain is deliberately left out. */
  toJSON(): RefreshErrorJson {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      ...definedOnly({ advice: this.advice }),
    };
  }
}

/** The resource (node, scale set, snapshot, image version…) does not exist. Often fine: see `ignoreNotFound`. */
export class NotFoundError extends RefreshError {
  readonly kind = 'not-found';

  constructor(code: string, message: string, options?: RefreshErrorOptions) {
    super(code, message, options);
  }
}

/** Worth retrying: throttling (429), conflicts (409), server errors (5xx), timeouts, a PDB blocking eviction. */
export class TransientError extends RefreshError {
  readonly kind = 'transient';
  /** Server-suggested wait (e.g. from `Retry-After`); undefined means "use your own backoff". */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: string,
    message: string,
    options?: RefreshErrorOptions & { readonly retryAfterMs?: number },
  ) {
    super(code, message, options);
    const retryAfterMs = options?.retryAfterMs;
    this.retryAfterMs =
      retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0
        ? retryAfterMs
        : undefined;
  }
}

/** Retrying will not help: bad input, a refused pool, missing permissions, an unsupported configuration. */
export class TerminalError extends RefreshError {
  readonly kind = 'terminal';

  constructor(code: string, message: string, options?: RefreshErrorOptions) {
    super(code, message, options);
  }
}

/** The text of any thrown value: an Error's message, anything else as a string. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The message of any thrown value, followed by the product error's advice when it has one. */
export function describeError(error: unknown): string {
  const message = messageOf(error);
  return isRefreshError(error) && error.advice !== undefined ? `${message} — ${error.advice}` : message;
}

export function isRefreshError(error: unknown): error is RefreshError {
  return error instanceof RefreshError;
}

export function isNotFound(error: unknown): error is NotFoundError {
  return error instanceof NotFoundError;
}

export function isTransient(error: unknown): error is TransientError {
  return error instanceof TransientError;
}

export function isTerminal(error: unknown): error is TerminalError {
  return error instanceof TerminalError;
}

/**
 * Swallows a not-found error (returns undefined) and rethrows anything else, for idempotent deletes and
 * "read if present": `await deleteSnapshot(id).catch(ignoreNotFound)`.
 */
export function ignoreNotFound(error: unknown): undefined {
  if (isNotFound(error)) {
    return undefined;
  }
  throw ensureError(error);
}

/** Normalises whatever a `catch (e: unknown)` received into an Error, keeping Errors as they are. */
export function ensureError(value: unknown): Error {
  if (value instanceof Error) {
    return value;
  }
  if (typeof value === 'string') {
    return new Error(value);
  }
  if (
    typeof value === 'object' &&
    value !== null &&
    'message' in value &&
    typeof value.message === 'string'
  ) {
    const error = new Error(value.message, { cause: value });
    if ('name' in value && typeof value.name === 'string' && value.name !== '') {
      error.name = value.name;
    }
    return error;
  }
  return new Error(`non-error value thrown: ${describeThrown(value)}`, { cause: value });
}

function describeThrown(value: unknown): string {
  if (typeof value === 'function') {
    return `function ${value.name === '' ? '(anonymous)' : value.name}`;
  }
  if (value === undefined || value === null || typeof value !== 'object') {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? Object.prototype.toString.call(value);
  } catch {
    // Circular or BigInt-holding objects cannot be stringified; the tag is still better than "[object Object]".
    return Object.prototype.toString.call(value);
  }
}

/**
 * The code of a conditional write refused because the resource changed since it was read (ARM's 412
 * `PreconditionFailed` on `If-Match`): someone else wrote it. Never retried blindly — the caller reads
 * again and decides again, so another tool's change is never overwritten.
 */
export const CONCURRENT_CHANGE = 'ConcurrentChange';

export function isConcurrentChange(error: unknown): boolean {
  return isRefreshError(error) && error.code === CONCURRENT_CHANGE;
}

/** The innermost socket or DNS code in the error's cause chain (undici wraps it in `fetch failed`). */
export function networkCodeOf(error: unknown): string | undefined {
  let found: string | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) found = code;
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}
