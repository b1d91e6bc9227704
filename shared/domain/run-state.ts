/**
 * What a pool's run is doing, as every view of it says it (the status page, `status --json`, `plan`): a
 * run is running only while its pool lease is live and its holder alive. An expired lease, or a holder
 * whose process is known to be gone, is a run that was interrupted and left the pool behind: whatever it
 * held stays held until `vmss-prototype release --pool P` gives it back (docs/design.md#safety-model).
 * Pure: the lease record, what is known of the holder's liveness and `now` come in.
 */
import type { PoolLease } from './ownership.js';
import { LEASE_ANNOTATIONS, leaseState } from './ownership.js';

/**
 * What the caller knows of the holding process: `gone` only when it could see the process is not running
 * (a CLI run on the same host whose pid no longer runs); `unknown` otherwise (then the lease decides).
 */
export type HolderLiveness = 'alive' | 'gone' | 'unknown';

export type RunState =
  | {
      readonly kind: 'idle';
      /** The run that held the pool last and when it let go, when recorded. */
      readonly lastRunId?: string;
      readonly releasedAt?: string;
    }
  | {
      readonly kind: 'running';
      readonly runId: string;
      readonly since?: string;
      readonly expiresAt: string;
      /** An operator asked it to stop (RFC 3339); it stops at its next step. */
      readonly cancelRequested?: string;
    }
  | {
      readonly kind: 'interrupted';
      readonly runId: string;
      readonly since?: string;
      /** Why it is not running: its lease expired, or its process is gone. */
      readonly cause: 'lease-expired' | 'holder-gone';
      readonly expiresAt: string;
      /** In words, ending with the way out. */
      readonly detail: string;
      /** The command that gives back what it left. */
      readonly wayOut: string;
    };

/** The command that gives back what a run left on `pool`. */
export function releaseCommand(pool: string): string {
  return `vmss-prototype release --pool ${pool}`;
}

export function runStateOf(input: {
  readonly pool: string;
  readonly lease: PoolLease | undefined;
  readonly holder: HolderLiveness;
  readonly now: Date;
}): RunState {
  const state = leaseState(input.lease, input.now);
  if (state.kind === 'free') {
    const lastRunId = state.lastHolder?.split('/').at(-1);
    return {
      kind: 'idle',
      ...(lastRunId === undefined || lastRunId === '' ? {} : { lastRunId }),
      ...(state.releasedAt === undefined ? {} : { releasedAt: state.releasedAt }),
    };
  }
  const since = state.since === undefined ? {} : { since: state.since };
  if (state.live && input.holder !== 'gone') {
    return {
      kind: 'running',
      runId: state.holder.runId,
      ...since,
      expiresAt: state.expiresAt,
      ...(state.cancelRequested === undefined ? {} : { cancelRequested: state.cancelRequested }),
    };
  }
  const cause = state.live ? 'holder-gone' : 'lease-expired';
  const wayOut = releaseCommand(input.pool);
  const why =
    cause === 'holder-gone'
      ? `its process on ${state.holder.host} is gone`
      : `its lease expired at ${state.expiresAt} without renewal`;
  return {
    kind: 'interrupted',
    runId: state.holder.runId,
    ...since,
    cause,
    expiresAt: state.expiresAt,
    detail: `run ${state.holder.runId} was interrupted (${why}) and left pool ${input.pool} behind; \`${wayOut}\` gives back what it held`,
    wayOut,
  };
}

/**
 * The same rule seen from one recorded run (the CLI's state dir, docs/cli.md#after-an-interrupted-run):
 * a local record that says "Running" proves nothing by itself. The run `instanceId` is running only while
 * the pool's state above is `running` and the lease is held for it; `interrupted` while its live lease
 * outlived its process (resume it, or release the pool); otherwise it holds nothing any more (`ended`):
 * the pool is free, another run holds it, or its lease expired (whatever it left is given back by
 * `release`, the reaper, or the next run that takes the pool).
 */
export type RecordedRunState =
  | { readonly kind: 'running'; readonly runId: string }
  | { readonly kind: 'interrupted'; readonly runId: string }
  | { readonly kind: 'ended'; readonly why: 'free' | 'expired' | 'other-run' };

export function runState(
  lease: PoolLease | undefined,
  instanceId: string,
  holder: HolderLiveness,
  now: Date,
): RecordedRunState {
  const pool = runStateOf({ pool: '', lease, holder, now });
  if (pool.kind === 'idle') return { kind: 'ended', why: 'free' };
  if (pool.kind === 'interrupted' && pool.cause === 'lease-expired') return { kind: 'ended', why: 'expired' };
  const heldFor = lease?.annotations[LEASE_ANNOTATIONS.instanceId];
  if (heldFor !== undefined && heldFor !== instanceId) return { kind: 'ended', why: 'other-run' };
  return { kind: pool.kind, runId: pool.runId };
}
