/**
 * A pool's plan: what planning decided and everything the run needs to carry it out. The output of the
 * `planPool` activity, carried in the refresh's result; plain JSON, no secrets.
 */
import type { BootstrapFlavour, NewNodeBootstrap } from '../domain/bootstrap-flavour.js';
import type { CaptureMode, ScrubbedDisk } from '../domain/capture-mode.js';
import type { ImageDefinitionRef, ImageDefinitionSpec, ImageVersion } from '../domain/compute.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import type { PlannedCapzPool } from './capz-pool.js';
import type { PoolRunSettings } from './refresh-dependencies.js';

export interface PoolTarget {
  readonly cluster: string;
  readonly pool: string;
}

/** One node's verdict, as shown by `plan`. */
export interface NodeVerdictView {
  readonly node: string;
  readonly candidate: boolean;
  /** `candidate (ready for 5h 2m)` or the rule that rejected it. */
  readonly detail: string;
  readonly code: string;
  /** Ready too briefly but otherwise a candidate: when it becomes one (ISO 8601). */
  readonly eligibleAt?: string;
}

export type PoolDecision =
  | { readonly kind: 'up-to-date'; readonly reason: string }
  | {
      readonly kind: 'refresh';
      readonly node: string;
      readonly instanceId: string;
      /** How the donor's disk is de-identified (the prep script's flavour). */
      readonly flavour: BootstrapFlavour;
      /** Where the flavour came from: the setting, or the donor's labels and annotations. */
      readonly flavourEvidence?: string;
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

/** `plan`'s decision for a pool in short, as `status` carries it: its outcome and why. */
export interface PoolPlanSummary {
  /** `not-planned`: planning the pool failed (the reason says why). */
  readonly outcome: ReturnType<typeof outcomeOfPlan> | 'not-planned';
  readonly reason: string;
}

export function planSummaryOf(decision: PoolDecision): PoolPlanSummary {
  return {
    outcome: outcomeOfPlan(decision),
    reason:
      decision.kind === 'refresh'
        ? `would refresh from node ${decision.node}: ${decision.reason}`
        : decision.reason,
  };
}

export interface PoolPlan extends PoolTarget {
  readonly scaleSet: ScaleSetRef & { readonly id: string; readonly location: string };
  readonly decision: PoolDecision;
  /** Every member's verdict, or for a large pool the first ones and the best candidates'. */
  readonly verdicts: readonly NodeVerdictView[];
  /** Members whose verdict is not in `verdicts` (a large pool); absent when none is left out. */
  readonly verdictsOmitted?: number;
  /** Present when the decision is `refresh`. */
  readonly image?: {
    readonly definition: ImageDefinitionRef;
    readonly definitionSpec: ImageDefinitionSpec;
    readonly galleryTags: Readonly<Record<string, string>>;
  };
  readonly settings: PoolRunSettings;
  /** Present when the decision is `refresh`: how the donor is captured, and why that way. */
  readonly capture?: {
    readonly mode: CaptureMode;
    readonly reason: string;
    /**
     * The disk de-identified: the donor's own, or a copy (live; kubeadm under drain-and-stop). Absent in a
     * plan recorded before it existed: the donor's under drain-and-stop and Run Command, a copy under live.
     */
    readonly scrubbed?: ScrubbedDisk;
    /** How new nodes join: absent in a plan recorded before it existed, `boot-from-image`. */
    readonly newNodes?: NewNodeBootstrap;
  };
  /** The image the model points at now, if it is one of ours. */
  readonly currentImageId?: string;
  /**
   * The model's image reference fields when planned: the run replaces only this (or the version its canary
   * pinned); an image another tool put there meanwhile is reported, not overwritten.
   */
  readonly modelImage?: Readonly<Record<string, string>>;
  /**
   * A canary recorded on the scale set when planned (its run, or `damaged`): the model may be pinned to a
   * version under test. Only the run that holds the pool tests it; any other run gives a dead one back first.
   */
  readonly canaryRecord?: { readonly run: string; readonly version: string } | 'damaged';
  /**
   * A CAPZ pool (docs/capz.md): its MachinePool, and what CAPZ will do with a new template image. A run
   * promotes through the AzureMachinePool, never the scale set's model.
   */
  readonly capz?: PlannedCapzPool;
  /**
   * Present when the decision is `refresh` and the pinned model would boot something publication will not
   * leave (a boot-from-image pool whose model still holds its bootstrap: its first refresh): the canary
   * boots in a temporary scale set of its own (canary-scale-set.phase.ts, docs/design.md#canary).
   */
  readonly canaryScaleSet?: true;
  /**
   * Present when the decision is `refresh`: the definition's versions as planning listed them (`absent`:
   * no definition yet). The run's leftovers' read takes them instead of listing again: the lease refuses
   * a plan another run made stale (ownership.ts `superseded`), so no run of ours changed them since.
   */
  readonly listedVersions?: readonly ImageVersion[] | 'absent';
}

/** The disk a run de-identifies (a plan recorded before `scrubbed` existed: the live path's copy, else the donor). */
export function scrubbedDiskOf(plan: Pick<PoolPlan, 'capture'>): ScrubbedDisk {
  return plan.capture?.scrubbed ?? (plan.capture?.mode === 'live' ? 'copy' : 'donor');
}

/** How new nodes from the image join (a plan recorded before `newNodes` existed: from the image). */
export function newNodesOf(plan: Pick<PoolPlan, 'capture'>): NewNodeBootstrap {
  return plan.capture?.newNodes ?? 'boot-from-image';
}
