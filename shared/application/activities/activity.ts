/**
 * How an activity is defined and how its outcome crosses the durable boundary.
 *
 * Each activity is defined once, with `defineActivity`: its name, the zod schema of its input and its
 * handler `(deps, input) => Promise<Output>`. The output type is whatever the handler returns (inferred,
 * never written a second time); the catalogue (catalogue.ts) lists every definition, the function app
 * registers each one under its name and the orchestrators call them through typed handles
 * (functions/activities.ts) — no string names at call sites, no casts of results.
 *
 * Failures cross the boundary as VALUES, not exceptions: a registered activity never throws; it returns
 * `{ ok: true, value }` or `{ ok: false, failure: { kind, code, message, retryAfterMs?, advice? } }`,
 * built from the typed errors the adapters raise (domain/errors.ts). Why values, not FailureDetails:
 * - Whether the Durable extension bundle delivers an exception's custom properties (FailureDetails
 *   `properties`, durable-functions' `setExceptionPropertiesProvider`) to the Node worker depends on the
 *   extension version (≥ 3.14 per the typings) and cannot be verified without the host; a value is the
 *   same JSON on every host, in the local runner and in history, and replays deterministically.
 * - The orchestrator then decides by kind (retry only `transient`, honouring `retryAfterMs`; fail a
 *   `terminal` one at once with its advice) without parsing messages.
 * - The ZRS fallback already worked this way (`requestImageVersion` answers `zrs-unsupported`).
 * Errors that are not product errors (bugs) become `terminal` with code `UnexpectedError`: their
 * message only, never a stack or a cause (they may carry request bodies or headers). Absence that a step
 * expects is modelled as a value by the activity itself (`readInstance` → `exists: false`); any other
 * not-found is a failure of kind `not-found`, which the orchestrator treats as terminal.
 * Anything that still arrives as a thrown error in the orchestrator comes from the host (activity
 * timeout, worker crash) and is treated as transient there.
 *
 * No durable-functions import here: the application layer stays host-independent.
 */
import type { z } from 'zod';

import type { RefreshErrorKind } from '../../domain/errors.js';
import {
  isRefreshError,
  messageOf,
  networkCodeOf,
  TerminalError,
  TransientError,
} from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { shareLeaseRead } from '../activity-lease-read.js';
import { CANCEL_REQUESTED, cancelAskedOn, splitCancelWatch } from '../pool-cancel.js';
import type { RefreshDependencies } from '../refresh-dependencies.js';

export type FailureKind = RefreshErrorKind;

/** A failed activity, as the orchestrator receives it. Plain JSON; never a stack, a cause or a secret. */
export interface ActivityFailure {
  readonly kind: FailureKind;
  /** Stable machine code, e.g. `AuthorizationFailed`, `ArmThrottled`, `InvalidActivityInput`. */
  readonly code: string;
  readonly message: string;
  /** Server-suggested wait before another attempt (Retry-After), for transient failures. */
  readonly retryAfterMs?: number;
  /** What an operator can do about it. */
  readonly advice?: string;
  /** The socket or DNS code under a transient failure (`ECONNREFUSED`, `ETIMEDOUT`…), to say why to a person. */
  readonly networkCode?: string;
}

export type ActivityResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: ActivityFailure };

/** One activity: defined once, registered under `name`, called through a typed handle. */
export interface Activity<Name extends string, Schema extends z.ZodType, Output> {
  readonly name: Name;
  readonly input: Schema;
  readonly run: (deps: RefreshDependencies, input: z.output<Schema>) => Promise<Output>;
}

// `any` here only widens the constraint for collections of activities; each member keeps its own types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyActivity = Activity<string, z.ZodType, any>;

/** What the caller sends: the schema's input side. */
export type InputOf<A extends AnyActivity> = z.input<A['input']>;
/** What the handler resolves to. */
export type OutputOf<A extends AnyActivity> = Awaited<ReturnType<A['run']>>;

export function defineActivity<const Name extends string, Schema extends z.ZodType, Output>(
  name: Name,
  input: Schema,
  run: (deps: RefreshDependencies, input: z.output<Schema>) => Promise<Output>,
): Activity<Name, Schema, Output> {
  return { name, input, run };
}

/**
 * Runs one activity: parses its input (a bad input is a terminal failure naming the field), resolves the
 * dependencies, calls the handler and turns whatever it throws into a failure value. Never throws. An
 * input that carries a cancel watch (pool-cancel.ts) reads the pool's lease first: a cancel asked there
 * answers `CancelRequested`, the handler not called.
 */
export async function runActivity<Schema extends z.ZodType, Output>(
  activity: Activity<string, Schema, Output>,
  deps: RefreshDependencies | (() => RefreshDependencies),
  carried: unknown,
): Promise<ActivityResult<Output>> {
  const { input, watch } = splitCancelWatch(carried);
  const parsed = activity.input.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`,
    );
    return {
      ok: false,
      failure: failureOf(
        new TerminalError(
          'InvalidActivityInput',
          `parsing input of activity ${activity.name}: ${issues.join('; ')}`,
        ),
      ),
    };
  }
  try {
    let resolved = typeof deps === 'function' ? deps() : deps;
    if (watch !== undefined) {
      // One lease read for the cancel check and the activity's fence (activity-lease-read.ts).
      const shared = shareLeaseRead(resolved, watch);
      const asked = await cancelAskedOn(resolved, watch, undefined, shared.read);
      if (asked !== undefined) {
        return { ok: false, failure: { kind: 'terminal', code: CANCEL_REQUESTED, message: asked } };
      }
      resolved = shared.deps;
    }
    const value = await activity.run(resolved, parsed.data);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, failure: failureOf(error) };
  }
}

/** The failure value of anything an activity threw. */
export function failureOf(error: unknown): ActivityFailure {
  if (isRefreshError(error)) {
    return {
      kind: error.kind,
      code: error.code,
      message: error.message,
      ...(error instanceof TransientError && error.retryAfterMs !== undefined
        ? { retryAfterMs: error.retryAfterMs }
        : {}),
      ...definedOnly({
        advice: error.advice,
        networkCode: error.kind === 'transient' ? networkCodeOf(error) : undefined,
      }),
    };
  }
  // A bug or an unmapped library error: its message only (a stack or cause may carry request details).
  const message = messageOf(error);
  return {
    kind: 'terminal',
    code: 'UnexpectedError',
    message: message === '' ? 'unexpected error' : message,
  };
}
