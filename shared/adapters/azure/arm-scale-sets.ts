/**
 * Scale sets over @azure/arm-compute: reading the model (with the image facts the model does not carry),
 * the image-reference PATCH, and the model's extensions. Remembers each scale set's orchestration mode
 * (fixed at creation) for the instance calls.
 */
import type { ImageReference as ArmImageReference, VirtualMachineScaleSet } from '@azure/arm-compute';

import { carriesOwnerTags, type ScaleSetModelDocument } from '../../domain/canary-scale-set.js';
import type { ScaleSetExtension } from '../../domain/compute.js';
import {
  CONCURRENT_CHANGE,
  ignoreNotFound,
  isConcurrentChange,
  isNotFound,
  isTransient,
  TerminalError,
  TransientError,
} from '../../domain/errors.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import { describeScaleSet, parseGalleryImageId, scaleSetKey } from '../../domain/resource-id.js';
import type { OrchestrationMode, ScaleSet } from '../../domain/scale-set.js';
import type {
  ScaleSetChange,
  ScaleSetCreated,
  ScaleSetCreation,
  ScaleSetImageUpdate,
  ScaleSetsPort,
  ScaleSetWritten,
} from '../../ports/compute/scale-sets.js';
import type { ArmClients } from './arm-clients.js';
import { throwIfDeleting, toRefreshError, withArmErrors } from './errors.js';
import {
  type ImageFacts,
  imageFactsFromGalleryImage,
  imageFactsFromMarketplaceImage,
  toExtension,
  toImageReference,
  toScaleSet,
} from './to-domain.js';

/** What is explicitly nulled in the image reference: marketplace fields stay otherwise (PATCH merges). */
const MARKETPLACE_FIELDS_NULLED = { publisher: null, offer: null, sku: null, version: null } as const;

export class ArmScaleSets implements ScaleSetsPort {
  /** Orchestration mode is fixed at creation, so it is safe to remember per scale set. */
  readonly #modes = new Map<string, OrchestrationMode>();

  constructor(private readonly clients: ArmClients) {}

  async get(ref: ScaleSetRef, options?: { readonly imageFacts?: boolean }): Promise<ScaleSet> {
    const action = `reading scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const model = await withArmErrors(action, () =>
      client.virtualMachineScaleSets.get(ref.resourceGroup, ref.name),
    );
    const facts = options?.imageFacts === true ? await this.#imageFacts(model, ref, action) : {};
    const scaleSet = toScaleSet(model, ref, facts);
    this.#modes.set(scaleSetKey(ref), scaleSet.orchestrationMode);
    return scaleSet;
  }

  async list(subscriptionId: string, resourceGroup: string): Promise<ScaleSet[]> {
    const action = `listing the scale sets of resource group ${resourceGroup}`;
    const client = this.clients.client(subscriptionId, action);
    return withArmErrors(action, async () => {
      const scaleSets: ScaleSet[] = [];
      for await (const model of client.virtualMachineScaleSets.list(resourceGroup)) {
        const ref = { subscriptionId, resourceGroup, name: model.name ?? '' };
        const scaleSet = toScaleSet(model, ref);
        this.#modes.set(scaleSetKey(ref), scaleSet.orchestrationMode);
        scaleSets.push(scaleSet);
      }
      return scaleSets;
    }).catch((error: unknown) => {
      if (isNotFound(error)) return [];
      throw error;
    });
  }

  async readModel(ref: ScaleSetRef): Promise<ScaleSetModelDocument> {
    const action = `reading the model of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const model = await withArmErrors(action, () =>
      client.virtualMachineScaleSets.get(ref.resourceGroup, ref.name),
    );
    // The domain document is the SDK's flattened form, taken as it is (canary-scale-set.ts).
    return model as unknown as ScaleSetModelDocument;
  }

  /** Uniform or Flexible: from the ref when it is a whole ScaleSet, from memory, or read once. */
  async orchestrationMode(ref: ScaleSetRef, action: string): Promise<OrchestrationMode> {
    if (isScaleSet(ref)) {
      return ref.orchestrationMode;
    }
    const known = this.#modes.get(scaleSetKey(ref));
    if (known !== undefined) {
      return known;
    }
    const client = this.clients.client(ref.subscriptionId, action);
    const model = await withArmErrors(action, () =>
      client.virtualMachineScaleSets.get(ref.resourceGroup, ref.name),
    );
    const mode = toScaleSet(model, ref).orchestrationMode;
    this.#modes.set(scaleSetKey(ref), mode);
    return mode;
  }

  async requestImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void> {
    const action = `requesting image update of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    // PATCH merges objects, so a marketplace publisher/offer/sku/version left in the model would sit
    // next to the new id and ARM would refuse the ambiguous reference: null them explicitly. The SDK's
    // serializer copies these fields as given, and JSON keeps nulls (tested on the wire).
    const imageReference = {
      id: update.imageId,
      ...MARKETPLACE_FIELDS_NULLED,
    } as unknown as ArmImageReference;
    await withArmErrors(action, () =>
      client.virtualMachineScaleSets.beginUpdate(
        ref.resourceGroup,
        ref.name,
        {
          ...(update.tags === undefined ? {} : { tags: { ...update.tags } }),
          virtualMachineProfile: {
            storageProfile: { imageReference },
            // customData is write-only and replaced as a whole; it only applies to new or reimaged instances.
            ...(update.customDataBase64 === undefined
              ? {}
              : { osProfile: { customData: update.customDataBase64 } }),
          },
        },
        // With the etag read before, a change by another tool in between is refused (412), not overwritten.
        update.ifMatch === undefined ? {} : { ifMatch: update.ifMatch },
      ),
    );
  }

  /** PATCH of image reference fields, tags and capacity, conditional on the etag when given. */
  async requestChange(ref: ScaleSetRef, change: ScaleSetChange): Promise<ScaleSetWritten> {
    const action = `requesting a change of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    // Nulls remove fields under PATCH's merge; the serializer keeps them (tested on the wire).
    const imageReference = change.imageReference as unknown as ArmImageReference | undefined;
    // ARM answers the PATCH with the new model (200, or 201/202 while it applies): its etag is the one a
    // next conditional write needs, without reading the model again.
    let etag: string | undefined;
    const onResponse = (response: { readonly status: number; readonly parsedBody?: unknown }): void => {
      if (response.status < 200 || response.status > 299) return;
      const body = response.parsedBody as { readonly etag?: unknown } | undefined;
      if (typeof body?.etag === 'string' && body.etag !== '') etag = body.etag;
    };
    await withArmErrors(action, () =>
      client.virtualMachineScaleSets.beginUpdate(
        ref.resourceGroup,
        ref.name,
        {
          ...(change.tags === undefined ? {} : { tags: { ...change.tags } }),
          ...(change.capacity === undefined ? {} : { sku: { capacity: change.capacity } }),
          ...(imageReference === undefined
            ? {}
            : { virtualMachineProfile: { storageProfile: { imageReference } } }),
        },
        { onResponse, ...(change.ifMatch === undefined ? {} : { ifMatch: change.ifMatch }) },
      ),
    );
    return etag === undefined ? {} : { etag };
  }

  async listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]> {
    const action = `listing extensions of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    return withArmErrors(action, async () => {
      const extensions: ScaleSetExtension[] = [];
      for await (const extension of client.virtualMachineScaleSetExtensions.list(
        ref.resourceGroup,
        ref.name,
      )) {
        extensions.push(toExtension(extension));
      }
      return extensions;
    });
  }

  async requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void> {
    const action = `requesting deletion of extension ${extensionName} of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    await withArmErrors(action, () =>
      client.virtualMachineScaleSetExtensions.beginDelete(ref.resourceGroup, ref.name, extensionName),
    ).catch(ignoreNotFound);
  }

  /**
   * PUT of a new scale set with `If-None-Match: *`, read only when ARM refuses it (412: the name exists):
   * a scale set of that name with all the owner tags is an earlier attempt's (found, whatever its state
   * but Deleting); without them the name is someone else's. ARM documents the header on Virtual Machine
   * Scale Sets – Create Or Update ("Set to '*' to allow a new record set to be created, but to prevent
   * updating an existing record set"; learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/
   * create-or-update), so an existing scale set is never overwritten.
   */
  async requestCreation(ref: ScaleSetRef, creation: ScaleSetCreation): Promise<ScaleSetCreated> {
    const action = `requesting creation of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    // The domain document is the model as ARM returns it (the SDK's flattened form): sent as it is.
    const model = creation.model as unknown as VirtualMachineScaleSet;
    try {
      await withArmErrors(action, () =>
        client.virtualMachineScaleSets.beginCreateOrUpdate(ref.resourceGroup, ref.name, model, {
          ifNoneMatch: '*',
        }),
      );
      return 'requested';
    } catch (error) {
      if (!isConcurrentChange(error)) throw error;
    }
    const existing = await withArmErrors(action, () =>
      client.virtualMachineScaleSets.get(ref.resourceGroup, ref.name),
    ).catch(ignoreNotFound);
    if (existing === undefined) {
      // Refused because it existed, gone by the read: deleted meanwhile; the retry creates it.
      throw new TransientError(
        CONCURRENT_CHANGE,
        `${action}: a scale set of this name existed at the request and is gone now`,
      );
    }
    throwIfDeleting(existing.provisioningState, action, 'scale set');
    if (!carriesOwnerTags(existing.tags, creation.ownerTags)) {
      throw new TerminalError(
        'ScaleSetNameTaken',
        `${action}: a scale set of this name already exists and is not this run's`,
      );
    }
    return 'found';
  }

  async requestDeletion(ref: ScaleSetRef): Promise<void> {
    const action = `requesting deletion of scale set ${describeScaleSet(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    await withArmErrors(action, () =>
      client.virtualMachineScaleSets.beginDelete(ref.resourceGroup, ref.name),
    ).catch(ignoreNotFound);
    this.#modes.delete(scaleSetKey(ref));
  }

  /**
   * Hyper-V generation and architecture live on the image, not the scale set model: read them from the
   * gallery image definition or the marketplace image. Best effort: an image we cannot read (another
   * tenant's gallery, a retired marketplace version) leaves them unknown; throttling still propagates.
   */
  async #imageFacts(model: VirtualMachineScaleSet, ref: ScaleSetRef, action: string): Promise<ImageFacts> {
    const reference = toImageReference(model.virtualMachineProfile?.storageProfile?.imageReference);
    try {
      if (reference?.kind === 'gallery') {
        const image = parseGalleryImageId(reference.id);
        if (image === undefined || !this.clients.allows(image.subscriptionId)) {
          return {};
        }
        const client = this.clients.client(image.subscriptionId, action);
        const definition = await client.galleryImages.get(
          image.resourceGroup,
          image.galleryName,
          image.imageName,
        );
        return imageFactsFromGalleryImage(definition);
      }
      // Marketplace image metadata needs its own read permission and one more request: only ask when
      // the model does not already imply the generation (Trusted Launch and confidential VMs are gen 2).
      if (reference?.kind === 'marketplace' && toScaleSet(model, ref).hyperVGeneration === undefined) {
        const client = this.clients.client(ref.subscriptionId, action);
        const { publisher, offer, sku } = reference;
        let version = reference.version;
        if (version.toLowerCase() === 'latest') {
          // Generation and architecture are properties of the SKU; any published version tells them.
          const [newest] = await client.virtualMachineImages.list(model.location, publisher, offer, sku, {
            top: 1,
            orderby: 'name desc',
          });
          if (newest === undefined) {
            return {};
          }
          version = newest.name;
        }
        const image = await client.virtualMachineImages.get(model.location, publisher, offer, sku, version);
        return imageFactsFromMarketplaceImage(image);
      }
      return {};
    } catch (error: unknown) {
      const mapped = toRefreshError(error, `${action}: reading its image`);
      if (isTransient(mapped)) {
        throw mapped;
      }
      return {};
    }
  }
}

function isScaleSet(ref: ScaleSetRef): ref is ScaleSet {
  const mode = (ref as Partial<ScaleSet>).orchestrationMode;
  return mode === 'Uniform' || mode === 'Flexible';
}
