/**
 * Azure Compute Gallery over @azure/arm-compute: the cluster's gallery and the pool's image definition
 * (created when absent, never changed). The definition's versions: arm-image-versions.ts.
 */
import type { GalleryImage } from '@azure/arm-compute';

import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersionRef,
} from '../../domain/compute.js';
import { ignoreNotFound } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { galleryImageResourceId } from '../../domain/resource-id.js';
import type { GalleryPort } from '../../ports/compute/gallery.js';
import type { ArmClients } from './arm-clients.js';
import { withArmErrors } from './errors.js';
import { toImageDefinition } from './to-domain-gallery.js';

export class ArmGallery implements GalleryPort {
  constructor(private readonly clients: ArmClients) {}

  async ensure(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    knownAbsent = false,
  ): Promise<void> {
    const action = `ensuring gallery ${ref.resourceGroup}/${ref.galleryName}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const existing = knownAbsent
      ? undefined
      : await withArmErrors(action, () => client.galleries.get(ref.resourceGroup, ref.galleryName)).catch(
          ignoreNotFound,
        );
    if (existing !== undefined) {
      return;
    }
    await withArmErrors(action, () =>
      client.galleries.beginCreateOrUpdateAndWait(
        ref.resourceGroup,
        ref.galleryName,
        { location, tags: { ...tags } },
        this.clients.pollOptions(),
      ),
    );
  }

  async getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition> {
    const action = `reading image definition ${describeDefinition(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const image = await withArmErrors(action, () =>
      client.galleryImages.get(ref.resourceGroup, ref.galleryName, ref.imageName),
    );
    return toImageDefinition(image, ref);
  }

  async ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    knownAbsent: boolean,
  ): Promise<ImageDefinition> {
    const action = `ensuring image definition ${describeDefinition(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const existing = knownAbsent
      ? undefined
      : await withArmErrors(action, () =>
          client.galleryImages.get(ref.resourceGroup, ref.galleryName, ref.imageName),
        ).catch(ignoreNotFound);
    if (existing !== undefined) {
      // OS type, state, generation and identifier are immutable: a PUT over them fails, and a PUT of
      // the mutable rest would silently rewrite someone's definition. The caller compares the spec.
      return toImageDefinition(existing, ref);
    }
    const body: GalleryImage = {
      location,
      tags: { ...spec.tags },
      osType: spec.osType,
      osState: spec.osState,
      hyperVGeneration: spec.hyperVGeneration,
      architecture: spec.architecture,
      identifier: { ...spec.identifier },
      ...definedOnly({ description: spec.description }),
      ...(spec.securityType === undefined
        ? {}
        : { features: [{ name: 'SecurityType', value: spec.securityType }] }),
    };
    // Asked for, not waited for: the run's next use of the definition is its version's request, minutes
    // later, which ARM refuses if the definition is not there (a creation that failed fails it).
    await withArmErrors(action, () =>
      client.galleryImages.beginCreateOrUpdate(ref.resourceGroup, ref.galleryName, ref.imageName, body),
    );
    return {
      id: galleryImageResourceId(ref),
      ref,
      location,
      provisioningState: 'Creating',
      spec: { ...spec, identifier: { ...spec.identifier }, tags: { ...spec.tags } },
    };
  }
}

export function describeDefinition(ref: ImageDefinitionRef): string {
  return `${ref.resourceGroup}/${ref.galleryName}/${ref.imageName}`;
}

export function describeVersion(ref: ImageVersionRef): string {
  return `${describeDefinition(ref)}/${ref.versionName}`;
}
