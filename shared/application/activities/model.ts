/** Activities on the scale set's model: its image reference, customData and bootstrap extensions. */
import { z } from 'zod';

import type { ProvisioningState } from '../../domain/compute.js';
import { NO_OP_CLOUD_CONFIG } from '../../domain/compute.js';
import { defineActivity } from './activity.js';
import { ClusterInput, Name, ScaleSetRefInput } from './inputs.js';

export interface ScaleSetImageView {
  readonly imageId?: string;
  readonly provisioningState: ProvisioningState;
}

/** An extension the prototype image makes redundant (bootstrap), and whether its deletion is under way. */
export interface RemovableExtension {
  readonly name: string;
  readonly deleting: boolean;
}

const ScaleSetInput = ClusterInput.extend({ scaleSet: ScaleSetRefInput });

const requestScaleSetImageUpdate = defineActivity(
  'requestScaleSetImageUpdate',
  ScaleSetInput.extend({ imageId: z.string().min(1) }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await compute.requestScaleSetImageUpdate(input.scaleSet, {
      imageId: input.imageId,
      // The prototype already ran its bootstrap: new instances must not run it again.
      customDataBase64: Buffer.from(NO_OP_CLOUD_CONFIG, 'utf8').toString('base64'),
    });
  },
);

const readScaleSetImage = defineActivity(
  'readScaleSetImage',
  ScaleSetInput,
  async (deps, input): Promise<ScaleSetImageView> => {
    const { compute } = await deps.cluster(input.cluster);
    const scaleSet = await compute.getScaleSet(input.scaleSet);
    const reference = scaleSet.imageReference;
    return {
      ...(reference !== undefined && reference.kind !== 'marketplace' ? { imageId: reference.id } : {}),
      provisioningState: scaleSet.provisioningState ?? 'Succeeded',
    };
  },
);

const listRemovableExtensions = defineActivity(
  'listRemovableExtensions',
  ScaleSetInput.extend({ keepExtensionTypes: z.array(z.string()) }),
  async (deps, input): Promise<RemovableExtension[]> => {
    const { compute } = await deps.cluster(input.cluster);
    const keep = new Set(input.keepExtensionTypes.map((type) => type.toLowerCase()));
    const extensions = await compute.listExtensions(input.scaleSet);
    // Extensions already being deleted are listed too: the caller waits until none is left.
    return extensions
      .filter((extension) => {
        const type = extension.type.toLowerCase();
        const qualified = `${extension.publisher}/${extension.type}`.toLowerCase();
        return !keep.has(type) && !keep.has(qualified);
      })
      .map((extension) => ({ name: extension.name, deleting: extension.provisioningState === 'Deleting' }));
  },
);

const requestExtensionDeletion = defineActivity(
  'requestExtensionDeletion',
  ScaleSetInput.extend({ extensionName: Name }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await compute.requestExtensionDeletion(input.scaleSet, input.extensionName);
  },
);

export const MODEL_ACTIVITIES = {
  requestScaleSetImageUpdate,
  readScaleSetImage,
  listRemovableExtensions,
  requestExtensionDeletion,
} as const;
