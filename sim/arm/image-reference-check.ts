/**
 * Whether the image a scale set model names exists, as ARM checks it when the model is written: a gallery
 * image (definition, or version by id) that is not there — or a version being deleted or failed — answers
 * 404 `GalleryImageNotFound` and the write changes nothing. Shared by the scale set routes (an ARM PUT/PATCH) and the CAPZ stand-in, whose model
 * writes stand for CAPZ's own ARM PUT (azure/services/scalesets/scalesets.go `Reconcile`).
 */
import type { ComputeState, JsonObject } from './compute-state.js';
import { isGalleryImageReference } from './compute-state.js';

export interface ImageReferenceProblem {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly target: string;
}

/** The problem ARM would answer for `reference` in `state`, or undefined when the image is there. */
export function imageReferenceProblem(
  state: ComputeState,
  reference: JsonObject,
): ImageReferenceProblem | undefined {
  const notFound = (image: string): ImageReferenceProblem => ({
    status: 404,
    code: 'GalleryImageNotFound',
    message: `The gallery image ${image} is not available in ${state.defaultLocation} region. Please contact image owner to replicate to this region, or change your requested region.`,
    target: 'imageReference',
  });
  // The simulated region serves no community or direct shared gallery: every such reference is missing.
  for (const field of ['communityGalleryImageId', 'sharedGalleryImageId'] as const) {
    const value = reference[field];
    if (typeof value === 'string' && value !== '') return notFound(value);
  }
  const id = reference.id;
  if (typeof id !== 'string' || !isGalleryImageReference({ id })) return undefined;
  const isVersion = /\/versions\/[^/]+$/i.test(id);
  const definitionId = isVersion ? id.replace(/\/versions\/[^/]+$/i, '') : id;
  if (!state.getImageDefinition(definitionId)) return notFound(id);
  if (!isVersion) return undefined;
  // A version being deleted, or whose creation failed, is no image to build a machine from.
  const provisioning = state.getImageVersion(id)?.provisioningState;
  if (provisioning === undefined || provisioning === 'Deleting' || provisioning === 'Failed')
    return notFound(id);
  return undefined;
}
