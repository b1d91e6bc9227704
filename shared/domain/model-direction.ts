/**
 * The rule that keeps the scale set's model from going back in time: a run never points the model at a
 * version older than the one it finds there (an older run resumed late, a slow run overtaken by a newer
 * one); only an explicit rollback may. Pure.
 */
import { compareImageVersions, parseImageVersion } from './image-version.js';
import { parseGalleryImageId } from './resource-id.js';

/**
 * The newer version the model already pins, when moving it to `targetVersionId` would go back; undefined
 * when the move is forward, sideways, or the model points elsewhere (another definition, marketplace, the
 * definition itself — `latest` is always the newest version).
 */
export function newerVersionInModel(
  modelImageId: string | undefined,
  targetVersionId: string,
): string | undefined {
  const model = modelImageId === undefined ? undefined : parseGalleryImageId(modelImageId);
  const target = parseGalleryImageId(targetVersionId);
  if (model?.versionName === undefined || target?.versionName === undefined) return undefined;
  const sameDefinition =
    model.subscriptionId.toLowerCase() === target.subscriptionId.toLowerCase() &&
    model.resourceGroup.toLowerCase() === target.resourceGroup.toLowerCase() &&
    model.galleryName.toLowerCase() === target.galleryName.toLowerCase() &&
    model.imageName.toLowerCase() === target.imageName.toLowerCase();
  if (!sameDefinition) return undefined;
  if (
    parseImageVersion(model.versionName) === undefined ||
    parseImageVersion(target.versionName) === undefined
  ) {
    return undefined;
  }
  return compareImageVersions(model.versionName, target.versionName) > 0 ? model.versionName : undefined;
}
