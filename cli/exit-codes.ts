/**
 * The exit code of a finished command: 0 done; 1 a run failed, or the pool or node the operator named
 * was refused or skipped (they asked for that target, and it did not happen). Pools that auto mode
 * refuses or skips on its own are decisions, not failures. Code 2 (usage, settings) is decided before
 * anything runs (cli/failures.ts).
 */
import type { CliOptions } from './args.js';
import type { CommandResult } from './commands.js';

export function exitCodeOf(result: CommandResult, options: Pick<CliOptions, 'pool' | 'node'>): 0 | 1 {
  if (result.kind === 'status') return 0;
  if (result.kind === 'rollback') {
    // The operator named the pool (and maybe the version): a refusal is a failure of what they asked.
    return result.failures.length > 0 || result.pools.some((pool) => pool.outcome === 'refused') ? 1 : 0;
  }
  if (result.failures.length > 0) return 1;
  const pools = result.clusters.flatMap((cluster) => cluster.pools);
  if (pools.some((pool) => pool.outcome === 'failed')) return 1;
  if (options.node !== undefined) {
    return pools.every((pool) => ['refreshed', 'planned', 'up-to-date'].includes(pool.outcome)) ? 0 : 1;
  }
  if (options.pool !== undefined) {
    return pools.some((pool) => pool.outcome === 'refused') ? 1 : 0;
  }
  return 0;
}
