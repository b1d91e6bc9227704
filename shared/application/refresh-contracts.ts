/**
 * What the refresh orchestrations and their activities exchange. Everything here crosses a durable
 * boundary, so it is plain JSON (no Date, no class instances), small, and never holds a secret: a
 * cluster is named, its credentials are resolved inside the activity that needs them.
 */
import type {
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersionRef,
  PowerState,
  ProvisioningState,
  ReplicationState,
  StorageAccountType,
} from '../domain/compute.js';
import type { ScaleSetRef } from '../domain/provider-id.js';

/** Activity names: the orchestrators and the registrations share these, so a typo is a compile error. */
export const ACTIVITY = {
  planPool: 'planPool',
  listPools: 'listPools',
  readPoolStatus: 'readPoolStatus',
  ensureImageDefinition: 'ensureImageDefinition',
  readNodeState: 'readNodeState',
  protectNode: 'protectNode',
  drainNodeStep: 'drainNodeStep',
  startDiskPrep: 'startDiskPrep',
  readPrepPod: 'readPrepPod',
  deletePrepPod: 'deletePrepPod',
  readInstance: 'readInstance',
  requestInstancePowerOff: 'requestInstancePowerOff',
  requestInstanceStart: 'requestInstanceStart',
  requestSnapshot: 'requestSnapshot',
  readSnapshot: 'readSnapshot',
  requestSnapshotDeletion: 'requestSnapshotDeletion',
  requestImageVersion: 'requestImageVersion',
  readImageVersion: 'readImageVersion',
  requestImageVersionExclusion: 'requestImageVersionExclusion',
  requestImageVersionDeletion: 'requestImageVersionDeletion',
  requestScaleSetImageUpdate: 'requestScaleSetImageUpdate',
  readScaleSetImage: 'readScaleSetImage',
  listRemovableExtensions: 'listRemovableExtensions',
  requestExtensionDeletion: 'requestExtensionDeletion',
  pruneImageVersions: 'pruneImageVersions',
  restoreNode: 'restoreNode',
} as const;

export type ActivityName = (typeof ACTIVITY)[keyof typeof ACTIVITY];

export const ORCHESTRATION = {
  refreshPool: 'refreshPool',
  refreshCluster: 'refreshCluster',
  clusterStatus: 'clusterStatus',
  poolSignal: 'poolSignal',
} as const;

export interface PoolTarget {
  readonly cluster: string;
  readonly pool: string;
}

export interface RefreshPoolInput extends PoolTarget {
  /** Operator-named donor node; auto selection when absent. */
  readonly node?: string;
  /** Plan only: read everything, change nothing. */
  readonly dryRun?: boolean;
  /** Why this run started (timer, http, reboot-notice, cli), for tags and logs. */
  readonly trigger: string;
}

/** One node's verdict, as shown by `plan`. */
export interface NodeVerdictView {
  readonly node: string;
  readonly candidate: boolean;
  /** `candidate (ready for 5h 2m)` or the rule that rejected it. */
  readonly detail: string;
  readonly code: string;
}

/** Everything a refresh run needs to know about its pool, resolved once from settings and Azure. */
export interface PoolRunSettings {
  readonly drainGracePeriodSeconds: number;
  readonly drainTimeoutSeconds: number;
  readonly prepNamespace: string;
  readonly prepImage: string;
  readonly keepExtensionTypes: readonly string[];
  readonly history: number;
  readonly storageAccountType: StorageAccountType;
  readonly extraRegions: readonly string[];
  /** Point the model at the version (pinned) instead of the definition (latest). */
  readonly pinVersion: boolean;
  readonly deleteEmptyDirData: boolean;
  readonly forceUnreplicated: boolean;
}

export type PoolDecision =
  | { readonly kind: 'up-to-date'; readonly reason: string }
  | {
      readonly kind: 'refresh';
      readonly node: string;
      readonly instanceId: string;
      readonly reason: string;
      /** The donor's last-patch time (RFC 3339), when it has a usable one. */
      readonly patchedAt?: string;
      readonly warnings: readonly string[];
    }
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'refused'; readonly reason: string };

/** What a run that stops after planning reports: a `refresh` decision not carried out is `planned`. */
export function outcomeOfPlan(decision: PoolDecision): 'planned' | 'up-to-date' | 'skipped' | 'refused' {
  switch (decision.kind) {
    case 'refresh':
      return 'planned';
    case 'up-to-date':
      return 'up-to-date';
    case 'skip':
      return 'skipped';
    case 'refused':
      return 'refused';
  }
}

export interface PoolPlan extends PoolTarget {
  readonly scaleSet: ScaleSetRef & { readonly id: string; readonly location: string };
  readonly decision: PoolDecision;
  readonly verdicts: readonly NodeVerdictView[];
  /** Present when the decision is `refresh`. */
  readonly image?: {
    readonly definition: ImageDefinitionRef;
    readonly definitionSpec: ImageDefinitionSpec;
    readonly galleryTags: Readonly<Record<string, string>>;
  };
  readonly settings: PoolRunSettings;
  /** The image the model points at now, if it is one of ours. */
  readonly currentImageId?: string;
}

export interface NodePriorState {
  readonly unschedulable: boolean;
  /** Value of the scale-down-disabled annotation before we touched it; null when absent. */
  readonly scaleDownDisabled: string | null;
}

export interface DrainStepResult {
  /** True when no evictable pod is left on the node. */
  readonly done: boolean;
  readonly evictedNow: number;
  /** Pods still on the node: evicting (terminating) or refused by a PDB for now. */
  readonly pending: readonly {
    readonly pod: string;
    readonly state: 'terminating' | 'blocked';
    readonly message?: string;
  }[];
  /** Pods that make kubectl-style drain refuse before evicting anything. */
  readonly blockers: readonly { readonly pod: string; readonly reason: string }[];
  readonly warnings: readonly string[];
}

export interface InstanceView {
  /** False when the instance no longer exists (scaled in by the autoscaler or an operator mid-run). */
  readonly exists: boolean;
  readonly powerState: PowerState;
  readonly provisioningState: ProvisioningState;
  readonly osDiskId?: string;
  readonly vmId?: string;
  readonly location: string;
}

export interface SnapshotView {
  readonly exists: boolean;
  readonly provisioningState?: ProvisioningState;
  readonly id?: string;
}

export interface ImageVersionView {
  readonly exists: boolean;
  readonly id?: string;
  readonly provisioningState?: ProvisioningState;
  readonly excludeFromLatest?: boolean;
  readonly replicationState?: ReplicationState;
}

export type ImageVersionRequestResult =
  { readonly kind: 'accepted' } | { readonly kind: 'zrs-unsupported'; readonly message: string };

/** An extension the prototype image makes redundant (bootstrap), and whether its deletion is under way. */
export interface RemovableExtension {
  readonly name: string;
  readonly deleting: boolean;
}

export interface ScaleSetImageView {
  readonly imageId?: string;
  readonly provisioningState: ProvisioningState;
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
  /** Simulated or real seconds between cordon and uncordon of the donor. */
  readonly donorOutOfServiceSeconds?: number;
  readonly removedExtensions?: readonly string[];
  readonly prunedVersions?: readonly string[];
  /** Failure: the step and its cause. */
  readonly failure?: { readonly step: string; readonly message: string };
}

/** Custom status of a running refresh (≤ 16 KB; no secrets). */
export interface RefreshStatus extends PoolTarget {
  readonly step: string;
  readonly detail?: string;
  readonly node?: string;
  readonly version?: string;
  readonly since: string;
}
