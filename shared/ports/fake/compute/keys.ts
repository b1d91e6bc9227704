/** Keys, names and small rules the fake compute ports share (ARM compares ids and names without case). */
import type { GalleryRef, ImageDefinitionRef, ImageVersionRef } from '../../../domain/compute.js';
import { TransientError } from '../../../domain/errors.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import { scaleSetKey } from '../../../domain/resource-id.js';
import type { ImageReference } from '../../../domain/scale-set.js';

/** A deletion in progress refuses a new resource of the same name (ARM answers 409 until it is gone). */
export function refuseIfDeleting(state: string, action: string, what: string): void {
  if (state === 'Deleting') {
    throw new TransientError(
      'ResourceDeleting',
      `${action}: the previous ${what} of this name is still being deleted`,
      {
        retryAfterMs: 15_000,
      },
    );
  }
}

/** The image reference and its raw fields, from the interpreted view. */
export function fieldsOfReference(reference: ImageReference | undefined): {
  imageReference?: ImageReference;
  imageReferenceFields?: Readonly<Record<string, string>>;
} {
  if (reference === undefined) return {};
  if (reference.kind === 'marketplace') {
    const { publisher, offer, sku, version } = reference;
    return { imageReference: reference, imageReferenceFields: { publisher, offer, sku, version } };
  }
  return { imageReference: reference, imageReferenceFields: { id: reference.id } };
}

export function referenceOfFields(fields: Readonly<Record<string, string>>): ImageReference | undefined {
  const { id, publisher, offer, sku, version } = fields;
  if (id !== undefined) return { kind: 'gallery', id };
  if (publisher !== undefined && offer !== undefined && sku !== undefined) {
    return { kind: 'marketplace', publisher, offer, sku, version: version ?? 'latest' };
  }
  return undefined;
}

/** Version names compared numerically part by part (the gallery's order). */
export function compareNames(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let index = 0; index < 3; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

export function instanceKey(scaleSet: ScaleSetRef, instanceId: string): string {
  return `${scaleSetKey(scaleSet)}/${instanceId.toLowerCase()}`;
}

export function snapshotKey(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${subscriptionId}/${resourceGroup}/${name}`.toLowerCase();
}

/** The key of a disk or snapshot from its resource id. */
export function diskKeyOfId(id: string): string {
  const match =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/(?:disks|snapshots)\/([^/]+)$/i.exec(
      id,
    );
  return match === null ? id.toLowerCase() : snapshotKey(match[1] ?? '', match[2] ?? '', match[3] ?? '');
}

export const snapshotKeyOfId = diskKeyOfId;

export function lastSegment(id: string): string {
  return id.split('/').at(-1) ?? id;
}

export function galleryKey(ref: GalleryRef): string {
  return `${ref.subscriptionId}/${ref.resourceGroup}/${ref.galleryName}`.toLowerCase();
}

export function definitionKey(ref: ImageDefinitionRef): string {
  return `${galleryKey(ref)}/${ref.imageName.toLowerCase()}`;
}

export function versionKey(ref: ImageVersionRef): string {
  return `${definitionKey(ref)}/${ref.versionName.toLowerCase()}`;
}

export function normaliseRegion(region: string): string {
  return region.replaceAll(' ', '').toLowerCase();
}
