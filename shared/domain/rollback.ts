/**
 * Rolling a pool back to a retained earlier version: which version, what else changes, or
 * why not. One step of ARM time and no capture: the model is pointed at the target (pinned, or the
 * definition with every newer version hidden from `latest`), and the versions it rolls back from are
 * hidden and rejected, so that neither `latest` nor auto mode brings them back. Pure.
 */
import { compareImageVersions, parseImageVersion } from './image-version.js';
import { versionVerdictOf } from './version-verdict.js';

export interface RollbackVersion {
  readonly name: string;
  readonly id: string;
  readonly provisioningState: string;
  readonly excludeFromLatest: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

export interface RollbackInput {
  readonly versions: readonly RollbackVersion[];
  /** The version new instances get today (the pinned one, or the newest in `latest`); undefined: not ours. */
  readonly currentVersion?: string;
  /** The model names a version (pinned) rather than the definition. */
  readonly pinned: boolean;
  readonly definitionId: string;
  /** The operator's target; default: the newest usable version older than the current one. */
  readonly to?: string;
}

export type RollbackPlan =
  | {
      readonly kind: 'rollback';
      readonly from: string;
      readonly to: string;
      readonly toId: string;
      /** What the model's image reference becomes: the target's id when pinned, else the definition. */
      readonly modelImageId: string;
      /** Versions to hide from `latest` (newer than the target and visible now). */
      readonly hide: readonly string[];
      /** Versions rolled back from, to mark rejected (newer than the target, not rejected yet). */
      readonly reject: readonly string[];
      /** The target itself, when hidden now (a roll back to a version an earlier rollback hid). */
      readonly unhideTarget: boolean;
    }
  | {
      readonly kind: 'refused';
      readonly reason: string;
      /** Refused because new instances get the asked version already: the pool is where it was asked. */
      readonly alreadyAt?: string;
    };

/** A version that can serve new instances: Succeeded and neither rejected nor abandoned. */
export function isUsableRollbackTarget(version: RollbackVersion): boolean {
  return version.provisioningState === 'Succeeded' && versionVerdictOf(version.tags).kind === 'none';
}

function ordered(versions: readonly RollbackVersion[]): RollbackVersion[] {
  return versions
    .filter((version) => parseImageVersion(version.name) !== undefined)
    .sort((a, b) => compareImageVersions(b.name, a.name));
}

/**
 * The version `rollback` without `--to` would choose: the newest usable version older than the current
 * one. Pruning keeps it (it is the one-step undo).
 */
export function defaultRollbackTarget(
  versions: readonly RollbackVersion[],
  currentVersion: string | undefined,
): RollbackVersion | undefined {
  if (currentVersion === undefined || parseImageVersion(currentVersion) === undefined) return undefined;
  return ordered(versions).find(
    (version) => compareImageVersions(version.name, currentVersion) < 0 && isUsableRollbackTarget(version),
  );
}

export function planRollback(input: RollbackInput): RollbackPlan {
  const current = input.currentVersion;
  if (current === undefined) {
    return {
      kind: 'refused',
      reason:
        'the scale set model does not use one of our versions (a marketplace or foreign image): there is nothing to roll back',
    };
  }
  const byName = new Map(input.versions.map((version) => [version.name, version]));
  let target: RollbackVersion | undefined;
  if (input.to === undefined) {
    target = defaultRollbackTarget(input.versions, current);
    if (target === undefined) {
      return {
        kind: 'refused',
        reason: `no retained, usable version is older than the current ${current} (see status; name one with --to)`,
      };
    }
  } else {
    target = byName.get(input.to);
    if (target === undefined) {
      return {
        kind: 'refused',
        reason: `version ${input.to} is gone (pruned or never built); retained: ${ordered(input.versions)
          .map((version) => version.name)
          .join(', ')}`,
      };
    }
    if (target.provisioningState !== 'Succeeded') {
      return {
        kind: 'refused',
        reason: `version ${input.to} is ${target.provisioningState}, not Succeeded: no instance can be built from it`,
      };
    }
    const verdict = versionVerdictOf(target.tags);
    if (verdict.kind !== 'none') {
      return {
        kind: 'refused',
        reason:
          `version ${input.to} was ${verdict.kind} (${verdict.reason}); ` +
          `remove its tag ${verdict.kind === 'rejected' ? 'vmss-prototype.rejected' : 'vmss-prototype.abandoned'} to allow it`,
      };
    }
    if (target.name === current) {
      return {
        kind: 'refused',
        reason: `version ${current} is already the one new instances get`,
        alreadyAt: current,
      };
    }
  }
  const newer = ordered(input.versions).filter(
    (version) => compareImageVersions(version.name, target.name) > 0,
  );
  return {
    kind: 'rollback',
    from: current,
    to: target.name,
    toId: target.id,
    modelImageId: input.pinned ? target.id : input.definitionId,
    hide: newer.filter((version) => !version.excludeFromLatest).map((version) => version.name),
    reject: newer
      .filter(
        (version) =>
          version.provisioningState === 'Succeeded' && versionVerdictOf(version.tags).kind === 'none',
      )
      .map((version) => version.name),
    unhideTarget: target.excludeFromLatest,
  };
}
