/**
 * What the refresh orchestrations take, report and show (inputs, results, custom status). Activity
 * inputs and outputs are not here: each activity's are defined with it (activities/). Everything here
 * crosses a durable boundary, so it is plain JSON (no Date, no class instances), small, and never holds
 * a secret: a cluster is named, its credentials are resolved inside the activity that needs them.
 */
import type { ImageVersionRef, StorageAccountType } from '../domain/compute.js';
import type { Freshness } from '../domain/freshness.js';
import type { PoolPlan, PoolTarget } from './pool-plan.js';

/** The steps of a refresh, as its status and failures name them. */
export const REFRESH_STEPS = [
  'planning',
  'ensuring-image-definition',
  'recording-node-state',
  'cordoning',
  'draining',
  'preparing-disk',
  'waiting-for-power-off',
  'snapshotting',
  'capturing',
  'restoring-node',
  'starting-instance',
  'deleting-snapshot',
  'building-image-version',
  'deleting-failed-image-version',
  'pinning-canary-version',
  'adding-canaries',
  'testing-canaries',
  'removing-canaries',
  'restoring-model',
  'rejecting-version',
  'publishing-image-version',
  'updating-scale-set-model',
  'removing-bootstrap-extensions',
  'pruning-versions',
  'labelling-generations',
  'planning-rollback',
  'rolling-back',
  'verifying-rollback',
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
}

/** What the canary gate of a run did (issue 13). */
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
}

/** The generation labels a run left (issue 13). */
export interface GenerationsReport {
  readonly nodes: number;
  readonly labelled: number;
  readonly tainted: readonly string[];
  readonly untainted: readonly string[];
}

export interface PoolRefreshResult extends PoolTarget {
  readonly outcome:
    'refreshed' | 'up-to-date' | 'skipped' | 'refused' | 'planned' | 'failed' | 'rejected-by-canary';
  readonly reason: string;
  readonly plan?: PoolPlan;
  readonly version?: ImageVersionRef & {
    readonly id: string;
    readonly storageAccountType: StorageAccountType;
  };
  readonly donor?: string;
  /** Simulated or real seconds between cordon and uncordon of the donor. */
  readonly donorOutOfServiceSeconds?: number;
  readonly removedExtensions?: readonly string[];
  readonly prunedVersions?: readonly string[];
  /** Failure: the step and its cause. */
  readonly failure?: { readonly step: string; readonly message: string };
  readonly canary?: CanaryReport;
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
}

export interface PoolRollbackResult extends PoolTarget {
  readonly outcome: 'rolled-back' | 'planned' | 'refused';
  readonly reason: string;
  readonly from?: string;
  readonly to?: string;
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
}

export interface ClusterRefreshResult {
  readonly cluster: string;
  readonly pools: readonly PoolRefreshResult[];
}

/** Custom status of a running refresh (≤ 16 KB; no secrets). */
export interface RefreshStatus extends PoolTarget {
  readonly step: RefreshStep;
  readonly detail?: string;
  readonly node?: string;
  readonly version?: string;
  readonly since: string;
}
