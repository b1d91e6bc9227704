/**
 * The verdict a version carries in its tags once it failed or was given up: `rejected` (its canary
 * failed, or an operator rolled back from it) and `abandoned` (its canary never ended: cancelled, or its
 * run died). A rejected version stays hidden from `latest`, is never a rollback target, and auto mode does
 * not build again from the same donor and patch; an abandoned one is simply deleted by pruning.
 * Azure tag names may not contain `/`: the issue's `vmss-prototype.io/rejected` is written
 * `vmss-prototype.rejected`, like the version's provenance tags.
 */
import { parseImageVersionTags, tagReader } from './image-version.js';
import { definedOnly } from './optional.js';
import { parseRfc3339 } from './rfc3339.js';

export const VERSION_VERDICT_TAG_KEYS = {
  /** The reason the version was rejected (≤ 256 characters). */
  rejected: 'vmss-prototype.rejected',
  rejectedAt: 'vmss-prototype.rejected-at',
  /** Why the version was given up (never verified either way). */
  abandoned: 'vmss-prototype.abandoned',
} as const;

export type VersionVerdict =
  | { readonly kind: 'none' }
  | { readonly kind: 'rejected'; readonly reason: string; readonly at?: string }
  | { readonly kind: 'abandoned'; readonly reason: string };

export function versionVerdictOf(tags: Readonly<Record<string, string>> | undefined): VersionVerdict {
  const read = tagReader(tags);
  const rejected = read(VERSION_VERDICT_TAG_KEYS.rejected);
  if (rejected !== undefined) {
    const at = read(VERSION_VERDICT_TAG_KEYS.rejectedAt);
    return { kind: 'rejected', reason: rejected, ...definedOnly({ at }) };
  }
  const abandoned = read(VERSION_VERDICT_TAG_KEYS.abandoned);
  if (abandoned !== undefined) return { kind: 'abandoned', reason: abandoned };
  return { kind: 'none' };
}

/** A tag value: one line, at most 256 characters (Azure's limit), never empty. */
export function verdictTagValue(reason: string): string {
  const oneLine = reason.replaceAll(/\s+/g, ' ').trim() || 'no reason given';
  return oneLine.length > 256 ? `${oneLine.slice(0, 255)}…` : oneLine;
}

/** The tags that reject a version (merged into its own tags). */
export function rejectionTags(reason: string, at: Date): Record<string, string> {
  return {
    [VERSION_VERDICT_TAG_KEYS.rejected]: verdictTagValue(reason),
    [VERSION_VERDICT_TAG_KEYS.rejectedAt]: at.toISOString(),
  };
}

export function abandonmentTags(reason: string): Record<string, string> {
  return { [VERSION_VERDICT_TAG_KEYS.abandoned]: verdictTagValue(reason) };
}

/** A build auto mode must not repeat: this donor, patched at this time, produced a rejected version. */
export interface RejectedBuild {
  readonly version: string;
  readonly sourceNode: string;
  /** The donor's last-patch time recorded on the version (epoch ms). */
  readonly patchedAtMs: number;
  readonly reason: string;
}

/**
 * The rejected builds among a definition's versions, read from their tags (ours only: a version without
 * provenance cannot say which donor and patch to avoid).
 */
export function rejectedBuildsOf(
  versions: readonly { readonly name: string; readonly tags: Readonly<Record<string, string>> }[],
): RejectedBuild[] {
  const builds: RejectedBuild[] = [];
  for (const version of versions) {
    const verdict = versionVerdictOf(version.tags);
    if (verdict.kind !== 'rejected') continue;
    const provenance = parseImageVersionTags(version.tags);
    if (provenance.kind !== 'ours') continue;
    const patchedAtMs = parseRfc3339(provenance.provenance.patchedAt);
    if (patchedAtMs === undefined) continue;
    builds.push({
      version: version.name,
      sourceNode: provenance.provenance.sourceNode,
      patchedAtMs,
      reason: verdict.reason,
    });
  }
  return builds;
}
