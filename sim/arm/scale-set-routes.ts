/**
 * ARM routes of scale sets: list, get, PUT (create or update) and PATCH of the model with the checks ARM
 * applies (immutable orchestration mode, marketplace vs gallery image references, write-only
 * customData), DELETE, and the scale-set extensions (list, get, delete).
 */
import { z } from 'zod';

import {
  HttpError,
  invalidParameter,
  objectPath,
  parseBody,
  propertyChange,
  readOnlyOf,
  type Reply,
  type RequestContext,
  Tags,
  withoutReadOnly,
} from './arm-http.js';
import { renderScaleSet, scaleSetExtensions } from './arm-resources.js';
import { type AddRoute, ArmRoutes, VMSS } from './arm-routes.js';
import { deepCopy, isGalleryImageReference, isObject, type JsonObject, textOr } from './compute-state.js';
import { imageReferenceProblem } from './image-reference-check.js';
import { mergePatch } from './merge-patch.js';
import { linkedChecksOfCreation } from './scale-set-links.js';

const ScaleSetPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  sku: z
    .looseObject({
      name: z.string().optional(),
      tier: z.string().optional(),
      capacity: z.number().int().min(0).optional(),
    })
    .optional(),
  // ARM reads `"zones": null` like an absent zones list (what SDKs that serialize nulls send).
  zones: z.array(z.string()).nullish(),
  // Optional: `az vmss scale` and cluster-autoscaler PUT only location and sku (see putScaleSet).
  properties: z.looseObject({}).nullish(),
});

const ScaleSetPatch = z.looseObject({
  tags: Tags.optional(),
  sku: z
    .looseObject({ name: z.string().optional(), capacity: z.number().int().min(0).optional() })
    .optional(),
  properties: z.looseObject({}).optional(),
});

const MAX_CUSTOM_DATA = 87380;

export class ScaleSetRoutes extends ArmRoutes {
  register(add: AddRoute): void {
    const vmss = 'virtualMachineScaleSets';
    add('GET', vmss, 'compute', `${VMSS}/read`, vmss, (c) => this.listScaleSets(c));
    add('GET', `${vmss}/:vmss`, 'compute', `${VMSS}/read`, vmss, (c) => this.getScaleSet(c));
    add('PUT', `${vmss}/:vmss`, 'compute', `${VMSS}/write`, vmss, (c) => this.putScaleSet(c), { lro: true });
    add('PATCH', `${vmss}/:vmss`, 'compute', `${VMSS}/write`, vmss, (c) => this.patchScaleSet(c), {
      lro: true,
    });
    // Authorized like every route before the handler runs: without `…/virtualMachineScaleSets/delete`
    // the caller gets 403 AuthorizationFailed, as from ARM, whatever the scale set's state.
    add('DELETE', `${vmss}/:vmss`, 'compute', `${VMSS}/delete`, vmss, (c) => this.deleteScaleSet(c), {
      lro: true,
    });
    add('GET', `${vmss}/:vmss/extensions`, 'compute', `${VMSS}/extensions/read`, `${vmss}/extensions`, (c) =>
      this.listExtensions(c),
    );
    add(
      'GET',
      `${vmss}/:vmss/extensions/:extension`,
      'compute',
      `${VMSS}/extensions/read`,
      `${vmss}/extensions`,
      (c) => this.getExtension(c),
    );
    add(
      'DELETE',
      `${vmss}/:vmss/extensions/:extension`,
      'compute',
      `${VMSS}/extensions/delete`,
      `${vmss}/extensions`,
      (c) => this.deleteExtension(c),
      { lro: true },
    );
  }

  // ------------------------------------------------------------------ scale sets

  private listScaleSets(context: RequestContext): Reply {
    const items = this.state
      .listScaleSetIds(context.subscriptionId, context.resourceGroup)
      .map((id) => renderScaleSet(this.state, id))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getScaleSet(context: RequestContext): Reply {
    const id = this.requireScaleSet(context);
    const body = renderScaleSet(this.state, id);
    return { status: 200, body, headers: { ETag: this.state.getScaleSet(id)?.etag ?? '' } };
  }

  private putScaleSet(context: RequestContext): Reply {
    const id = this.scaleSetId(context);
    const current = this.state.scaleSetResource(id);
    if (!current) return this.createScaleSet(context, id);
    this.refuseWhileDeleting(context, current.properties);
    checkPreconditions(context, current.etag);
    const body = parseBody(ScaleSetPut, context.body);
    if (body.properties === undefined || body.properties === null) {
      // A PUT of only location and sku on an existing scale set changes the capacity and keeps the
      // model and tags: that is the whole body `az vmss scale` sends (azure-cli
      // src/azure-cli/azure/cli/command_modules/vm/custom.py, scale_vmss:
      // `VirtualMachineScaleSet(location=vmss.location, sku=vmss.sku)`), and so does cluster-autoscaler
      // (kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure/azure_scale_set.go,
      // createOrUpdateInstances: Name, Sku, Location), on scale sets whose model and tags survive it.
      return this.applyScaleSet(context, id, current.properties, body.tags ?? current.tags, body.sku);
    }
    const properties = withoutReadOnly(body.properties);
    // az's get-modify-put (`az vmss update --set …`, `az vmss extension delete`) leaves the image
    // reference out on purpose; ARM keeps the stored one.
    keepStoredImageReference(properties, current.properties);
    // customData is write-only: a PUT of a GET result omits it, and ARM keeps the stored value.
    const currentCustomData = customDataOf(current.properties);
    if (currentCustomData !== undefined && customDataOf(properties) === undefined) {
      const osProfile = objectPath(properties, 'virtualMachineProfile', 'osProfile');
      if (osProfile) osProfile.customData = currentCustomData;
    }
    const next = { ...properties, ...readOnlyOf(current.properties) };
    this.validateScaleSetModel(current.properties, next);
    return this.applyScaleSet(context, id, next, body.tags ?? {}, body.sku);
  }

  /**
   * PUT of a scale set that does not exist (learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/
   * create-or-update): 201 with `Azure-AsyncOperation`, the scale set `Creating` with `sku.capacity`
   * instances built from the model sent, then `Succeeded`. The body must carry `sku` (name and capacity)
   * and a `virtualMachineProfile` with an image reference, an OS profile (computer-name prefix, admin
   * user) and a network profile; the model passes the same checks as an update. An `If-Match` on a scale
   * set that does not exist fails (412); `If-None-Match: *` (create only) is what it is for.
   */
  private createScaleSet(context: RequestContext, id: string): Reply {
    const ifMatch = headerValue(context.headers['if-match']);
    if (ifMatch !== undefined) {
      throw new HttpError(412, {
        code: 'PreconditionFailed',
        message: `Etag provided in if-match header ${ifMatch.trim()} does not match any resource: the scale set does not exist.`,
      });
    }
    const body = parseBody(ScaleSetPut, context.body);
    const skuName = body.sku?.name;
    const capacity = body.sku?.capacity;
    if (skuName === undefined || capacity === undefined) {
      throw invalidParameter("Required parameter 'sku' (name and capacity) is missing (null).", 'sku');
    }
    const properties = withoutReadOnly(body.properties ?? {});
    const profile = objectPath(properties, 'virtualMachineProfile');
    for (const [path, target] of [
      [['storageProfile', 'imageReference'], 'virtualMachineProfile.storageProfile.imageReference'],
      [['osProfile'], 'virtualMachineProfile.osProfile'],
      [['networkProfile'], 'virtualMachineProfile.networkProfile'],
    ] as const) {
      if (profile === undefined || objectPath(profile, ...path) === undefined) {
        throw invalidParameter(`Required parameter '${target}' is missing (null).`, target);
      }
    }
    const osProfile = objectPath(properties, 'virtualMachineProfile', 'osProfile') ?? {};
    for (const field of ['computerNamePrefix', 'adminUsername'] as const) {
      if (typeof osProfile[field] !== 'string' || osProfile[field] === '') {
        throw invalidParameter(
          `Required parameter 'osProfile.${field}' is missing (null).`,
          `virtualMachineProfile.osProfile.${field}`,
        );
      }
    }
    const mode = textOr(properties.orchestrationMode, 'Uniform');
    this.validateScaleSetModel({ orchestrationMode: mode }, { ...properties, orchestrationMode: mode });
    for (const check of linkedChecksOfCreation(body)) {
      this.authorizeLinked(context, check.action, check.scope);
    }
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      this.options.latency.scaleSetUpdateSeconds,
    );
    const created = this.state.createScaleSet(
      id,
      {
        location: body.location,
        tags: body.tags ?? {},
        skuName,
        capacity,
        ...(body.zones ? { zones: body.zones } : {}),
        properties,
        hyperVGeneration: this.hyperVGenerationOf(properties),
      },
      done,
      failure,
    );
    return {
      status: 201,
      body: renderScaleSet(this.state, created.id),
      headers: { ...this.operationHeaders(context, operation, false), ETag: created.etag },
    };
  }

  /** A gallery image's generation (its definition's), else V2 as the marketplace images used here. */
  private hyperVGenerationOf(properties: JsonObject): 'V1' | 'V2' {
    const reference = objectPath(properties, 'virtualMachineProfile', 'storageProfile', 'imageReference');
    const imageId = reference?.id;
    if (typeof imageId !== 'string' || !isGalleryImageReference({ id: imageId })) return 'V2';
    const definition = this.state.getImageDefinition(imageId.replace(/\/versions\/[^/]+$/i, ''));
    return definition?.properties.hyperVGeneration === 'V1' ? 'V1' : 'V2';
  }

  private patchScaleSet(context: RequestContext): Reply {
    const id = this.requireScaleSet(context);
    const current = this.state.scaleSetResource(id);
    if (!current) throw this.resourceNotFound(context, VMSS, context.params.vmss ?? '');
    this.refuseWhileDeleting(context, current.properties);
    checkPreconditions(context, current.etag);
    const body = parseBody(ScaleSetPatch, context.body);
    const merged = mergePatch(current.properties, withoutReadOnly(body.properties ?? {}));
    const next = { ...merged, ...readOnlyOf(current.properties) };
    this.validateScaleSetModel(current.properties, next);
    // ARM PATCH replaces the tags dictionary as a whole.
    return this.applyScaleSet(context, id, next, body.tags ?? current.tags, body.sku);
  }

  /**
   * DELETE of a scale set (learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/delete): 202
   * with `Azure-AsyncOperation` and `Location`, the scale set `Deleting` until its instances and then it
   * are gone (their nodes leave the cluster); 204 when there is nothing to delete. `forceDeletion` is
   * accepted and changes nothing here.
   */
  private deleteScaleSet(context: RequestContext): Reply {
    const id = this.scaleSetId(context);
    const scaleSet = this.state.getScaleSet(id);
    if (!scaleSet) return { status: 204 };
    const { operation, failure, done } = this.beginOperation(
      context,
      scaleSet.location,
      this.options.latency.instanceStopSeconds,
    );
    this.state.requestScaleSetDelete(id, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  /** A scale set being deleted takes no other change (ARM answers 409 for it). */
  private refuseWhileDeleting(context: RequestContext, properties: JsonObject): void {
    if (properties.provisioningState !== 'Deleting') return;
    throw new HttpError(409, {
      code: 'OperationNotAllowed',
      message: `The operation is not allowed because virtual machine scale set '${context.params.vmss ?? ''}' is being deleted.`,
    });
  }

  private applyScaleSet(
    context: RequestContext,
    id: string,
    properties: JsonObject,
    tags: Record<string, string>,
    sku: { readonly name?: string | undefined; readonly capacity?: number | undefined } | undefined,
  ): Reply {
    const capacity = sku?.capacity;
    // A new `sku.name` is a new VM size in the model: instances built from then on get it, existing ones
    // report latestModelApplied false until upgraded (learn.microsoft.com/azure/virtual-machine-scale-sets/
    // virtual-machine-scale-sets-upgrade-policy, "Scale set model").
    const skuName = sku?.name;
    const scaleSet = this.state.getScaleSet(id);
    const { operation, failure, done } = this.beginOperation(
      context,
      scaleSet?.location ?? '',
      this.options.latency.scaleSetUpdateSeconds,
    );
    // An injected failure still applies the model: ARM has been seen to report failure for updates that worked.
    this.state.replaceScaleSet(
      id,
      {
        properties,
        tags,
        ...(capacity === undefined ? {} : { capacity }),
        ...(skuName === undefined ? {} : { skuName }),
      },
      done,
      failure,
    );
    return {
      status: 200,
      body: renderScaleSet(this.state, id),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  /** Refuses model changes ARM refuses (docs/design.md#gallery-and-image-definition, #model-update). */
  private validateScaleSetModel(current: JsonObject, next: JsonObject): void {
    if (textOr(next.orchestrationMode, '') !== textOr(current.orchestrationMode, '')) {
      throw propertyChange('orchestrationMode');
    }
    const upgradeMode = objectPath(next, 'upgradePolicy')?.mode;
    if (upgradeMode !== undefined && !['Manual', 'Automatic', 'Rolling'].includes(textOr(upgradeMode, ''))) {
      throw invalidParameter(
        `The value ${JSON.stringify(upgradeMode)} of parameter 'upgradePolicy.mode' is invalid.`,
        'upgradePolicy.mode',
      );
    }
    const customData = customDataOf(next);
    if (customData !== undefined && (!isBase64(customData) || customData.length > MAX_CUSTOM_DATA)) {
      throw invalidParameter(
        `Custom data in OSProfile must be in Base64 encoding and with a maximum length of ${MAX_CUSTOM_DATA} characters.`,
        'customData',
      );
    }
    const before = objectPath(current, 'virtualMachineProfile', 'storageProfile', 'imageReference') ?? {};
    const after = objectPath(next, 'virtualMachineProfile', 'storageProfile', 'imageReference') ?? {};
    const marketplaceFields = ['publisher', 'offer', 'sku', 'version'] as const;
    const hasMarketplace = marketplaceFields.some(
      (field) => typeof after[field] === 'string' && after[field] !== '',
    );
    if (typeof after.id === 'string') {
      if (hasMarketplace) {
        if (isGalleryImageReference(after) && typeof after.version === 'string') {
          throw invalidParameter(
            "Please do not use field 'version' for gallery image deployment. To use a specific version of gallery image, set the full version resource id in the 'id' field; to use 'latest' version of gallery image, just set /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Compute/galleries/{galleryName}/images/{imageName} in the 'id' field.",
            'imageReference.version',
          );
        }
        throw invalidParameter(
          "Image reference 'id' cannot be combined with 'publisher', 'offer', 'sku' or 'version'; set them to null when switching to a custom image.",
          'imageReference',
        );
      }
      this.validateGalleryImage(after.id, next);
    } else {
      for (const field of ['publisher', 'offer'] as const) {
        const old = before[field];
        const now = after[field];
        if (typeof old === 'string' && typeof now === 'string' && old.toLowerCase() !== now.toLowerCase()) {
          throw new HttpError(409, {
            code: 'PropertyChangeNotAllowed',
            message: 'Image reference publisher and offer can only be set when you create the scale set.',
            target: `imageReference.${field}`,
          });
        }
      }
      if (!hasMarketplace && !hasSharedOrCommunityId(after))
        throw invalidParameter("Required parameter 'imageReference' is missing (null).", 'imageReference');
      const problem = hasSharedOrCommunityId(after) ? imageReferenceProblem(this.state, after) : undefined;
      if (problem) {
        throw new HttpError(problem.status, {
          code: problem.code,
          message: problem.message,
          target: problem.target,
        });
      }
      if (hasMarketplace) checkMarketplaceReference(after);
    }
  }

  private validateGalleryImage(imageId: string, model: JsonObject): void {
    if (!isGalleryImageReference({ id: imageId })) return;
    const problem = imageReferenceProblem(this.state, { id: imageId });
    if (problem) {
      throw new HttpError(problem.status, {
        code: problem.code,
        message: problem.message,
        target: problem.target,
      });
    }
    const isVersion = /\/versions\/[^/]+$/i.test(imageId);
    const definition = this.state.getImageDefinition(
      isVersion ? imageId.replace(/\/versions\/[^/]+$/i, '') : imageId,
    );
    if (!definition) return;
    const hasOsProfile = objectPath(model, 'virtualMachineProfile', 'osProfile') !== undefined;
    if (definition.properties.osState === 'Specialized' && hasOsProfile) {
      throw invalidParameter("Parameter 'osProfile' is not allowed.", 'osProfile');
    }
    if (definition.properties.osState === 'Generalized' && !hasOsProfile) {
      throw invalidParameter("Required parameter 'osProfile' is missing (null).", 'osProfile');
    }
  }

  // ------------------------------------------------------------------ extensions

  private listExtensions(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    return this.page(context, scaleSetExtensions(this.state, scaleSetId));
  }

  private getExtension(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    const name = (context.params.extension ?? '').toLowerCase();
    const extension = scaleSetExtensions(this.state, scaleSetId).find(
      (candidate) => textOr(candidate.name, '').toLowerCase() === name,
    );
    if (!extension) {
      throw this.resourceNotFound(
        context,
        `${VMSS}/${context.params.vmss ?? ''}/extensions`,
        context.params.extension ?? '',
      );
    }
    return { status: 200, body: extension };
  }

  private deleteExtension(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    const name = context.params.extension ?? '';
    const exists = this.state
      .getScaleSet(scaleSetId)
      ?.extensions.some((extension) => extension.name.toLowerCase() === name.toLowerCase());
    if (!exists) return { status: 204 };
    const seconds = this.state.extensionDeleteSeconds(name);
    const { operation, failure, done } = this.beginOperation(
      context,
      this.state.getScaleSet(scaleSetId)?.location ?? '',
      seconds,
    );
    this.state.deleteExtension(scaleSetId, name, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }
}

/**
 * A marketplace reference names its image with all four of publisher, offer, sku and version (the
 * ImageReference definition: "publisher/offer/sku/version" identify a platform image, `id` a custom or
 * gallery one; learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/create-or-update,
 * ImageReference). A PUT's reference replaces the stored one, so a PUT carrying only `version` would
 * leave a reference that names no image: refused, naming the first missing field. A PATCH merges into
 * the stored reference first (merge-patch.ts), so `{ version }` alone is fine there.
 */
function checkMarketplaceReference(reference: JsonObject): void {
  const missing = (['publisher', 'offer', 'sku', 'version'] as const).filter(
    (field) => typeof reference[field] !== 'string' || reference[field] === '',
  );
  const first = missing[0];
  if (first === undefined) return;
  throw invalidParameter(
    `Required parameter 'imageReference.${first}' is missing (null). An image reference names a marketplace image with all of 'publisher', 'offer', 'sku' and 'version' (missing: ${missing.join(', ')}), or a custom or gallery image with 'id' alone.`,
    `imageReference.${first}`,
  );
}

/** Direct shared and community gallery references stand alone like `id`. */
function hasSharedOrCommunityId(reference: JsonObject): boolean {
  return ['sharedGalleryImageId', 'communityGalleryImageId'].some(
    (field) => typeof reference[field] === 'string' && reference[field] !== '',
  );
}

function customDataOf(properties: JsonObject): string | undefined {
  const value = objectPath(properties, 'virtualMachineProfile', 'osProfile')?.customData;
  return typeof value === 'string' ? value : undefined;
}

function isBase64(value: string): boolean {
  return value.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(value);
}

/**
 * `If-None-Match: *` refuses to overwrite an existing scale set; `If-Match` must carry the current etag
 * (or `*`), else 412 PreconditionFailed — the optimistic concurrency Compute offers since 2023-09-01.
 */
function checkPreconditions(context: RequestContext, etag: string): void {
  const ifNoneMatch = headerValue(context.headers['if-none-match']);
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() === '*') {
    throw new HttpError(412, {
      code: 'PreconditionFailed',
      message: `Etag provided in if-none-match header "*" does not allow updating the existing resource with etag ${etag}.`,
    });
  }
  const ifMatch = headerValue(context.headers['if-match']);
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const wanted = ifMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .map((tag) => (tag.startsWith('"') ? tag : `"${tag}"`));
  if (!wanted.includes(etag)) {
    throw new HttpError(412, {
      code: 'PreconditionFailed',
      message: `Etag provided in if-match header ${ifMatch.trim()} does not match etag ${etag} of resource.`,
    });
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

function keepStoredImageReference(next: JsonObject, stored: JsonObject): void {
  const profile = objectPath(next, 'virtualMachineProfile');
  const storedStorage = objectPath(stored, 'virtualMachineProfile', 'storageProfile');
  if (!profile || !storedStorage) return;
  const storage = objectPath(profile, 'storageProfile');
  if (!storage) {
    profile.storageProfile = deepCopy(storedStorage);
  } else if (storage.imageReference === undefined && storedStorage.imageReference !== undefined) {
    storage.imageReference = deepCopy(storedStorage.imageReference);
  } else if (isObject(storage.imageReference) && isObject(storedStorage.imageReference)) {
    storage.imageReference = withStoredMarketplaceFields(
      storage.imageReference,
      storedStorage.imageReference,
    );
  }
}

/**
 * A PUT whose reference names only some of a marketplace image's fields (`{ version }`: what `az vmss
 * update --set virtualMachineProfile.storageProfile.imageReference.version=X` changes) keeps the stored
 * marketplace reference's other fields, as Azure accepts that change of version. A reference with an id
 * (custom, gallery, shared or community) replaces the stored one.
 */
function withStoredMarketplaceFields(next: JsonObject, stored: JsonObject): JsonObject {
  const references = ['id', 'sharedGalleryImageId', 'communityGalleryImageId'];
  const named = (reference: JsonObject): boolean =>
    references.some((field) => typeof reference[field] === 'string' && reference[field] !== '');
  if (named(next) || named(stored)) return next;
  const filled: JsonObject = { ...next };
  for (const field of ['publisher', 'offer', 'sku', 'version']) {
    if (filled[field] === undefined && typeof stored[field] === 'string') filled[field] = stored[field];
  }
  return filled;
}
