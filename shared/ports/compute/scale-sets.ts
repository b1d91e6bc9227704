/** The port to a scale set's model and its extensions (contract: index.ts). */
import type { ScaleSetModelDocument } from '../../domain/canary-scale-set.js';
import type { ScaleSetExtension } from '../../domain/compute.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import type { ScaleSet } from '../../domain/scale-set.js';

/** The model change that makes new instances boot from the prototype image. */
export interface ScaleSetImageUpdate {
  /** Image definition id (new instances take `latest`) or image version id (pinned). */
  readonly imageId: string;
  /**
   * Base64 of the new customData (write-only in ARM: it is never read back); absent: the model's
   * customData is left as it is (a pool whose new nodes still run their bootstrap, kubeadm).
   */
  readonly customDataBase64?: string;
  /** The whole tag set to write with it (ARM's PATCH replaces tags as a whole); absent: tags untouched. */
  readonly tags?: Readonly<Record<string, string>>;
  /** Only if the scale set still has this etag (else ConcurrentChange, nothing written). */
  readonly ifMatch?: string;
}

/** A PATCH of the scale set model; what is left out is not touched. */
export interface ScaleSetChange {
  /** Image reference fields; `null` removes one (e.g. `id` when going back to a marketplace image). */
  readonly imageReference?: Readonly<Record<string, string | null>>;
  /** The whole tag set (ARM's PATCH replaces tags as a whole). */
  readonly tags?: Readonly<Record<string, string>>;
  /** `sku.capacity`: a scale-out adds instances built from the model. */
  readonly capacity?: number;
  /** Only if the scale set still has this etag (else ConcurrentChange, nothing written). */
  readonly ifMatch?: string;
}

/** What a model change left: the scale set's new etag, when ARM's answer carried one. */
export interface ScaleSetWritten {
  readonly etag?: string;
}

/** A scale set made by PUT (the temporary canary scale set, issue #48). */
export interface ScaleSetCreation {
  /** The whole model to PUT, its tags included. */
  readonly model: ScaleSetModelDocument;
  /** The tags that make a scale set of that name ours: one carrying all of them stands for the request. */
  readonly ownerTags: Readonly<Record<string, string>>;
}

/** `requested`: ARM accepted the PUT; `found`: ours already existed (an earlier attempt's). */
export type ScaleSetCreated = 'requested' | 'found';

export interface ScaleSetsPort {
  /**
   * The scale set's model. Its image's Hyper-V generation and architecture live on the image, one more
   * read (the gallery image definition or a marketplace image): made only with `imageFacts` (planning
   * needs them to create a matching definition; every other step reads the model alone).
   */
  get(ref: ScaleSetRef, options?: { readonly imageFacts?: boolean }): Promise<ScaleSet>;
  /**
   * The model as ARM returns it (the SDK's flattened document), for a scale set built from it (the canary
   * scale set): customData, the admin password and extensions' protected settings are never in it.
   * NotFoundError when the scale set is missing.
   */
  readModel(ref: ScaleSetRef): Promise<ScaleSetModelDocument>;
  /**
   * The scale sets of a resource group (models without image facts): how the reaper finds a canary scale
   * set a dead run left, by its tags. An absent resource group lists none.
   */
  list(subscriptionId: string, resourceGroup: string): Promise<ScaleSet[]>;
  /** PATCH of the model: image reference (marketplace fields nulled) and, when given, customData. */
  requestImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void>;
  /**
   * PATCH of the model (image reference fields, tags, capacity), conditional on the etag when given;
   * returns the new etag when the answer carried one (a later write can then skip reading the model).
   */
  requestChange(ref: ScaleSetRef, change: ScaleSetChange): Promise<ScaleSetWritten>;
  listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]>;
  requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void>;
  /**
   * PUT of a new scale set, idempotent by name: ours (all the owner tags) already there is `found`; one
   * being deleted is transient; one that is not ours is terminal (`ScaleSetNameTaken`). Not waited for.
   */
  requestCreation(ref: ScaleSetRef, creation: ScaleSetCreation): Promise<ScaleSetCreated>;
  /** DELETE of the scale set and its instances; a missing one is done. Not waited for. */
  requestDeletion(ref: ScaleSetRef): Promise<void>;
}
