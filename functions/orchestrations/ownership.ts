/**
 * Holding a pool from an orchestration: acquire its lease (shared/application/pool-lease.ts) before the
 * first write, keep it while the run holds the pool, release it at the end. While held, a wait guard
 * (waits.ts) renews the lease before any activity or sleep once LEASE_RENEWAL.everyMs of orchestration
 * time passed, and before a sleep that would outlast it — the longest sleep is a Retry-After of at most
 * 10 minutes, the lease lasts 15. The guard also ends the run:
 * - when the lease was taken by another run (it expired while this one was away): `LeaseLost`; the run
 *   must not touch the pool again, not even to give the donor back — the run that took the pool over does;
 * A cancel asked through the lease (`vmss-prototype cancel`) that a renewal reads is handed to the
 * run's cancel watch (cancel.ts), which acts on it at the next boundary; activities read it first anyway.
 * A renewal that fails transiently (the API server is away) is tried again at the next chance: the
 * lease may expire meanwhile, and every write to the donor is fenced by it anyway (activities check it).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { AcquireOutcome, LeaseRef } from '../../shared/application/pool-lease.js';
import { definedOnly } from '../../shared/domain/optional.js';
import { LEASE_DURATION_SECONDS } from '../../shared/domain/ownership.js';
import { activities } from '../activities.js';
import { call, callOnce } from './call.js';
import { askCancel, shielded } from './cancel.js';
import { StepFailure } from './step-failure.js';
import { LEASE_RENEWAL } from './timing.js';
import type { WaitGuard } from './waits.js';
import { setWaitGuard, setWaitScale } from './waits.js';

/** A pool this run holds: its lease, the run id in it, and what the last renewal said. */
export interface PoolHold {
  readonly cluster: string;
  readonly pool: string;
  readonly lease: LeaseRef;
  readonly runId: string;
  /** Orchestration time the last acquisition or renewal was asked for (epoch ms). */
  renewedAt: number;
  /** Set once the lease was found taken: who holds it now, in words. */
  lost?: string;
}

/** What every write to the donor carries: the lease it is fenced by, and this run's id. */
export function fenceOf(hold: PoolHold): { namespace: string; name: string; runId: string } {
  return { namespace: hold.lease.namespace, name: hold.lease.name, runId: hold.runId };
}

export type AcquirePoolOutcome =
  | { readonly kind: 'held'; readonly hold: PoolHold; readonly tookOverFrom?: string }
  | { readonly kind: 'busy'; readonly holder: Extract<AcquireOutcome, { kind: 'held' }> };

/** Another run held and released the pool after this one planned (`plannedAt`): its plan is stale. */
export interface PoolSuperseded {
  readonly kind: 'superseded';
  readonly by: Extract<AcquireOutcome, { kind: 'superseded' }>;
}

interface AcquirePoolRequest {
  readonly cluster: string;
  readonly pool: string;
  readonly lease: LeaseRef;
  readonly runId: string;
  readonly purpose: string;
  /** Take the lease even from a live holder (`release --force`). */
  readonly force?: boolean;
  /** When the plan this run carries out began: a release by another run since then refuses it. */
  readonly plannedAt?: Date;
}

/**
 * The run id of this orchestration: deterministic on replay, unique per run (the instance id is shared
 * by every run of a pool; the starter's seed separates two runners that start it in the same millisecond).
 */
export function runIdOf(context: OrchestrationContext, seed: string | undefined): string {
  return context.df.newGuid(`${context.df.instanceId}|${seed ?? ''}`);
}

/** Takes the pool's lease; with `plannedAt`, refuses a plan another run's hold has made stale. */
export function acquirePool(
  context: OrchestrationContext,
  request: AcquirePoolRequest & { readonly plannedAt: Date },
): Generator<Task, AcquirePoolOutcome | PoolSuperseded, unknown>;
export function acquirePool(
  context: OrchestrationContext,
  request: AcquirePoolRequest & { readonly plannedAt?: undefined },
): Generator<Task, AcquirePoolOutcome, unknown>;
export function* acquirePool(
  context: OrchestrationContext,
  request: AcquirePoolRequest,
): Generator<Task, AcquirePoolOutcome | PoolSuperseded, unknown> {
  // The lease counts from when it was asked for, never from when the answer was read: see renew below.
  const askedAt = context.df.currentUtcDateTime.getTime();
  const outcome = yield* call(
    context,
    activities.acquirePoolLease,
    {
      cluster: request.cluster,
      lease: request.lease,
      runId: request.runId,
      purpose: {
        cluster: request.cluster,
        pool: request.pool,
        instanceId: context.df.instanceId,
        purpose: request.purpose,
      },
      ...(request.force === true ? { force: true } : {}),
      ...definedOnly({ plannedAt: request.plannedAt?.toISOString() }),
    },
    { step: 'acquiring-lease' },
  );
  if (outcome.kind === 'held') return { kind: 'busy', holder: outcome };
  if (outcome.kind === 'superseded') return { kind: 'superseded', by: outcome };
  const hold: PoolHold = {
    cluster: request.cluster,
    pool: request.pool,
    lease: request.lease,
    runId: request.runId,
    renewedAt: askedAt,
  };
  setWaitGuard(context, leaseGuard(hold));
  if ('waitScale' in outcome) setWaitScale(context, outcome.waitScale);
  return {
    kind: 'held',
    hold,
    ...definedOnly({ tookOverFrom: outcome.tookOverFrom }),
  };
}

/**
 * Releases the lease (best effort: a lease that cannot be released expires on its own) and stops the
 * renewals; no cancel interrupts it. A lost lease is not released: it is not ours any more. True when
 * released.
 */
export function* releasePool(
  context: OrchestrationContext,
  hold: PoolHold,
): Generator<Task, boolean, unknown> {
  setWaitGuard(context, undefined);
  if (hold.lost !== undefined) return false;
  try {
    yield* shielded(
      context,
      call(
        context,
        activities.releasePoolLease,
        { cluster: hold.cluster, lease: hold.lease, runId: hold.runId },
        { step: 'releasing-lease' },
      ),
    );
    return true;
  } catch {
    // It expires LEASE_DURATION_SECONDS after the last renewal; nothing of the pool is held any more.
    return false;
  }
}

/** The failure of a run whose lease was taken over. */
export function leaseLost(hold: PoolHold): StepFailure {
  return StepFailure.terminal(
    'renewing-lease',
    'LeaseLost',
    `run ${hold.runId} no longer holds pool ${hold.pool}: ${hold.lost ?? 'the lease was taken'}; this run ` +
      'stopped without touching the pool again',
    'the run that took the pool over gives back what this one held (see `vmss-prototype status`)',
  );
}

function leaseGuard(hold: PoolHold): WaitGuard {
  let renewing = false;
  /** True when the lease was renewed (and read): false when the API server was away. */
  function* renew(context: OrchestrationContext): Generator<Task, boolean, unknown> {
    renewing = true;
    // Taken before the call: a run resumed after its process died reads the renewal's answer from its
    // history at the time it resumes, which may be long after the renewal was made. Counting the lease
    // from then would let the resumed run judge a wait's timeout (waits.ts) before it renewed the lease,
    // and find it taken only after acting on the timeout.
    const askedAt = context.df.currentUtcDateTime.getTime();
    try {
      const result = yield* callOnce(context, activities.renewPoolLease, {
        cluster: hold.cluster,
        lease: hold.lease,
        runId: hold.runId,
      });
      if (!result.ok) {
        // The API server is away: try again at the next chance (activities are fenced meanwhile).
        if (result.failure.kind === 'transient') return false;
        throw StepFailure.ofActivity('renewing-lease', result.failure);
      }
      if (result.value.kind === 'lost') {
        hold.lost = result.value.description;
        throw leaseLost(hold);
      }
      hold.renewedAt = askedAt;
      if (result.value.cancelRequested !== undefined) askCancel(context, result.value.cancelRequested);
      return true;
    } finally {
      renewing = false;
    }
  }
  /** Renews the lease when due; true when it did (see WaitGuard.beforeActivity). */
  function* check(
    context: OrchestrationContext,
    fireAt: Date | undefined,
  ): Generator<Task, boolean, unknown> {
    if (hold.lost !== undefined) throw leaseLost(hold);
    if (renewing) return false;
    const now = context.df.currentUtcDateTime.getTime();
    const expiresAt = hold.renewedAt + LEASE_DURATION_SECONDS * 1000;
    const due =
      now - hold.renewedAt >= LEASE_RENEWAL.everyMs ||
      (fireAt !== undefined && fireAt.getTime() > expiresAt - LEASE_RENEWAL.marginMs);
    return due ? yield* renew(context) : false;
  }
  return {
    beforeActivity: (context) => check(context, undefined),
    *beforeSleep(context, fireAt) {
      yield* check(context, fireAt);
    },
  };
}
