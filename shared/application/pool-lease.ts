/**
 * The pool's lease (coordination.k8s.io/v1, one per scale set, in the product's namespace): acquire before
 * the first write, renew while the run holds the pool, release at the end, and the fence every write to the
 * donor checks. Optimistic concurrency: every write carries the resourceVersion it read; a conflict means
 * another runner wrote in between, so the lease is read again and the decision taken again.
 *
 * A lease whose holder is still this run is renewed even after it expired: nobody took it, so nobody
 * touched the pool (taking a lease is the only way any runner, the reaper included, touches one).
 * One clock, the API server's: a write records the server's time of the read it follows, and expiry is
 * judged at it (leaseClock in shared/domain/ownership.ts); `now`, the caller's, only without a `Date` header.
 */
import { TerminalError, TransientError } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import type { LeaseState, PoolLease, RunnerIdentity } from '../domain/ownership.js';
import {
  describeHolder,
  holderIdentity,
  LASTING_LEASE_ANNOTATIONS,
  LEASE_ANNOTATIONS,
  LEASE_DURATION_SECONDS,
  leaseClock,
  leaseState,
  parseHolder,
} from '../domain/ownership.js';
import type { KubernetesPorts, LeaseWrite } from '../ports/kubernetes/index.js';

/** Which lease: the product's namespace and the scale set's lease name. */
export interface LeaseRef {
  readonly namespace: string;
  readonly name: string;
}

/** What the holding run is doing, written on the lease for `status` and for the runner refused. */
export interface LeasePurpose {
  readonly cluster: string;
  readonly pool: string;
  readonly instanceId: string;
  /** `refresh` or `release`. */
  readonly purpose: string;
}

export type AcquireOutcome =
  | {
      readonly kind: 'acquired';
      readonly expiresAt: string;
      /** The holder whose expired lease this run took over (its leftovers are now dead). */
      readonly tookOverFrom?: string;
    }
  | {
      readonly kind: 'held';
      readonly holder: string;
      readonly runId: string;
      readonly since?: string;
      readonly expiresAt: string;
      readonly instanceId?: string;
      readonly purpose?: string;
      /** Who holds it, since when and until when, in words. */
      readonly description: string;
    }
  /**
   * Free, but another run held it and released it after `plannedAt`: what this run planned from (the donor,
   * the model, the versions) may have changed under it since, and a plan for a pool another run has just
   * refreshed would capture it again. Nothing was written.
   */
  | {
      readonly kind: 'superseded';
      readonly lastHolder: string;
      readonly releasedAt: string;
      /** Who held it and when it was released, in words. */
      readonly description: string;
    };

export type RenewOutcome =
  | { readonly kind: 'renewed'; readonly expiresAt: string; readonly cancelRequested?: string }
  | { readonly kind: 'lost'; readonly holder?: string; readonly description: string };

/** Attempts at a lease write before giving up on a contended lease (each one re-reads it). */
const MAX_WRITE_ATTEMPTS = 5;

/** The time a write to `read` records: the server's time of that read (the caller's without one). */
function writtenAt(read: PoolLease, now: Date): string {
  return leaseClock(read, now).toISOString();
}

function expiry(renewedAt: string): string {
  return new Date(Date.parse(renewedAt) + LEASE_DURATION_SECONDS * 1000).toISOString();
}

function contention(ref: LeaseRef, doing: string): TransientError {
  return new TransientError(
    'LeaseContention',
    `${doing} lease ${ref.namespace}/${ref.name}: another runner kept writing it; trying again`,
  );
}

export async function acquirePoolLease(
  kube: KubernetesPorts,
  ref: LeaseRef,
  request: {
    readonly runId: string;
    readonly runner: RunnerIdentity;
    readonly purpose: LeasePurpose;
    /** Take it even from a live holder (an operator's `release --force`: they know the holder is gone). */
    readonly force?: boolean;
    /**
     * When the run began the plan it is about to carry out (RFC 3339): a lease another run released after
     * that refuses this one (`superseded`).
     */
    readonly plannedAt?: string;
  },
  now: Date,
): Promise<AcquireOutcome> {
  const identity = holderIdentity(request.runner, request.runId);
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const existing = await kube.leases.get(ref.namespace, ref.name);
    if (existing === undefined) {
      // Created free (no holder, no times) and taken at the next read: the holder's times are the
      // server's time of a read, which an absent lease has none of. Once per scale set: a lease is kept.
      await kube.leases.create({ ...ref, durationSeconds: LEASE_DURATION_SECONDS, annotations: {} });
      continue;
    }
    const at = writtenAt(existing, now);
    const write: LeaseWrite = {
      ...ref,
      holder: identity,
      acquiredAt: at,
      renewedAt: at,
      durationSeconds: LEASE_DURATION_SECONDS,
      annotations: {
        [LEASE_ANNOTATIONS.instanceId]: request.purpose.instanceId,
        [LEASE_ANNOTATIONS.cluster]: request.purpose.cluster,
        [LEASE_ANNOTATIONS.pool]: request.purpose.pool,
        [LEASE_ANNOTATIONS.purpose]: request.purpose.purpose,
        ...pidAnnotation(request.runner),
      },
    };
    const state = leaseState(existing, now);
    const superseded = supersededSince(state, request);
    if (superseded !== undefined) return superseded;
    if (state.kind === 'held' && state.holder.runId === request.runId) {
      // This run acquired it before (a retried activity, a resumed run): keep its acquire time.
      const renewed = await kube.leases.replace(
        {
          ...write,
          acquiredAt: existing.acquiredAt ?? write.acquiredAt,
          annotations: { ...write.annotations, ...lastingOf(existing) },
        },
        existing.resourceVersion ?? '',
      );
      if (typeof renewed === 'string') continue;
      return { kind: 'acquired', expiresAt: expiry(at) };
    }
    if (state.kind === 'held' && state.live && request.force !== true) {
      const instanceId = existing.annotations[LEASE_ANNOTATIONS.instanceId];
      const purpose = existing.annotations[LEASE_ANNOTATIONS.purpose];
      return {
        kind: 'held',
        holder: state.identity,
        runId: state.holder.runId,
        ...definedOnly({ since: state.since }),
        expiresAt: state.expiresAt,
        ...definedOnly({ instanceId, purpose }),
        description: describeHolder(state, instanceId),
      };
    }
    const taken = await kube.leases.replace(
      {
        ...write,
        annotations: {
          ...write.annotations,
          ...lastingOf(existing),
          ...(state.kind === 'held' ? { [LEASE_ANNOTATIONS.lastHolder]: state.identity } : {}),
        },
      },
      existing.resourceVersion ?? '',
    );
    if (typeof taken === 'string') continue;
    return {
      kind: 'acquired',
      expiresAt: expiry(at),
      ...(state.kind === 'held' ? { tookOverFrom: state.identity } : {}),
    };
  }
  throw contention(ref, 'acquiring');
}

/** The refusal of a plan older than the last release of the lease by another run, if it is. */
function supersededSince(
  state: LeaseState,
  request: { readonly runId: string; readonly plannedAt?: string },
): Extract<AcquireOutcome, { kind: 'superseded' }> | undefined {
  if (state.kind !== 'free' || request.plannedAt === undefined || state.releasedAt === undefined)
    return undefined;
  const releasedMs = Date.parse(state.releasedAt);
  const plannedMs = Date.parse(request.plannedAt);
  if (!(releasedMs > plannedMs)) return undefined;
  const lastHolder = state.lastHolder ?? '';
  const last = parseHolder(lastHolder);
  if (last?.runId === request.runId) return undefined;
  return {
    kind: 'superseded',
    lastHolder,
    releasedAt: state.releasedAt,
    description:
      `run ${last?.runId ?? 'unknown'} of ${last?.kind ?? 'an unknown runner'} on ${last?.host ?? 'an unknown host'} ` +
      `held it and released it at ${state.releasedAt}, after this run planned at ${request.plannedAt}`,
  };
}

/**
 * Renews the lease if this run still holds it (expired or not); `lost` when anyone else took it. The
 * holder's pid is the renewing process's: a run resumed by a new process records itself (a runner without
 * one removes it, so that nobody judges the run by a process that is not its own).
 */
export async function renewPoolLease(
  kube: KubernetesPorts,
  ref: LeaseRef,
  runId: string,
  now: Date,
  runner?: RunnerIdentity,
): Promise<RenewOutcome> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const existing = await kube.leases.get(ref.namespace, ref.name);
    const lost = lostUnlessHeldBy(existing, runId, now);
    if (lost !== undefined) return lost;
    if (existing === undefined) break;
    const write = writeOf(existing);
    const annotations: Record<string, string> = { ...write.annotations };
    if (runner !== undefined) {
      delete annotations[LEASE_ANNOTATIONS.holderPid];
      Object.assign(annotations, pidAnnotation(runner));
    }
    const at = writtenAt(existing, now);
    const renewed = await kube.leases.replace(
      { ...write, annotations, renewedAt: at },
      existing.resourceVersion ?? '',
    );
    if (renewed === 'conflict') continue;
    if (renewed === 'gone') return { kind: 'lost', description: 'the lease was deleted' };
    const cancelRequested = renewed.annotations[LEASE_ANNOTATIONS.cancelRequested];
    return {
      kind: 'renewed',
      expiresAt: expiry(at),
      ...definedOnly({ cancelRequested }),
    };
  }
  throw contention(ref, 'renewing');
}

/** Releases the lease if this run holds it; a lease someone else holds is left alone. */
export async function releasePoolLease(
  kube: KubernetesPorts,
  ref: LeaseRef,
  runId: string,
  now: Date,
): Promise<{ readonly released: boolean }> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const existing = await kube.leases.get(ref.namespace, ref.name);
    if (existing === undefined || parseHolder(existing.holder)?.runId !== runId) return { released: false };
    const at = writtenAt(existing, now);
    const released = await kube.leases.replace(
      {
        ...ref,
        renewedAt: at,
        durationSeconds: existing.durationSeconds,
        annotations: {
          ...lastingOf(existing),
          [LEASE_ANNOTATIONS.lastHolder]: existing.holder ?? '',
          [LEASE_ANNOTATIONS.releasedAt]: at,
        },
      },
      existing.resourceVersion ?? '',
    );
    if (released === 'conflict') continue;
    return { released: released !== 'gone' };
  }
  throw contention(ref, 'releasing');
}

/**
 * Asks the run holding the pool to stop (`vmss-prototype cancel`, from any machine): an annotation on the
 * lease the run reads when it renews. `not-held` when no live run holds the pool.
 */
export async function requestPoolCancel(
  kube: KubernetesPorts,
  ref: LeaseRef,
  reason: string,
  now: Date,
): Promise<{ readonly kind: 'requested'; readonly description: string } | { readonly kind: 'not-held' }> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const existing = await kube.leases.get(ref.namespace, ref.name);
    const state = leaseState(existing, now);
    if (existing === undefined || state.kind !== 'held' || !state.live) return { kind: 'not-held' };
    const written = await kube.leases.replace(
      {
        ...writeOf(existing),
        annotations: { ...existing.annotations, [LEASE_ANNOTATIONS.cancelRequested]: reason },
      },
      existing.resourceVersion ?? '',
    );
    if (written === 'conflict') continue;
    if (written === 'gone') return { kind: 'not-held' };
    return {
      kind: 'requested',
      description: describeHolder(state, existing.annotations[LEASE_ANNOTATIONS.instanceId]),
    };
  }
  throw contention(ref, 'writing a cancel request on');
}

/** What every write to a held donor checks first: the lease still names this run. */
export interface Fence extends LeaseRef {
  readonly runId: string;
}

/**
 * Refuses (terminal `LeaseLost`) when the lease no longer names `fence.runId`: a run resumed after its lease
 * was taken must not touch the pool, whatever its history still had scheduled.
 */
export async function checkFence(
  kube: KubernetesPorts,
  fence: Fence,
  doing: string,
  now: Date,
): Promise<void> {
  const existing = await kube.leases.get(fence.namespace, fence.name);
  const lost = lostUnlessHeldBy(existing, fence.runId, now);
  if (lost === undefined) return;
  throw new TerminalError(
    'LeaseLost',
    `${doing}: run ${fence.runId} no longer holds the pool (${lost.description}); it touches nothing more`,
    { advice: 'see `vmss-prototype status`: the run that took the pool over gives back what this one held' },
  );
}

function lostUnlessHeldBy(
  existing: PoolLease | undefined,
  runId: string,
  now: Date,
): Extract<RenewOutcome, { kind: 'lost' }> | undefined {
  if (existing === undefined) return { kind: 'lost', description: 'the lease does not exist' };
  if (parseHolder(existing.holder)?.runId === runId) return undefined;
  const state = leaseState(existing, now);
  if (state.kind === 'held') {
    return {
      kind: 'lost',
      holder: state.identity,
      description: `it is held by ${describeHolder(state, existing.annotations[LEASE_ANNOTATIONS.instanceId])}`,
    };
  }
  const last = state.lastHolder === undefined ? '' : ` (last held by ${state.lastHolder})`;
  return { kind: 'lost', description: `the lease was released${last}` };
}

/** The lease's records that outlive a holder, carried over by every acquisition and release. */
function lastingOf(lease: PoolLease): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const key of LASTING_LEASE_ANNOTATIONS) {
    const value = lease.annotations[key];
    if (value !== undefined) kept[key] = value;
  }
  return kept;
}

/**
 * Writes one of the lease's lasting records (LASTING_LEASE_ANNOTATIONS) while `fence.runId` holds the
 * lease: refused (terminal `LeaseLost`) otherwise. `update` gets the record's current value. `anyHolder`:
 * whoever holds it (a record only taken away, harmless to the holder); an absent lease has none to change.
 */
export async function writeLeaseRecord(
  kube: KubernetesPorts,
  fence: Fence,
  key: (typeof LASTING_LEASE_ANNOTATIONS)[number],
  update: (current: string | undefined) => string,
  now: Date,
  options: { readonly anyHolder?: boolean } = {},
): Promise<void> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const existing = await kube.leases.get(fence.namespace, fence.name);
    if (existing === undefined && options.anyHolder === true) return;
    const holds = options.anyHolder === true || parseHolder(existing?.holder)?.runId === fence.runId;
    if (existing === undefined || !holds) {
      await checkFence(kube, fence, `recording ${key} on the pool lease`, now);
      return;
    }
    const value = update(existing.annotations[key]);
    if (value === (existing.annotations[key] ?? '')) return;
    const write = writeOf(existing);
    const written = await kube.leases.replace(
      { ...write, annotations: { ...write.annotations, [key]: value } },
      existing.resourceVersion ?? '',
    );
    if (written === 'conflict') continue;
    return;
  }
  throw contention(fence, 'recording on');
}

/** The holder's process id, for a runner that is one process (RunnerIdentity.pid). */
function pidAnnotation(runner: RunnerIdentity): Record<string, string> {
  return runner.pid === undefined ? {} : { [LEASE_ANNOTATIONS.holderPid]: String(runner.pid) };
}

function writeOf(lease: PoolLease): LeaseWrite {
  return {
    namespace: lease.namespace,
    name: lease.name,
    ...definedOnly({ holder: lease.holder, acquiredAt: lease.acquiredAt, renewedAt: lease.renewedAt }),
    durationSeconds: lease.durationSeconds,
    annotations: { ...lease.annotations },
  };
}
