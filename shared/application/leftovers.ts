/**
 * What a pool's dead or stuck runs left that is to be given back, decided from what the cluster and Azure
 * show (pool-holdings.ts) with the reaper's rule (domain/reaper.ts): the nodes, pods, snapshots and
 * versions of runs that are not the live holder's, and the records dead runs left on the scale set (a
 * canary) and on the lease (a retirement), CAPZ canary pools and canary scale sets. One decision for `release`, the timer's
 * idle pools and the reaper, so that the reaper's survey of a cluster skips exactly the pools `release`
 * would find nothing to do for.
 */
import { isCanaryPoolOfRun } from '../domain/cluster-api.js';
import { describeHolder, LEASE_ANNOTATIONS, leaseState } from '../domain/ownership.js';
import { planReaping, type ReapPlan } from '../domain/reaper.js';
import { parseRetirementRecord } from '../domain/retirement-record.js';
import type { CanaryScaleSetHolding, PoolHoldingsView } from './pool-holdings.js';
import type { HolderGone } from './refresh-contracts.js';

export interface LeftoversRequest {
  /** Take the lease even from a live holder (`release --force`). */
  readonly force?: boolean;
  /** The CLI saw the live holder's process gone (same host, pid no longer runs). */
  readonly holderGone?: HolderGone;
}

export interface LeftoversDecision {
  /** Who holds the pool's live lease, in words. */
  readonly holder?: string;
  /** The live holder the request names as gone: it is taken over. */
  readonly gone?: HolderGone;
  /** The lease is taken even from a live holder (force, or a gone holder). */
  readonly force: boolean;
  /** The run whose holdings stay (the live holder's, unless taken over). */
  readonly alive?: string;
  readonly preview: ReapPlan;
  /** The records of dead runs to give back (a canary, a retirement, CAPZ canary pools), in words. */
  readonly deadRecords: readonly string[];
}

export function decideLeftovers(
  view: PoolHoldingsView,
  now: Date,
  request: LeftoversRequest = {},
): LeftoversDecision {
  const state = leaseState(view.lease, now);
  const live = state.kind === 'held' && state.live ? state : undefined;
  const holder =
    live === undefined
      ? undefined
      : describeHolder(live, view.lease?.annotations[LEASE_ANNOTATIONS.instanceId]);
  const gone =
    live !== undefined && request.holderGone?.runId === live.holder.runId ? request.holderGone : undefined;
  const force = request.force === true || gone !== undefined;
  const alive = force ? undefined : live?.holder.runId;
  const preview = planReaping(view.holdings, alive);
  // A dead run's canary: the model pinned to a version nobody tests any more, recorded on the scale set
  // (a run killed while testing left every scale-out booting the untested image).
  const record = view.canaryRecord;
  const deadRecords: string[] =
    record === undefined
      ? []
      : record === 'damaged'
        ? ['the canary record on the scale set (damaged): the model and capacity checked and put back']
        : record.run === alive
          ? []
          : [
              `the canary of run ${record.run}: the model back to its prior image, the canary instances ` +
                'deleted, the capacity as before',
            ];
  // A dead run's retirement (retire-pool/): its node, its surge, its record on the lease.
  const retirement = parseRetirementRecord(view.lease?.annotations[LEASE_ANNOTATIONS.retirement]);
  if (retirement === 'damaged') {
    deadRecords.push('the retirement record on the pool lease (damaged): removed');
  } else if (retirement !== undefined && retirement.run !== alive) {
    deadRecords.push(
      `the retirement of run ${retirement.run}: node ${retirement.node} given back, its surge instance ` +
        `drained and deleted unless node ${retirement.node}'s instance is gone (one instance less: what others added stays)`,
    );
  }
  // A CAPZ pool's canary pools of dead runs, in its management cluster.
  for (const name of deadCapzCanaryPools(view, alive)) {
    deadRecords.push(`the canary pool ${name} of a dead run, in the management cluster: deleted`);
  }
  // Canary scale sets of dead runs (canary-scale-set.phase.ts), beside the pool's.
  for (const { name, run } of deadCanaryScaleSets(view, alive)) {
    deadRecords.push(`the canary scale set ${name} of run ${run}: its nodes drained, the scale set deleted`);
  }
  return {
    ...(holder === undefined ? {} : { holder }),
    ...(gone === undefined ? {} : { gone }),
    force,
    ...(alive === undefined ? {} : { alive }),
    preview,
    deadRecords,
  };
}

/** Nothing to give back, and no gone holder to take the lease from. */
export function nothingToGiveBack(decision: LeftoversDecision): boolean {
  return (
    decision.preview.actions.length === 0 && decision.deadRecords.length === 0 && decision.gone === undefined
  );
}

/** The CAPZ canary pools in the holdings that `runId` (the live or holding run) did not make. */
export function deadCapzCanaryPools(
  view: Pick<PoolHoldingsView, 'capzCanaryPools'>,
  runId: string | undefined,
): string[] {
  return (view.capzCanaryPools?.names ?? []).filter(
    (name) => runId === undefined || !isCanaryPoolOfRun(name, runId),
  );
}

/** The canary scale sets in the holdings that `runId` (the live or holding run) did not make. */
export function deadCanaryScaleSets(
  view: Pick<PoolHoldingsView, 'canaryScaleSets'>,
  runId: string | undefined,
): CanaryScaleSetHolding[] {
  return (view.canaryScaleSets ?? []).filter((holding) => runId === undefined || holding.run !== runId);
}
