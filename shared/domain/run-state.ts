/**
 * One truth for "is this run running" (docs/cli.md#after-an-interrupted-run): a run is running only while
 * the pool's lease is live, held by that run, and its holder is alive. A local record that says "Running"
 * (the CLI's state dir) proves nothing by itself: the process that wrote it may have been killed, and
 * `release` (or the reaper, or another runner once the lease expired) may have given the pool back since.
 * Pure: the lease as read, what the caller could tell of the holder's process, and `now`.
 */
import { LEASE_ANNOTATIONS, leaseState, type PoolLease } from './ownership.js';

/**
 * What the caller knows of the holder's process: `alive`, `gone` (a CLI run on this machine whose pid no
 * longer runs), or `unknown` (a function app, another machine: only its lease tells, and it is trusted).
 */
export type HolderLiveness = 'alive' | 'gone' | 'unknown';

export type RunState =
  /** The run holds the pool's live lease and its holder is (or may be) alive: wait for it, or cancel it. */
  | { readonly kind: 'running'; readonly runId: string }
  /** The run holds the pool's live lease but its process is gone: resume it, or release the pool. */
  | { readonly kind: 'interrupted'; readonly runId: string }
  /** The run holds nothing any more (given back, expired, or another run holds the pool). */
  | { readonly kind: 'ended'; readonly why: 'free' | 'expired' | 'other-run' };

/**
 * The state at `now` of the run recorded as instance `instanceId` (`refresh:<cluster>:<pool>`), from the
 * pool's lease (undefined when there is none) and the liveness of its holder's process.
 */
export function runState(
  lease: PoolLease | undefined,
  instanceId: string,
  holder: HolderLiveness,
  now: Date,
): RunState {
  const state = leaseState(lease, now);
  if (state.kind === 'free') return { kind: 'ended', why: 'free' };
  if (!state.live) return { kind: 'ended', why: 'expired' };
  const heldFor = lease?.annotations[LEASE_ANNOTATIONS.instanceId];
  if (heldFor !== undefined && heldFor !== instanceId) return { kind: 'ended', why: 'other-run' };
  const runId = state.holder.runId;
  return holder === 'gone' ? { kind: 'interrupted', runId } : { kind: 'running', runId };
}
