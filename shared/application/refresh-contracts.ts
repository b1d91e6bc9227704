/**
 * What the refresh orchestrations take, report and show (inputs, results, custom status). Activity
 * inputs and outputs are not here: each activity's are defined with it (activities/). Everything here
 * crosses a durable boundary, so it is plain JSON (no Date, no class instances), small, and never holds
 * a secret: a cluster is named, its credentials are resolved inside the activity that needs them.
 */
import type { CaptureMode } from '../domain/capture-mode.js';
import type { ImageVersionRef, StorageAccountType } from '../domain/compute.js';
import type { Freshness } from '../domain/freshness.js';
import type { ProcessHolder } from '../domain/ownership.js';
import type { PoolPlan, PoolTarget } from './pool-plan.js';

/** The steps of a refresh, as its status and failures name them. */
export const REFRESH_STEPS = [
  'planning',
  'acquiring-lease',
  'giving-back-leftovers',
  'renewing-lease',
  'ensuring-image-definition',
  'pulling-prep-image',
  'recording-node-state',
  'cordoning',
  'draining',
  'preparing-disk',
  'waiting-for-power-off',
  'snapshotting',
  'freezing-filesystem',
  'copying-disk',
  'guarding-copy',
  'attaching-copy',
  'scrubbing-copy',
  'detaching-copy',
  'awaiting-snapshot',
  'capturing',
  'restoring-node',
  'starting-instance',
  'deleting-snapshot',
  'deleting-copy-disk',
  'building-image-version',
  'deleting-failed-image-version',
  'pinning-canary-version',
  'adding-capz-canary',
  'removing-capz-canary',
  'adding-canary-scale-set',
  'removing-canary-scale-set',
  'adding-canaries',
  'testing-canaries',
  'removing-canaries',
  'restoring-model',
  'rejecting-version',
  'publishing-image-version',
  'updating-scale-set-model',
  'setting-capz-template',
  'following-capz-rollout',
  'restoring-capz-template',
  'removing-bootstrap-extensions',
  'pruning-versions',
  'labelling-generations',
  'planning-rollback',
  'rolling-back',
  'verifying-rollback',
  'planning-retirement',
  'surging',
  'retiring-node',
  'deleting-retired-instance',
  'giving-back-surge',
  'releasing-lease',
  'writing-policy-status',
  'done',
] as const;

export type RefreshStep = (typeof REFRESH_STEPS)[number];

export interface RefreshPoolInput extends PoolTarget {
  /** Operator-named donor node; auto selection when absent. */
  readonly node?: string;
  /** Plan only: read everything, change nothing. */
  readonly dryRun?: boolean;
  /** Why this run started (timer, http, reboot-notice, cli), for tags and logs. */
  readonly trigger: string;
  /**
   * Randomness from whoever started the run (a UUID), mixed into the run id: two runners starting the same
   * instance id in the same millisecond (timers of two task hubs) still get different run ids.
   */
  readonly runSeed?: string;
}

/** What the canary gate of a run did. */
export interface CanaryReport {
  readonly verdict: 'passed' | 'rejected';
  /** Why it was rejected (the first failed condition). */
  readonly reason?: string;
  /** The canary instances (Uniform instance ids or Flexible VM names). */
  readonly instances: readonly string[];
  /** What became of them: kept as normal nodes, removed, deleted, or kept cordoned for inspection. */
  readonly instancesNow: 'kept' | 'removed' | 'deleted' | 'kept-cordoned';
  /** From the pin to the verdict (simulated or real seconds). */
  readonly seconds: number;
  /** Instances the autoscaler (or anyone) added from the version during the window: not ours, reported. */
  readonly othersFromVersion: readonly string[];
  /**
   * Not passed: their nodes by name (a computer name while one has not joined), found once the model was
   * back; each also gets a Warning Event `BuiltFromRejectedVersion` (docs/retirement.md).
   */
  readonly othersFromVersionNodes?: readonly string[];
  /**
   * What became of them: replaced under retirement's rules (`canary.othersAfterFail: replace`, the
   * default, after a rejection) or left, in words with the command that retires them.
   */
  readonly othersAfterFail?: { readonly replaced: readonly string[]; readonly detail: string };
  /**
   * `canary.afterPass: keep-size` (docs/retirement.md): the nodes of the oldest generations retired in
   * the canaries' place, and what happened, in words (a canary removed instead, an autoscaled pool).
   */
  readonly keptSize?: { readonly retired: readonly string[]; readonly detail: string };
}

/** The generation labels a run left. */
export interface GenerationsReport {
  readonly nodes: number;
  readonly labelled: number;
  readonly tainted: readonly string[];
  readonly untainted: readonly string[];
}

export interface PoolRefreshResult extends PoolTarget {
  /** `busy`: another run (any runner, any task hub) holds the pool; the reason says who and what to do. */
  readonly outcome:
    'refreshed' | 'up-to-date' | 'skipped' | 'refused' | 'planned' | 'busy' | 'failed' | 'rejected-by-canary';
  readonly reason: string;
  readonly plan?: PoolPlan;
  readonly version?: ImageVersionRef & {
    readonly id: string;
    readonly storageAccountType: StorageAccountType;
  };
  readonly donor?: string;
  /** How the donor was captured (the plan's choice). */
  readonly captureMode?: CaptureMode;
  /** Simulated or real seconds between cordon and uncordon of the donor (0 for live capture). */
  readonly donorOutOfServiceSeconds?: number;
  readonly removedExtensions?: readonly string[];
  readonly prunedVersions?: readonly string[];
  /** The run's id (marker, labels, tags, lease), once it held the pool. */
  readonly runId?: string;
  /** What earlier runs of the pool had left and this run gave back first. */
  readonly gaveBack?: readonly string[];
  /** The model was not moved: it already used a newer version (only an explicit rollback goes back). */
  readonly modelKept?: string;
  /**
   * Failure: the step and its cause; `kind` for a pool that could not be planned (`not-found`: its scale
   * set or what it names is gone, which `plan` reports without failing).
   */
  readonly failure?: {
    readonly step: string;
    readonly message: string;
    readonly kind?: 'not-found' | 'transient' | 'terminal';
  };
  readonly canary?: CanaryReport;
  /** A CAPZ pool: how CAPZ's rollout of the new template image ended (docs/capz.md). */
  readonly capzRollout?: { readonly replaced: number; readonly seconds: number };
  readonly generations?: GenerationsReport;
  /** How old the patches are that a node created now boots with, after the run. */
  readonly freshness?: Freshness;
  /** What the run could not do but did not fail for (labelling nodes, for example). */
  readonly warnings?: readonly string[];
}

export interface RollbackPoolInput extends PoolTarget {
  /** The version to go back to; default the newest usable one older than the current. */
  readonly to?: string;
  readonly dryRun?: boolean;
  readonly trigger: string;
  /** As RefreshPoolInput.runSeed: mixed into the rollback's run id (it holds the pool's lease). */
  readonly runSeed?: string;
}

export interface PoolRollbackResult extends PoolTarget {
  /** `busy`: another run holds the pool's lease (the reason says who and what to do). */
  readonly outcome: 'rolled-back' | 'planned' | 'refused' | 'busy';
  readonly reason: string;
  readonly from?: string;
  readonly to?: string;
  /** Refused because new instances get the asked version already (`to` of a policy is met). */
  readonly alreadyAt?: string;
  /** What the model's image reference points at (after the rollback, or planned). */
  readonly modelImageId?: string;
  readonly hidden: readonly string[];
  readonly rejected: readonly string[];
  readonly generations?: GenerationsReport;
  readonly freshness?: Freshness;
  readonly warnings?: readonly string[];
}

export interface RefreshClusterInput {
  readonly cluster: string;
  readonly dryRun?: boolean;
  readonly trigger: string;
  /** As RefreshPoolInput.runSeed: mixed into the run ids of its pool runs. */
  readonly runSeed?: string;
  /** At most this many pools at once, below the setting. */
  readonly maxParallelPools?: number;
  /**
   * The schedule's subscription run admits this cluster's pools one by one: plan, give back
   * leftovers and report refusals, then end with the pools to refresh in `handedOver` instead of
   * refreshing them.
   */
  readonly handOverPools?: boolean;
}

export interface ClusterRefreshResult {
  readonly cluster: string;
  /** Every pool's result; with `handOverPools`, those of the pools not handed over. */
  readonly pools: readonly PoolRefreshResult[];
  /** With `handOverPools`: the pools that need a refresh, in name order, for the caller to start. */
  readonly handedOver?: readonly string[];
}

/** The schedule's run of one subscription's clusters (`refresh-subscription:<subscriptionId>`). */
export interface RefreshSubscriptionInput {
  readonly subscriptionId: string;
  readonly clusters: readonly string[];
  /** VMSSP_MAX_POOLS_PER_SUBSCRIPTION: pools of this subscription refreshing at once, at most. */
  readonly maxPoolsPerSubscription: number;
  /** VMSSP_MAX_PARALLEL_POOLS: pools of one cluster refreshing at once, at most. */
  readonly maxParallelPools: number;
  readonly trigger: string;
  readonly runSeed?: string;
}

/**
 * A cluster of a subscription's run: how many of its pools ended how, and the failed ones with their
 * reason (the full results are the output of the cluster's own run, `refresh:<cluster>`); or why the
 * cluster's run did not start or failed itself.
 */
export type SubscriptionClusterResult =
  | {
      readonly cluster: string;
      readonly outcome: 'ran';
      readonly pools: Partial<Record<PoolRefreshResult['outcome'], number>>;
      readonly failed: readonly { readonly pool: string; readonly reason: string }[];
    }
  | { readonly cluster: string; readonly outcome: 'skipped' | 'failed'; readonly reason: string };

export interface SubscriptionRefreshResult {
  readonly subscriptionId: string;
  /** Pools of the subscription at once, and of one cluster: what the admission allowed. */
  readonly admitted: { readonly poolsAtOnce: number; readonly poolsPerCluster: number };
  readonly clusters: readonly SubscriptionClusterResult[];
}

/** Custom status of a running refresh (≤ 16 KB; no secrets). */
export interface RefreshStatus extends PoolTarget {
  readonly step: RefreshStep;
  readonly detail?: string;
  readonly node?: string;
  readonly version?: string;
  readonly since: string;
  /** The run's id, once it holds the pool. */
  readonly runId?: string;
}

/** What `release` (CLI, HTTP) asks for: give back what a pool's dead or stuck runs hold. */
export interface ReleasePoolInput extends PoolTarget {
  /** Show what would be given back; change nothing. */
  readonly dryRun?: boolean;
  /** Take the lease even from a live holder (the operator knows that runner is gone). */
  readonly force?: boolean;
  /**
   * The CLI found the live holder's process gone: a CLI run on the CLI's own host whose pid no longer
   * runs. Its lease is taken over as with `force`, but only while that run (`runId`) still holds it. A fact
   * only the CLI can see, decided there: the orchestration just compares run ids.
   */
  readonly holderGone?: HolderGone;
  readonly trigger: string;
  readonly runSeed?: string;
}

/** A CLI run whose process is gone: its run id, its host and its pid (from the lease). */
export type HolderGone = ProcessHolder;

export interface ReleasePoolResult extends PoolTarget {
  /**
   * `released`: given back (see `actions`); `nothing-left`: nothing to give back; `held`: a live run holds
   * the pool (see `holder`), nothing was touched; `planned`: a dry run (`actions` is what would be done);
   * `failed`: some actions failed (`failures`).
   */
  readonly outcome: 'released' | 'nothing-left' | 'held' | 'planned' | 'failed';
  /** Who holds the pool's live lease, in words. */
  readonly holder?: string;
  /** Done (or, for a dry run, to do), in words. */
  readonly actions: readonly string[];
  /** Left alone, with why. */
  readonly kept: readonly { readonly what: string; readonly reason: string }[];
  readonly failures: readonly string[];
  /** The live holder was taken over because its process was gone (`ReleasePoolInput.holderGone`). */
  readonly holderGone?: HolderGone;
}

/** What the reaper timer starts per cluster (`reap:<cluster>`). */
export interface ReapClusterInput {
  readonly cluster: string;
  readonly trigger: string;
  /** As RefreshPoolInput.runSeed: mixed into the run id of each pool's give-back. */
  readonly runSeed?: string;
}

/** What the reaper did in each pool of a cluster (a pool it could not read is `failed`). */
export interface ReapClusterResult {
  readonly cluster: string;
  readonly pools: readonly ReleasePoolResult[];
}
