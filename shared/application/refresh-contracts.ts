/**
 * What the refresh orchestrations take, report and show (inputs, results, custom status). Activity
 * inputs and outputs are not here: each activity's are defined with it (activities/). Everything here
 * crosses a durable boundary, so it is plain JSON (no Date, no class instances), small, and never holds
 * a secret: a cluster is named, its credentials are resolved inside the activity that needs them.
 */
import type { CaptureMode } from '../domain/capture-mode.js';
import type { ImageVersionRef, StorageAccountType } from '../domain/compute.js';
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
  'freezing-filesystem',
  'copying-disk',
  'attaching-copy',
  'scrubbing-copy',
  'detaching-copy',
  'capturing',
  'restoring-node',
  'starting-instance',
  'deleting-snapshot',
  'deleting-copy-disk',
  'building-image-version',
  'deleting-failed-image-version',
  'publishing-image-version',
  'updating-scale-set-model',
  'removing-bootstrap-extensions',
  'pruning-versions',
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

export interface PoolRefreshResult extends PoolTarget {
  readonly outcome: 'refreshed' | 'up-to-date' | 'skipped' | 'refused' | 'planned' | 'failed';
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
  /** Failure: the step and its cause. */
  readonly failure?: { readonly step: string; readonly message: string };
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
