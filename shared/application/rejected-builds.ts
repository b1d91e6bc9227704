/**
 * What planning reads of the pool's image definition: its versions, listed once, and from them the builds
 * auto mode must not repeat: every rejected version of the pool's definition names its donor and patch.
 * Read whatever image the model uses now: after a rejected first refresh the model is back on its
 * marketplace image, and the record is still what keeps the same build from happening.
 */
import type { ImageVersion } from '../domain/compute.js';
import { isNotFound } from '../domain/errors.js';
import type { RejectedBuild } from '../domain/version-verdict.js';
import { rejectedBuildsOf } from '../domain/version-verdict.js';
import type { ClusterHandle, PoolConfiguration } from './refresh-dependencies.js';

/** The pool's definition's versions, `absent` when the definition (or its gallery) does not exist yet. */
export async function listDefinitionVersions(
  handle: ClusterHandle,
  configuration: PoolConfiguration,
): Promise<ImageVersion[] | 'absent'> {
  const g = configuration.gallery;
  try {
    return await handle.compute.imageVersions.list({
      subscriptionId: g.subscriptionId,
      resourceGroup: g.resourceGroup,
      galleryName: g.galleryName,
      imageName: g.imageDefinitionName,
    });
  } catch (error) {
    if (isNotFound(error)) return 'absent';
    throw error;
  }
}

export function rejectedBuildsOfVersions(versions: readonly ImageVersion[]): RejectedBuild[] {
  return rejectedBuildsOf(versions.map((version) => ({ name: version.ref.versionName, tags: version.tags })));
}
