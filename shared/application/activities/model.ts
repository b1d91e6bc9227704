/** Activities on the scale set's model: its image reference, customData and bootstrap extensions. */
import { z } from 'zod';

import { sameImageReference, withoutCanaryRecord } from '../../domain/canary-record.js';
import type { ProvisioningState, RemovableExtension } from '../../domain/compute.js';
import { NO_OP_CLOUD_CONFIG, removableExtensions } from '../../domain/compute.js';
import { CONCURRENT_CHANGE, isConcurrentChange, messageOf, TransientError } from '../../domain/errors.js';
import { newerVersionInModel } from '../../domain/model-direction.js';
import { definedOnly } from '../../domain/optional.js';
import { sameResourceId } from '../../domain/resource-id.js';
import type { ScaleSetImageUpdate } from '../../ports/compute/scale-sets.js';
import { checkFence } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, Name, ScaleSetRefInput, Tags } from './inputs.js';

export interface ScaleSetImageView {
  readonly imageId?: string;
  readonly provisioningState: ProvisioningState;
  /**
   * When asked (`keepExtensionTypes`): the model's extensions a refreshed model no longer needs, from
   * the same read (the model carries them), so that the extension step needs no listing of its own.
   */
  readonly removableExtensions?: readonly RemovableExtension[];
  /**
   * The model's capacity and tags from the same read: keep-size plans its retirement from them
   * (canary-keep-size.ts) instead of reading the model again a moment later.
   */
  readonly capacity?: number;
  readonly tags?: Readonly<Record<string, string>>;
}

const ScaleSetInput = ClusterInput.extend({ scaleSet: ScaleSetRefInput });

/** What the model update came to: requested (or already there), or refused because another tool moved the image. */
export type ScaleSetImageUpdateResult =
  | { readonly kind: 'requested' }
  | { readonly kind: 'changed-elsewhere'; readonly image: Readonly<Record<string, string>> }
  /** The model already pins a newer version of the definition: left as is (domain/model-direction.ts). */
  | { readonly kind: 'kept-newer'; readonly version: string };

/**
 * Reads the model (or, with `known`, first tries the write from what the run's last write left, reading
 * only on 412), then — unless it already pins a newer version (kept as is), and when its image is still one the run expects (what it read at planning, or the
 * version its canary pinned) — PATCHes the new image and the no-op customData (kept as it is with
 * `keepCustomData`) with If-Match on that read's
 * etag, dropping the canary record from the tags in the same write. An image moved by another tool is
 * reported, never overwritten; a write by anyone between this read and the PATCH (412) is transient: the
 * retry reads again and decides again.
 */
const requestScaleSetImageUpdate = defineActivity(
  'requestScaleSetImageUpdate',
  ScaleSetInput.extend({
    imageId: z.string().min(1),
    expectedImages: z.array(z.record(z.string(), z.string())),
    /** New nodes still run the pool's bootstrap (kubeadm join): the model's customData is kept. */
    keepCustomData: z.boolean().optional(),
    /** Pointing the pool at a version is fenced: a run that lost its lease leaves the model alone. */
    fence: FenceInput,
    /**
     * The model as the run's last write left it (its tags, the etag then, the image it pinned): the
     * update is written from it with If-Match, unread; a model written since (412) is read as without.
     */
    known: z
      .object({
        tags: Tags,
        etag: z.string().min(1),
        /** The model's image reference fields then (`imageId`: only its id, a gallery version's). */
        image: z.record(z.string(), z.string()).optional(),
        imageId: z.string().min(1).optional(),
      })
      .optional(),
  }),
  async (deps, input): Promise<ScaleSetImageUpdateResult> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(
      kube,
      input.fence,
      `pointing scale set ${input.scaleSet.name} at a new image`,
      deps.now(),
    );
    if (input.known !== undefined) {
      const { known } = input;
      const image = known.image ?? (known.imageId === undefined ? undefined : { id: known.imageId });
      const decided =
        image === undefined ? undefined : decideImageUpdate(input, image, known.tags, undefined);
      // Only a write is worth trying unread: whether a model already pointed is settled needs its state.
      if (decided?.kind === 'write') {
        try {
          await compute.scaleSets.requestImageUpdate(input.scaleSet, {
            ...decided.update,
            ifMatch: known.etag,
          });
          return { kind: 'requested' };
        } catch (error) {
          if (!isConcurrentChange(error)) throw error;
        }
      }
    }
    const model = await compute.scaleSets.get(input.scaleSet);
    const decided = decideImageUpdate(
      input,
      model.imageReferenceFields ?? {},
      model.tags,
      model.provisioningState,
    );
    if (decided.kind !== 'write') return decided;
    try {
      await compute.scaleSets.requestImageUpdate(input.scaleSet, {
        ...decided.update,
        ...definedOnly({ ifMatch: model.etag }),
      });
    } catch (error) {
      if (isConcurrentChange(error)) {
        throw new TransientError(CONCURRENT_CHANGE, messageOf(error), { cause: error });
      }
      throw error;
    }
    return { kind: 'requested' };
  },
);

/**
 * What the model update comes to from the model's image, tags and state (undefined: not known): a
 * result without a write, or the write to make.
 */
function decideImageUpdate(
  input: {
    readonly imageId: string;
    readonly expectedImages: readonly Record<string, string>[];
    readonly keepCustomData?: boolean | undefined;
  },
  image: Readonly<Record<string, string>>,
  modelTags: Readonly<Record<string, string>>,
  provisioningState: ProvisioningState | undefined,
): ScaleSetImageUpdateResult | { readonly kind: 'write'; readonly update: ScaleSetImageUpdate } {
  // Never back in time: the run that put a newer version there also did the rest of this phase.
  const newer = newerVersionInModel(image['id'], input.imageId);
  if (newer !== undefined) return { kind: 'kept-newer', version: newer };
  const there = sameResourceId(image['id'], input.imageId);
  const expected = input.expectedImages.some((candidate) => sameImageReference(candidate, image));
  if (!there && !expected) return { kind: 'changed-elsewhere', image };
  const tags = withoutCanaryRecord(modelTags);
  const recordLeft = Object.keys(tags).length !== Object.keys(modelTags).length;
  // A retried request finds its own write done (customData is write-only: the image says it).
  if (there && !recordLeft && provisioningState !== undefined && provisioningState !== 'Failed') {
    return { kind: 'requested' };
  }
  return {
    kind: 'write',
    update: {
      imageId: input.imageId,
      // The prototype already ran its bootstrap: new instances must not run it again, unless they
      // must (a kubeadm node joins with a fresh token from customData, on the warm image).
      ...(input.keepCustomData === true
        ? {}
        : { customDataBase64: Buffer.from(NO_OP_CLOUD_CONFIG, 'utf8').toString('base64') }),
      ...(recordLeft ? { tags } : {}),
    },
  };
}

const readScaleSetImage = defineActivity(
  'readScaleSetImage',
  ScaleSetInput.extend({ keepExtensionTypes: z.array(z.string()).optional() }),
  async (deps, input): Promise<ScaleSetImageView> => {
    const { compute } = await deps.cluster(input.cluster);
    const scaleSet = await compute.scaleSets.get(input.scaleSet);
    const reference = scaleSet.imageReference;
    const keep = input.keepExtensionTypes;
    return {
      ...(reference !== undefined && reference.kind !== 'marketplace' ? { imageId: reference.id } : {}),
      provisioningState: scaleSet.provisioningState ?? 'Succeeded',
      ...(keep === undefined || scaleSet.extensions === undefined
        ? {}
        : { removableExtensions: removableExtensions(scaleSet.extensions, keep) }),
      ...definedOnly({ capacity: scaleSet.capacity }),
      tags: { ...scaleSet.tags },
    };
  },
);

const listRemovableExtensions = defineActivity(
  'listRemovableExtensions',
  ScaleSetInput.extend({ keepExtensionTypes: z.array(z.string()) }),
  async (deps, input): Promise<RemovableExtension[]> => {
    const { compute } = await deps.cluster(input.cluster);
    return removableExtensions(
      await compute.scaleSets.listExtensions(input.scaleSet),
      input.keepExtensionTypes,
    );
  },
);

const requestExtensionDeletion = defineActivity(
  'requestExtensionDeletion',
  ScaleSetInput.extend({ extensionName: Name }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await compute.scaleSets.requestExtensionDeletion(input.scaleSet, input.extensionName);
  },
);

export const MODEL_ACTIVITIES = {
  requestScaleSetImageUpdate,
  readScaleSetImage,
  listRemovableExtensions,
  requestExtensionDeletion,
} as const;
