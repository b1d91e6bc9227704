/**
 * What CAPZ does with a new template image (docs/capz.md): every machine of the MachinePool whose model
 * is not the latest is replaced, per the AzureMachinePool's RollingUpdate strategy. Pure: the plan's
 * wording of that rollout, and the judgement of how far a rollout got.
 */
import type { MachinePoolMachine, MachinePoolView, RollingUpdateStrategy } from './cluster-api.js';

/** CAPZ's defaults for `spec.strategy.rollingUpdate` when the object leaves them out. */
export const CAPZ_DEFAULT_STRATEGY: RollingUpdateStrategy = {
  maxSurge: 1,
  maxUnavailable: 0,
  deletePolicy: 'Oldest',
};

/** A count or a percentage of `replicas` as a whole number of machines (percentages round as Cluster API does). */
export function scaledCount(value: number | string, replicas: number, roundUp: boolean): number {
  if (typeof value === 'number') return Math.max(0, Math.trunc(value));
  const match = /^(\d+)%$/.exec(value.trim());
  if (match === null) {
    const count = Number(value);
    return Number.isInteger(count) && count >= 0 ? count : 0;
  }
  const scaled = (Number(match[1]) * replicas) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/** The strategy resolved against the pool's replicas: surge rounds up, unavailability down (as a Deployment's). */
export interface ResolvedRollout {
  readonly replicas: number;
  readonly surge: number;
  readonly unavailable: number;
  readonly deletePolicy: RollingUpdateStrategy['deletePolicy'];
}

export function resolveRollout(pool: Pick<MachinePoolView, 'replicas' | 'strategy'>): ResolvedRollout {
  const strategy = pool.strategy ?? CAPZ_DEFAULT_STRATEGY;
  const surge = scaledCount(strategy.maxSurge, pool.replicas, true);
  let unavailable = scaledCount(strategy.maxUnavailable, pool.replicas, false);
  // Both zero would never make progress: like a Deployment, one machine may then be unavailable.
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { replicas: pool.replicas, surge, unavailable, deletePolicy: strategy.deletePolicy };
}

const DELETE_ORDER: Readonly<Record<RollingUpdateStrategy['deletePolicy'], string>> = {
  Oldest: 'oldest first',
  Newest: 'newest first',
  Random: 'in random order',
};

function machines(count: number): string {
  return `${count} machine${count === 1 ? '' : 's'}`;
}

function asWritten(value: number | string): string {
  return typeof value === 'string' && value.endsWith('%') ? ` (${value.replace('%', ' %')})` : '';
}

/**
 * The plan's sentence: "CAPZ will replace 12 machines, 1 unavailable at a time, surge 3 machines (25 %),
 * oldest first". Names the autoscaler when it owns the replicas (the count is today's).
 */
export function describeCapzRollout(pool: MachinePoolView): string {
  const resolved = resolveRollout(pool);
  const strategy = pool.strategy ?? CAPZ_DEFAULT_STRATEGY;
  const surge =
    resolved.surge === 0
      ? 'no surge (old machines go before new ones come)'
      : `surge ${machines(resolved.surge)}${asWritten(strategy.maxSurge)}`;
  const unavailable =
    resolved.unavailable === 0
      ? 'none unavailable (a new machine is Ready before an old one goes)'
      : `${resolved.unavailable} unavailable at a time${asWritten(strategy.maxUnavailable)}`;
  const autoscaled = pool.autoscaled ? ' (today’s count; the cluster-autoscaler owns replicas)' : '';
  return (
    `CAPZ will replace ${machines(resolved.replicas)}${autoscaled} of MachinePool ${pool.namespace}/${pool.name}, ` +
    `${unavailable}, ${surge}, ${DELETE_ORDER[resolved.deletePolicy]}`
  );
}

/** How far CAPZ's rollout of a new image got, from its AzureMachinePoolMachines. */
export interface RolloutProgress {
  /** Machines on the new model and Ready. */
  readonly replaced: number;
  /** Machines still on the old model (not yet replaced, or being deleted). */
  readonly old: number;
  /** Machines on the new model, not Ready yet. */
  readonly joining: readonly { readonly name: string; readonly sinceSeconds: number }[];
  /** Machines on the new model that failed to provision. */
  readonly failed: readonly string[];
}

export function rolloutProgressOf(list: readonly MachinePoolMachine[], nowMs: number): RolloutProgress {
  let replaced = 0;
  let old = 0;
  const joining: { name: string; sinceSeconds: number }[] = [];
  const failed: string[] = [];
  for (const machine of list) {
    if (!machine.latestModelApplied || machine.deleting) {
      old += 1;
    } else if (machine.provisioningState === 'Failed') {
      failed.push(machine.name);
    } else if (machine.ready) {
      replaced += 1;
    } else {
      const since = Math.max(0, Math.round((nowMs - Date.parse(machine.createdAt)) / 1000));
      joining.push({ name: machine.name, sinceSeconds: Number.isFinite(since) ? since : 0 });
    }
  }
  return { replaced, old, joining, failed };
}

/**
 * The rollout's state: `done` once every machine is new and Ready and there are at least as many as
 * the pool wants; `failed` when a new machine failed to provision or is not Ready within `joinDeadlineSeconds`
 * of its creation (CAPZ would wait for ever: the run decides); `rolling` otherwise.
 */
export type RolloutVerdict =
  | { readonly kind: 'done'; readonly progress: RolloutProgress }
  | { readonly kind: 'rolling'; readonly progress: RolloutProgress; readonly detail: string }
  | { readonly kind: 'failed'; readonly progress: RolloutProgress; readonly reason: string };

export function judgeRollout(
  list: readonly MachinePoolMachine[],
  replicas: number,
  joinDeadlineSeconds: number,
  nowMs: number,
): RolloutVerdict {
  const progress = rolloutProgressOf(list, nowMs);
  const [firstFailed] = progress.failed;
  if (firstFailed !== undefined) {
    return {
      kind: 'failed',
      progress,
      reason: `machine ${firstFailed} built from the new image failed to provision`,
    };
  }
  const late = progress.joining.find((machine) => machine.sinceSeconds > joinDeadlineSeconds);
  if (late !== undefined) {
    return {
      kind: 'failed',
      progress,
      reason:
        `machine ${late.name} built from the new image was not Ready ${late.sinceSeconds} s after it was ` +
        `created (limit ${joinDeadlineSeconds} s): its node did not join`,
    };
  }
  if (progress.old === 0 && progress.joining.length === 0 && progress.replaced >= replicas) {
    return { kind: 'done', progress };
  }
  const detail =
    `CAPZ rollout: ${progress.replaced} of ${replicas} machine(s) replaced, ${progress.old} old left` +
    (progress.joining.length === 0 ? '' : `, ${progress.joining.length} joining`);
  return { kind: 'rolling', progress, detail };
}
