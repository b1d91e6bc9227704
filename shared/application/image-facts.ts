/** Small readers shared by planning, status and activities: which version is current, who built it. */
import type { ImageVersion } from '../domain/compute.js';
import { compareImageVersions, donorPatchedAtOf, parseImageVersionTags } from '../domain/image-version.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { parseProviderId, sameScaleSet } from '../domain/resource-id.js';

/** The newest version built by us that the model would use: Succeeded and not excluded from latest. */
export function newestUsableVersion(versions: readonly ImageVersion[]): ImageVersion | undefined {
  return versions
    .filter((version) => version.provisioningState === 'Succeeded' && !version.excludeFromLatest)
    .sort((a, b) => compareImageVersions(b.ref.versionName, a.ref.versionName))[0];
}

/**
 * Provenance of a version from its tags, when we built it: `patchedAt` is the donor's recorded patch time
 * (freshness; absent when the donor had none), `patchRuleAfter` the time a donor must be patched after
 * (the patched-at tag, which is the capture time when the donor had none: PATCHED_AT_BASIS_TAG).
 */
export function provenanceOf(
  version: ImageVersion,
): { sourceNode: string; patchedAt?: string; patchRuleAfter: string } | undefined {
  const parsed = parseImageVersionTags(version.tags);
  if (parsed.kind !== 'ours') return undefined;
  const patchedAt = donorPatchedAtOf(version.tags);
  return {
    sourceNode: parsed.provenance.sourceNode,
    ...(patchedAt === undefined ? {} : { patchedAt }),
    patchRuleAfter: parsed.provenance.patchedAt,
  };
}

/** Instance id (Uniform) or VM name (Flexible) of a node, from its providerID, if it belongs to the scale set. */
export function instanceOfNode(providerId: string | undefined, scaleSet: ScaleSetRef): string | undefined {
  const parsed = parseProviderId(providerId);
  if (!parsed.ok) return undefined;
  const id = parsed.providerId;
  if (id.kind === 'scale-set-instance') {
    return sameScaleSet(id.scaleSet, scaleSet) ? id.instanceId : undefined;
  }
  return id.virtualMachine.name;
}
