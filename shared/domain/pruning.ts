/**
 * Which image versions of a pool's definition to delete after a refresh (docs/design.md#prune), and why each
 * one is kept or deleted. Pure and deterministic.
 */

import { compareImageVersions, parseImageVersion } from './image-version.js';

/** Gallery image version provisioning states (GalleryRP 2024-03-03: `provisioningState` of
 * https://learn.microsoft.com/rest/api/compute/gallery-image-versions/get). */
export type ImageVersionProvisioningState =
  'Creating' | 'Updating' | 'Failed' | 'Succeeded' | 'Deleting' | 'Migrating';

export interface PrunableImageVersion {
  readonly name: string;
  readonly provisioningState: ImageVersionProvisioningState;
  /** `publishingProfile.excludeFromLatest`: true while a new version awaits promotion, or after a rollback. */
  readonly excludeFromLatest: boolean;
  /** `publishingProfile.publishedDate`, informational only: the order comes from the names. */
  readonly publishedAt?: string;
  /** The verdict its tags carry (version-verdict.ts): rejected, or abandoned before its canary ended. */
  readonly verdict?: 'rejected' | 'abandoned';
}

export interface PruneInput {
  readonly versions: readonly PrunableImageVersion[];
  /** How many Succeeded versions to keep, newest first (settings `history`, 1–50). */
  readonly history: number;
  /** The version the scale set model is pinned to (`imageReference.id` names a version), if any. */
  readonly pinnedVersion?: string;
  /** Versions a caller must not lose, e.g. the one a running refresh is building or rolling back to. */
  readonly protectedVersions?: readonly string[];
  /** The version a rollback without `--to` would choose now (rollback.ts): the one-step undo is kept. */
  readonly rollbackTarget?: string;
}

export type KeepReason =
  /** The scale set model points at it: deleting it would break every scale-out. */
  | 'pinned'
  /** The caller asked to keep it. */
  | 'protected'
  /** The version `rollback` would go back to: deleting it would take the one-step undo away. */
  | 'rollback-target'
  /**
   * Rejected (its canary failed, or a rollback left it) and one of the newest `history` rejected ones: the
   * record that keeps auto mode from building the same donor and patch again.
   */
  | 'rejected-record'
  /** Creating, Updating, Deleting or Migrating: an operation owns it; deleting would race that operation. */
  | 'in-flight'
  /** Succeeded but still excluded from `latest` and newer than every promoted version: about to be promoted. */
  | 'awaiting-promotion'
  /** One of the newest `history` Succeeded versions: a rollback target. */
  | 'within-history'
  /**
   * Failed and newer than every Succeeded version: the refresh that created it deletes and retries it itself
   * (ZRS → LRS fallback); deleting it here would race that retry.
   */
  | 'newest-failed-retry'
  /** The name is not `Major.Minor.Patch`: never delete what we cannot place in the order. */
  | 'unrecognised-name';

export type DeleteReason =
  /** Failed versions cannot be used to create VMs; they only count against the 10,000-versions limit. */
  | 'failed'
  /** Succeeded but older than the newest `history` Succeeded versions (kamino's versions included). */
  | 'beyond-history'
  /** Rejected, and older than the newest `history` rejected versions. */
  | 'rejected-beyond-history'
  /** Its canary never ended (cancelled, or its run died): never verified, never usable. */
  | 'abandoned';

export interface KeepDecision {
  readonly name: string;
  readonly reason: KeepReason;
}

export interface DeleteDecision {
  readonly name: string;
  readonly reason: DeleteReason;
}

export interface PrunePlan {
  /** Newest first; unrecognised names last, in text order. */
  readonly keep: readonly KeepDecision[];
  /** Oldest first, so an interrupted prune has removed the least useful versions. */
  readonly delete: readonly DeleteDecision[];
}

const IN_FLIGHT: ReadonlySet<ImageVersionProvisioningState> = new Set([
  'Creating',
  'Updating',
  'Deleting',
  'Migrating',
]);

const MAX_HISTORY = 50;

/**
 * Decides the fate of every version. Guarantees: the pinned version, protected versions, versions an
 * operation owns, the rollback target and versions with unrecognised names are never deleted; the newest
 * `history` Succeeded versions are kept (kamino's `YYYY.MM.DD` versions sort older than ours and take part
 * like any other), and the newest `history` rejected ones as the record of what not to build again;
 * abandoned versions and other Failed versions are deleted. Throws a RangeError on a bad `history` or
 * duplicate names.
 */
export function selectVersionsToPrune(input: PruneInput): PrunePlan {
  const { versions, history } = input;
  if (!Number.isInteger(history) || history < 1 || history > MAX_HISTORY) {
    throw new RangeError(`pruning image versions: history ${history} is not an integer in 1–${MAX_HISTORY}`);
  }
  const seen = new Set<string>();
  for (const version of versions) {
    if (seen.has(version.name)) {
      throw new RangeError(`pruning image versions: version ${version.name} is listed twice`);
    }
    seen.add(version.name);
  }
  const protectedNames = new Set(input.protectedVersions ?? []);

  const recognised = versions.filter((v) => parseImageVersion(v.name) !== undefined);
  const unrecognised = versions
    .filter((v) => parseImageVersion(v.name) === undefined)
    .map((v) => v.name)
    .sort();
  const newestFirst = [...recognised].sort((a, b) => compareImageVersions(b.name, a.name));

  const newestPromoted = newestFirst.find(
    (v) => v.provisioningState === 'Succeeded' && !v.excludeFromLatest && v.verdict === undefined,
  );
  const newestSucceeded = newestFirst.find((v) => v.provisioningState === 'Succeeded');
  const newestFailed = newestFirst.find((v) => v.provisioningState === 'Failed');

  const keep: KeepDecision[] = [];
  const remove: DeleteDecision[] = [];
  let succeededRank = 0;
  let rejectedRank = 0;
  for (const version of newestFirst) {
    const { name, provisioningState: state, verdict } = version;
    const isSucceeded = state === 'Succeeded';
    const awaitingPromotion =
      isSucceeded &&
      verdict === undefined &&
      version.excludeFromLatest &&
      (newestPromoted === undefined || compareImageVersions(name, newestPromoted.name) > 0);
    // Pinned and protected Succeeded versions still occupy their place in the history; rejected and
    // abandoned ones never do (they are no rollback target).
    let withinHistory = false;
    if (isSucceeded && !awaitingPromotion && verdict === undefined) {
      withinHistory = succeededRank < history;
      succeededRank += 1;
    }
    let rejectedWithinHistory = false;
    if (verdict === 'rejected') {
      rejectedWithinHistory = rejectedRank < history;
      rejectedRank += 1;
    }

    if (name === input.pinnedVersion) keep.push({ name, reason: 'pinned' });
    else if (protectedNames.has(name)) keep.push({ name, reason: 'protected' });
    else if (IN_FLIGHT.has(state)) keep.push({ name, reason: 'in-flight' });
    else if (verdict === 'abandoned') remove.push({ name, reason: 'abandoned' });
    else if (verdict === 'rejected') {
      if (rejectedWithinHistory) keep.push({ name, reason: 'rejected-record' });
      else remove.push({ name, reason: 'rejected-beyond-history' });
    } else if (name === input.rollbackTarget && isSucceeded) keep.push({ name, reason: 'rollback-target' });
    else if (awaitingPromotion) keep.push({ name, reason: 'awaiting-promotion' });
    else if (withinHistory) keep.push({ name, reason: 'within-history' });
    else if (state === 'Failed') {
      const retryPending =
        version === newestFailed &&
        (newestSucceeded === undefined || compareImageVersions(name, newestSucceeded.name) > 0);
      if (retryPending) keep.push({ name, reason: 'newest-failed-retry' });
      else remove.push({ name, reason: 'failed' });
    } else remove.push({ name, reason: 'beyond-history' });
  }
  for (const name of unrecognised) keep.push({ name, reason: 'unrecognised-name' });
  return { keep, delete: remove.reverse() };
}
