/**
 * The builds auto mode must not repeat: every rejected version of the pool's definition names
 * its donor and patch. Read whatever image the model uses now: after a rejected first refresh the model
 * is back on its marketplace image, and the record is still what keeps the same build from happening.
 */
import type { ImageVersion } from '../domain/compute.js';
import { isNotFound } from '../domain/errors.js';
import type { RejectedBuild } from '../domain/version-verdict.js';
import { rejectedBuildsOf } from '../domain/version-verdict.js';
import type { ClusterHandle, PoolConfiguration } from './refresh-dependencies.js';

export async function rejectedBuildsOfPool(
  handle: ClusterHandle,
  configuration: PoolConfiguration,
  known: { readonly versions: readonly ImageVersion[]; readonly pointsAtOurs: boolean } | undefined,
): Promise<RejectedBuild[]> {
  let versions: readonly ImageVersion[];
  if (known?.pointsAtOurs === true) {
    versions = known.versions;
  } else {
    const g = configuration.gallery;
    try {
      versions = await handle.compute.imageVersions.list({
        subscriptionId: g.subscriptionId,
        resourceGroup: g.resourceGroup,
        galleryName: g.galleryName,
        imageName: g.imageDefinitionName,
      });
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }
  return rejectedBuildsOf(versions.map((version) => ({ name: version.ref.versionName, tags: version.tags })));
}
