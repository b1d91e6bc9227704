/**
 * The exit code of a finished command: 0 done; 1 a run failed, or the pool or node the operator named
 * was refused or skipped (they asked for that target, and it did not happen). Pools that auto mode
 * refuses or skips on its own are decisions, not failures; so are a retirement with nothing due or outside
 * its windows, and a pool `plan` could not plan because its scale set is gone (goneAtPlanning). doctor: 1 when a check found something missing. Code 2 (usage, settings) is decided before
 * anything runs (cli/failures.ts).
 */
import type { PoolRefreshResult } from '../shared/application/refresh-contracts.js';
import type { CliOptions } from './args.js';
import type { CommandResult } from './commands.js';

/**
 * A pool `plan` could not plan because what it reads is gone (its scale set deleted, or in a group the
 * role does not reach): a report, as `status` names such a pool and exits 0; the pool is in the output
 * with the reason. `refresh` still fails on it.
 */
function goneAtPlanning(pool: PoolRefreshResult): boolean {
  return pool.failure?.step === 'planning' && pool.failure.kind === 'not-found';
}

export function exitCodeOf(result: CommandResult, options: Pick<CliOptions, 'pool' | 'node'>): 0 | 1 {
  switch (result.kind) {
    case 'status':
      return 0;
    case 'doctor':
      return result.ok ? 0 : 1;
    case 'cancel':
      return result.pools.every((pool) => pool.outcome === 'requested') ? 0 : 1;
    case 'release':
      // A live run still holds the pool, or something could not be given back: the pool is not free.
      if (result.failures.length > 0) return 1;
      return result.pools.some((pool) => pool.outcome === 'held' || pool.outcome === 'failed') ? 1 : 0;
    case 'rollback':
      // The operator named the pool (and maybe the version): a refusal is a failure of what they asked.
      return result.failures.length > 0 ||
        result.pools.some((pool) => pool.outcome === 'refused' || pool.outcome === 'busy')
        ? 1
        : 0;
    case 'retire':
      // As rollback: the operator named the pool. Refused, busy, or every node it tried given back (a
      // drain that did not finish) is not what they asked for; nothing due or a closed window is an answer.
      return result.failures.length > 0 ||
        result.pools.some((pool) => ['refused', 'busy', 'given-back'].includes(pool.outcome))
        ? 1
        : 0;
    case 'plan':
    case 'refresh':
      break;
  }
  if (result.failures.length > 0) return 1;
  const pools = result.clusters.flatMap((cluster) => cluster.pools);
  if (pools.some((pool) => pool.outcome === 'failed' && !(result.kind === 'plan' && goneAtPlanning(pool))))
    return 1;
  if (options.node !== undefined) {
    return pools.every((pool) => ['refreshed', 'planned', 'up-to-date'].includes(pool.outcome)) ? 0 : 1;
  }
  if (options.pool !== undefined) {
    // The pool you named is refused, or held by another run (the reason says who and what to do).
    return pools.some((pool) => pool.outcome === 'refused' || pool.outcome === 'busy') ? 1 : 0;
  }
  return 0;
}
