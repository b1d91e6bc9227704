/**
 * The reaper's survey of a cluster (reap-cluster.orchestration.ts, and the timer's cluster run for the
 * pools it does not refresh: refresh-cluster.orchestration.ts): every pool's holdings read in one
 * activity, with the listings pools share read once (a resource group's snapshots and disks, a
 * namespace's prep pods: sharedListings), and decided with `release`'s own rule (leftovers.ts). Only the
 * pools with something to give back go on to a give-back of their own, which reads that pool again under
 * its lease; the others are reported as they are. Before, every tick read every pool alone: 4 ARM and 3
 * Kubernetes requests per pool and one activity each, every 5 minutes.
 */
import { messageOf } from '../domain/errors.js';
import { decideLeftovers, nothingToGiveBack } from './leftovers.js';
import { readPoolHoldings, scopeOfPool, sharedListings } from './pool-holdings.js';
import { listPoolsOfCluster } from './pool-lookup.js';
import type { ClusterHandle, ConfiguredPool } from './refresh-dependencies.js';

/** One pool as the survey found it. */
export type PoolSurvey =
  | {
      readonly pool: string;
      /** Nothing to give back: `held` when a live run holds the pool (`holder` says who). */
      readonly outcome: 'nothing-left' | 'held';
      readonly holder?: string;
      readonly kept: readonly { readonly what: string; readonly reason: string }[];
    }
  | {
      readonly pool: string;
      /** Something to give back, or the pool could not be read (`reason`): its own give-back decides. */
      readonly outcome: 'to-give-back';
      readonly reason?: string;
    };

export interface ClusterSurvey {
  readonly pools: readonly PoolSurvey[];
}

/** Pools read at once: each read is a handful of requests, and ARM's read budget is per subscription. */
const POOLS_AT_ONCE = 4;

/**
 * `pools`: the pools to survey when the caller knows them and where their scale sets are (the timer's
 * cluster run, for the pools it does not refresh); else every pool of the cluster, listed.
 */
export async function surveyClusterHoldings(
  handle: ClusterHandle,
  now: Date,
  pools?: readonly ConfiguredPool[],
): Promise<ClusterSurvey> {
  const surveyed = pools ?? (await listPoolsOfCluster(handle));
  const listings = sharedListings(handle);
  const surveyOne = async (pool: ConfiguredPool): Promise<PoolSurvey> => {
    try {
      const scope = scopeOfPool(handle, pool);
      const model = await handle.compute.scaleSets.get(pool.scaleSet);
      const view = await readPoolHoldings(handle, scope, model, undefined, undefined, listings);
      const decision = decideLeftovers(view, now);
      if (!nothingToGiveBack(decision)) return { pool: pool.name, outcome: 'to-give-back' };
      return {
        pool: pool.name,
        outcome: decision.holder === undefined ? 'nothing-left' : 'held',
        ...(decision.holder === undefined ? {} : { holder: decision.holder }),
        kept: decision.preview.kept,
      };
    } catch (error) {
      // A pool that cannot be read here is read again by its own give-back, which reports the failure.
      return { pool: pool.name, outcome: 'to-give-back', reason: messageOf(error) };
    }
  };
  const lines: PoolSurvey[] = [];
  for (let next = 0; next < surveyed.length; next += POOLS_AT_ONCE) {
    lines.push(...(await Promise.all(surveyed.slice(next, next + POOLS_AT_ONCE).map(surveyOne))));
  }
  return { pools: lines };
}
