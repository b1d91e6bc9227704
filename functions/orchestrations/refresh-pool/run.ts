/**
 * What the phases of a pool refresh share: the orchestration context, the run's input and plan, the
 * donor, and the custom status (the step an operator sees). Names derived from the plan live here too.
 */
import type { OrchestrationContext } from 'durable-functions';

import type { PoolPlan } from '../../../shared/application/pool-plan.js';
import type {
  RefreshPoolInput,
  RefreshStatus,
  RefreshStep,
} from '../../../shared/application/refresh-contracts.js';
import type { BootstrapFlavour } from '../../../shared/domain/bootstrap-flavour.js';
import type { ImageVersion } from '../../../shared/domain/compute.js';
import { fnv1a32Hex } from '../../../shared/domain/gallery-naming.js';
import { definedOnly } from '../../../shared/domain/optional.js';

/** A refresh the plan decided on: the donor and where it lives. */
export interface RefreshRun {
  readonly context: OrchestrationContext;
  readonly input: RefreshPoolInput;
  readonly cluster: string;
  readonly plan: PoolPlan & { readonly image: NonNullable<PoolPlan['image']> };
  readonly donor: {
    readonly node: string;
    readonly instanceId: string;
    /** How its disk is de-identified (the prep script's flavour). */
    readonly flavour: BootstrapFlavour;
    readonly patchedAt?: string;
  };
  /** The run's id (unique per run; ownership.ts): marks the node we hold, tags what the run builds. */
  readonly runId: string;
  /** What every write to the donor is fenced by: the pool lease, which must still name this run. */
  readonly fence: { readonly namespace: string; readonly name: string; readonly runId: string };
  /** The version this run builds, once named. */
  version?: string;
  /** The scale set's instances before the canary added its own (canary.phase.ts). */
  canaryBaseline?: readonly string[];
  /** What the stop record's write left (tags, etag): give-back.ts removes the record from it, no read. */
  stopRecord?: ScaleSetWritten;
  /** The scale set's tags and etag the leftovers' read saw (give-back-leftovers.ts): the stop record starts from them. */
  scaleSetTags?: ScaleSetWritten & { readonly etag: string };
  /**
   * The model as the run's last write left it (the stop record's removal, give-back.ts; the canary's
   * record, canary.phase.ts): the image update starts from it (model.phase.ts).
   */
  modelSeen?: {
    readonly tags: Readonly<Record<string, string>>;
    readonly etag: string;
    readonly image: Readonly<Record<string, string>>;
  };
  /**
   * The definition's versions as the keep-size retirement's plan listed them, after the publication
   * (canary-keep-size.ts): the pruning takes them instead of listing again (model.phase.ts). Nothing of
   * the run changes a version between the two.
   */
  versionsListed?: readonly ImageVersion[];
}

/** The scale set's tags as a write left them, the etag then and, when known, the model's image then. */
export interface ScaleSetWritten {
  readonly tags: Readonly<Record<string, string>>;
  readonly etag?: string;
  readonly image?: Readonly<Record<string, string>>;
}

/** Publishes the run's current step (custom status, ≤ 16 KB, no secrets). */
export function setStatus(
  run: Pick<RefreshRun, 'context' | 'input'> & Partial<Omit<RefreshRun, 'context' | 'input'>>,
  step: RefreshStep,
  detail?: string,
): void {
  const status: RefreshStatus = {
    cluster: run.input.cluster,
    pool: run.input.pool,
    step,
    since: run.context.df.currentUtcDateTime.toISOString(),
    ...(run.donor === undefined ? {} : { node: run.donor.node }),
    ...definedOnly({ version: run.version, runId: run.runId, detail }),
  };
  run.context.df.setCustomStatus(status);
}

/** The orchestration's current time as RFC 3339 (deterministic on replay). */
export function isoNow(run: Pick<RefreshRun, 'context'>): string {
  return run.context.df.currentUtcDateTime.toISOString();
}

/** Snapshot names allow 80 characters of `[A-Za-z0-9_.-]`. */
export function snapshotNameFor(plan: PoolPlan, versionName: string): string {
  const base = `vmssp-${plan.scaleSet.name}-${versionName.replaceAll('.', '-')}`;
  return base.replaceAll(/[^A-Za-z0-9_.-]/g, '-').slice(0, 80);
}

/**
 * Pod names are DNS labels (63 characters, lowercase alphanumerics and `-`). Version names are only
 * unique per pool (to the second), and pools of a cluster share the prep namespace: the scale set's
 * hash keeps two pools captured in the same second from colliding.
 */
export function prepPodNameFor(plan: PoolPlan, versionName: string): string {
  const hash = fnv1a32Hex(plan.scaleSet.id.toLowerCase());
  return `vmssp-prep-${versionName.replaceAll('.', '-')}-${hash}`.toLowerCase().slice(0, 63);
}

/** The pod that pulls the prep image before the cordon: named like the prep pod it prepares for. */
export function pullPodNameFor(plan: PoolPlan, versionName: string): string {
  return prepPodNameFor(plan, versionName).replace(/^vmssp-prep-/, 'vmssp-pull-');
}
