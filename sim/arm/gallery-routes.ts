/**
 * ARM routes of the gallery resource provider: galleries, image definitions (immutable fields → 409)
 * and image versions (create from a snapshot or disk with the source checks, ZRS refusal per region,
 * updates of the publishing profile, delete).
 */
import { z } from 'zod';

import {
  expandIncludes,
  HttpError,
  invalidParameter,
  objectPath,
  parseBody,
  propertyChange,
  type Reply,
  type RequestContext,
  Tags,
  withoutReadOnly,
} from './arm-http.js';
import { renderGallery, renderImageDefinition, renderImageVersion } from './arm-resources.js';
import { type AddRoute, ArmRoutes } from './arm-routes.js';
import { type ArmErrorBody, deepCopy, idKey, isObject, type JsonObject, textOr } from './compute-state.js';
import { mergePatch } from './merge-patch.js';

const GalleryPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  properties: z.looseObject({ description: z.string().optional() }).optional(),
});

const ImageDefinitionPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  properties: z.looseObject({
    osType: z.enum(['Linux', 'Windows']),
    osState: z.enum(['Generalized', 'Specialized']),
    identifier: z.looseObject({ publisher: z.string(), offer: z.string(), sku: z.string() }),
    hyperVGeneration: z.enum(['V1', 'V2']).optional(),
    architecture: z.enum(['x64', 'Arm64']).optional(),
    features: z.array(z.looseObject({ name: z.string(), value: z.string() })).optional(),
    allowUpdateImage: z.boolean().optional(),
  }),
});

const TargetRegion = z.looseObject({
  name: z.string(),
  regionalReplicaCount: z.number().int().optional(),
  storageAccountType: z.string().optional(),
  excludeFromLatest: z.boolean().optional(),
});

const ImageVersionPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  properties: z.looseObject({
    publishingProfile: z
      .looseObject({
        targetRegions: z.array(TargetRegion).optional(),
        replicaCount: z.number().int().min(1).max(100).optional(),
        storageAccountType: z
          .enum(['Standard_LRS', 'Standard_ZRS', 'Premium_LRS', 'PremiumV2_LRS'])
          .optional(),
        excludeFromLatest: z.boolean().optional(),
        endOfLifeDate: z.string().optional(),
        replicationMode: z.enum(['Full', 'Shallow']).optional(),
      })
      .optional(),
    storageProfile: z
      .looseObject({
        source: z.looseObject({ id: z.string().optional() }).optional(),
        osDiskImage: z
          .looseObject({
            source: z.looseObject({ id: z.string().optional() }).optional(),
            hostCaching: z.string().optional(),
          })
          .optional(),
      })
      .optional(),
  }),
});

const ImageVersionPatch = z.looseObject({
  tags: Tags.optional(),
  properties: z.looseObject({}).optional(),
});

const VERSION_NAME = /^(\d+)\.(\d+)\.(\d+)$/;
const GALLERY_NAME = /^[A-Za-z0-9]([A-Za-z0-9_.]{0,78}[A-Za-z0-9])?$/;

export class GalleryRoutes extends ArmRoutes {
  register(add: AddRoute): void {
    add('GET', 'galleries', 'gallery', 'Microsoft.Compute/galleries/read', 'galleries', (c) =>
      this.listGalleries(c),
    );
    add('GET', 'galleries/:gallery', 'gallery', 'Microsoft.Compute/galleries/read', 'galleries', (c) =>
      this.getGallery(c),
    );
    add(
      'PUT',
      'galleries/:gallery',
      'gallery',
      'Microsoft.Compute/galleries/write',
      'galleries',
      (c) => this.putGallery(c),
      {
        lro: true,
      },
    );
    const images = 'galleries/:gallery/images';
    add('GET', images, 'gallery', 'Microsoft.Compute/galleries/images/read', 'galleries/images', (c) =>
      this.listImages(c),
    );
    add(
      'GET',
      `${images}/:image`,
      'gallery',
      'Microsoft.Compute/galleries/images/read',
      'galleries/images',
      (c) => this.getImage(c),
    );
    add(
      'PUT',
      `${images}/:image`,
      'gallery',
      'Microsoft.Compute/galleries/images/write',
      'galleries/images',
      (c) => this.putImage(c),
      { lro: true },
    );
    const versions = `${images}/:image/versions`;
    const versionType = 'galleries/images/versions';
    add('GET', versions, 'gallery', 'Microsoft.Compute/galleries/images/versions/read', versionType, (c) =>
      this.listVersions(c),
    );
    add(
      'GET',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/read',
      versionType,
      (c) => this.getVersion(c),
    );
    add(
      'PUT',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/write',
      versionType,
      (c) => this.putVersion(c),
      { lro: true },
    );
    add(
      'PATCH',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/write',
      versionType,
      (c) => this.patchVersion(c),
      { lro: true },
    );
    add(
      'DELETE',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/delete',
      versionType,
      (c) => this.deleteVersion(c),
      { lro: true },
    );
  }

  // ------------------------------------------------------------------ galleries

  private galleryId(context: RequestContext): string {
    return this.resourceId(context, 'galleries', context.params.gallery ?? '');
  }

  private requireGallery(context: RequestContext): string {
    const gallery = this.state.getGallery(this.galleryId(context));
    if (!gallery)
      throw this.resourceNotFound(context, 'Microsoft.Compute/galleries', context.params.gallery ?? '');
    return gallery.id;
  }

  private requireImage(context: RequestContext): string {
    const galleryId = this.requireGallery(context);
    const image = this.state.getImageDefinition(`${galleryId}/images/${context.params.image ?? ''}`);
    if (!image) {
      throw this.resourceNotFound(
        context,
        `Microsoft.Compute/galleries/${context.params.gallery ?? ''}/images`,
        context.params.image ?? '',
      );
    }
    return image.id;
  }

  private listGalleries(context: RequestContext): Reply {
    return this.page(
      context,
      this.state
        .listGalleries(context.subscriptionId, context.resourceGroup)
        .map((gallery) => renderGallery(gallery)),
    );
  }

  private getGallery(context: RequestContext): Reply {
    const gallery = this.state.getGallery(this.requireGallery(context));
    return { status: 200, body: gallery ? renderGallery(gallery) : undefined };
  }

  private putGallery(context: RequestContext): Reply {
    const name = context.params.gallery ?? '';
    if (!GALLERY_NAME.test(name)) {
      throw invalidParameter(
        `The gallery name '${name}' is not valid. It can contain only English letters, numbers, underscores and periods, and cannot begin or end with an underscore or period.`,
        'galleryName',
      );
    }
    const body = parseBody(GalleryPut, context.body);
    const existed = this.state.getGallery(this.galleryId(context)) !== undefined;
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      existed ? 0 : this.options.latency.galleryCreateSeconds,
    );
    const gallery = this.state.putGallery(
      context.subscriptionId,
      context.resourceGroup,
      name,
      { location: body.location, tags: body.tags ?? {}, properties: body.properties ?? {} },
      done,
      failure,
    );
    return {
      status: existed ? 200 : 201,
      body: renderGallery(gallery),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private listImages(context: RequestContext): Reply {
    const galleryId = this.requireGallery(context);
    return this.page(
      context,
      this.state.listImageDefinitions(galleryId).map((image) => renderImageDefinition(image)),
    );
  }

  private getImage(context: RequestContext): Reply {
    const image = this.state.getImageDefinition(this.requireImage(context));
    return { status: 200, body: image ? renderImageDefinition(image) : undefined };
  }

  private putImage(context: RequestContext): Reply {
    const galleryId = this.galleryId(context);
    if (!this.state.getGallery(galleryId)) throw this.parentNotFound(context.params.gallery ?? '');
    const body = parseBody(ImageDefinitionPut, context.body, 'galleryImage');
    const name = context.params.image ?? '';
    const existed = this.state.getImageDefinition(`${galleryId}/images/${name}`) !== undefined;
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      existed ? 0 : this.options.latency.imageDefinitionCreateSeconds,
    );
    const image = this.state.putImageDefinition(
      galleryId,
      name,
      { location: body.location, tags: body.tags ?? {}, properties: body.properties },
      done,
      failure,
    );
    return {
      status: existed ? 200 : 201,
      body: renderImageDefinition(image),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private listVersions(context: RequestContext): Reply {
    const imageId = this.requireImage(context);
    return this.page(
      context,
      this.state
        .listImageVersionRecords(imageId)
        .map((version) => renderImageVersion(this.state, version, false)),
    );
  }

  private versionId(context: RequestContext): string {
    return `${this.galleryId(context)}/images/${context.params.image ?? ''}/versions/${context.params.version ?? ''}`;
  }

  private getVersion(context: RequestContext): Reply {
    this.requireImage(context);
    const version = this.state.getImageVersionRecord(this.versionId(context));
    if (!version) {
      throw this.resourceNotFound(
        context,
        `Microsoft.Compute/galleries/${context.params.gallery ?? ''}/images/${context.params.image ?? ''}/versions`,
        context.params.version ?? '',
      );
    }
    return {
      status: 200,
      body: renderImageVersion(this.state, version, expandIncludes(context.url, 'ReplicationStatus')),
    };
  }

  private putVersion(context: RequestContext): Reply {
    const imageId = `${this.galleryId(context)}/images/${context.params.image ?? ''}`;
    const image = this.state.getImageDefinition(imageId);
    if (!image) throw this.parentNotFound(context.params.image ?? '');
    const name = context.params.version ?? '';
    const versionMatch = VERSION_NAME.exec(name);
    if (!versionMatch || versionMatch.slice(1).some((part) => Number(part) > 2147483647)) {
      throw invalidParameter(
        'The image version name should follow Major(int).Minor(int).Patch(int) format, for e.g: 1.0.0, 2018.12.1 etc.',
        'galleryImageVersionName',
      );
    }
    const body = parseBody(ImageVersionPut, context.body, 'galleryImageVersion');
    const storage = body.properties.storageProfile ?? {};
    const sources = [storage.source?.id, storage.osDiskImage?.source?.id].filter(
      (id): id is string => typeof id === 'string',
    );
    const existing = this.state.getImageVersionRecord(`${imageId}/versions/${name}`);
    // `az sig image-version update --set …` is a get-modify-put that leaves the source out: an
    // existing version keeps its stored source.
    if (existing && sources.length === 0) {
      return this.updateExistingVersion(
        context,
        existing.id,
        existing.properties,
        body,
        storedSourceOf(existing.properties),
      );
    }
    if (sources.length !== 1 || !sources[0]) {
      throw invalidParameter(
        'One and only one source type (user image, snapshot, disk, virtual machine) can be provided.',
        'storageProfile',
      );
    }
    const sourceId = sources[0];
    if (existing)
      return this.updateExistingVersion(context, existing.id, existing.properties, body, sourceId);
    const location = body.location.toLowerCase().replace(/\s+/g, '');
    if (location !== image.location.toLowerCase().replace(/\s+/g, '')) {
      throw invalidParameter(
        `The location '${body.location}' of gallery image version '${name}' must be the same as the location '${image.location}' of its gallery image.`,
        'location',
      );
    }
    // The gallery RP needs write access on the source disk or snapshot
    // (https://learn.microsoft.com/azure/virtual-machines/azure-compute-gallery, RBAC).
    this.authorizeLinked(
      context,
      /\/providers\/Microsoft\.Compute\/disks\//i.test(sourceId)
        ? 'Microsoft.Compute/disks/write'
        : 'Microsoft.Compute/snapshots/write',
      sourceId,
    );
    const snapshot = this.state.getSnapshot(sourceId);
    const disk = snapshot ? undefined : this.state.getDisk(sourceId);
    const source = snapshot ?? disk;
    if (!source || source.location.toLowerCase() !== location) {
      throw invalidParameter(
        `Source ${sourceId} is not found. Please check source exists, and is in the same region as gallery image version being created.`,
        'storageProfile.osDiskImage.source.id',
      );
    }
    const definitionGeneration = textOr(image.properties.hyperVGeneration, 'V1');
    if (source.hyperVGeneration !== definitionGeneration) {
      throw invalidParameter(
        `The resource with id '${sourceId}' has a different Hypervisor generation ['${source.hyperVGeneration}'] than the parent gallery image Hypervisor generation ['${definitionGeneration}'].`,
        'storageProfile',
      );
    }
    const publishing = body.properties.publishingProfile ?? {};
    const storageAccountType = publishing.storageAccountType ?? 'Standard_LRS';
    const targetRegions = publishing.targetRegions ?? [
      { name: body.location, regionalReplicaCount: publishing.replicaCount ?? 1, storageAccountType },
    ];
    if (!targetRegions.some((region) => region.name.toLowerCase().replace(/\s+/g, '') === location)) {
      throw invalidParameter(
        `The publishing profile regions of gallery image version '${name}' must contain the location of image version '${body.location}'.`,
        'publishingProfile.targetRegions',
      );
    }
    const properties = deepCopy(body.properties) as JsonObject;
    properties.publishingProfile = {
      ...publishing,
      storageAccountType,
      targetRegions: deepCopy(targetRegions),
    };
    const osDiskImage = { hostCaching: 'None', ...(storage.osDiskImage ?? {}), sizeInGB: source.diskSizeGB };
    properties.storageProfile = { ...deepCopy(storage), osDiskImage };
    properties.safetyProfile ??= {
      allowDeletionOfReplicatedLocations: true,
      reportedForPolicyViolation: false,
    };
    const zrsRegion = targetRegions.find(
      (region) =>
        (region.storageAccountType ?? storageAccountType) === 'Standard_ZRS' &&
        !this.state.regionCapabilities(region.name).zrs,
    );
    const seconds = this.options.latency.imageVersionCreateSeconds;
    const { operation, failure } = this.beginOperation(context, body.location, seconds);
    const zrsError: ArmErrorBody | undefined = zrsRegion
      ? {
          code: 'InvalidParameter',
          message: 'ZRS storage account type is not supported in this region.',
          target: 'storageAccountType',
          details: [
            {
              code: 'ZrsNotSupported',
              message: `ZRS is not supported in region '${zrsRegion.name}'. Use Standard_LRS or Premium_LRS.`,
            },
          ],
        }
      : undefined;
    // The gallery RP accepts the version and fails it shortly after; the failed version stays (kamino had
    // to delete it before retrying with Standard_LRS).
    const version = this.state.createImageVersion(
      imageId,
      name,
      { location: body.location, tags: body.tags ?? {}, properties },
      {
        ...(zrsError ? { fail: zrsError, failAfterSeconds: Math.min(30, seconds) } : { failure }),
        onComplete: (outcome) =>
          this.operations.complete(operation, outcome, undefined, zrsError ? 400 : 500),
      },
    );
    return {
      status: 201,
      body: renderImageVersion(this.state, version, false),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private updateExistingVersion(
    context: RequestContext,
    id: string,
    current: JsonObject,
    body: z.infer<typeof ImageVersionPut>,
    sourceId: string,
  ): Reply {
    this.refuseWhileBusy(context.params.version ?? '', current);
    if (current.provisioningState === 'Failed') {
      throw new HttpError(409, {
        code: 'OperationNotAllowed',
        message: `Gallery image version '${context.params.version ?? ''}' is in a failed state. Delete it before creating it again.`,
      });
    }
    const currentSource =
      textOr(objectPath(current, 'storageProfile', 'osDiskImage', 'source')?.id, '') ||
      textOr(objectPath(current, 'storageProfile', 'source')?.id, '');
    if (idKey(currentSource) !== idKey(sourceId)) {
      throw propertyChange('galleryImageVersion.properties.storageProfile.osDiskImage.source.id');
    }
    const publishing = body.properties.publishingProfile ?? {};
    const merged = mergePatch(current, {
      publishingProfile: {
        ...(publishing.excludeFromLatest === undefined
          ? {}
          : { excludeFromLatest: publishing.excludeFromLatest }),
        ...(publishing.endOfLifeDate === undefined ? {} : { endOfLifeDate: publishing.endOfLifeDate }),
      },
    });
    this.checkVersionImmutables(current, { publishingProfile: publishing });
    return this.commitVersionUpdate(context, id, merged, body.tags, 200);
  }

  private patchVersion(context: RequestContext): Reply {
    this.requireImage(context);
    const id = this.versionId(context);
    const current = this.state.getImageVersionRecord(id);
    if (!current) {
      throw this.resourceNotFound(
        context,
        `Microsoft.Compute/galleries/${context.params.gallery ?? ''}/images/${context.params.image ?? ''}/versions`,
        context.params.version ?? '',
      );
    }
    this.refuseWhileBusy(current.name, current.properties);
    const body = parseBody(ImageVersionPatch, context.body, 'galleryImageVersion');
    const patch = withoutReadOnly(body.properties ?? {});
    this.checkVersionImmutables(current.properties, patch);
    const merged = mergePatch(current.properties, patch);
    return this.commitVersionUpdate(context, id, merged, body.tags, 200);
  }

  /** A version being created or deleted refuses updates (retry after it settles, GET first when resuming). */
  private refuseWhileBusy(name: string, properties: JsonObject): void {
    const state = textOr(properties.provisioningState, '');
    if (state === 'Creating' || state === 'Deleting') {
      throw new HttpError(409, {
        code: 'OperationNotAllowed',
        message: `Operation 'Update' is not allowed on gallery image version '${name}' while its provisioning state is '${state}'.`,
      });
    }
  }

  private checkVersionImmutables(current: JsonObject, patch: JsonObject): void {
    const publishing = isObject(patch.publishingProfile) ? patch.publishingProfile : {};
    const currentPublishing = objectPath(current, 'publishingProfile') ?? {};
    for (const key of ['storageAccountType', 'replicationMode']) {
      if (
        publishing[key] !== undefined &&
        publishing[key] !== (currentPublishing[key] ?? (key === 'replicationMode' ? 'Full' : undefined))
      ) {
        throw propertyChange(`galleryImageVersion.properties.publishingProfile.${key}`);
      }
    }
    if (
      patch.storageProfile !== undefined &&
      JSON.stringify(patch.storageProfile) !== JSON.stringify(current.storageProfile)
    ) {
      throw propertyChange('galleryImageVersion.properties.storageProfile.osDiskImage.source.id');
    }
  }

  private commitVersionUpdate(
    context: RequestContext,
    id: string,
    properties: JsonObject,
    tags: Record<string, string> | undefined,
    status: number,
  ): Reply {
    const { operation, failure, done } = this.beginOperation(
      context,
      this.state.getImageVersion(id)?.location ?? '',
      0,
    );
    const updated = this.state.updateImageVersion(id, {
      properties: { ...properties, provisioningState: 'Succeeded' },
      ...(tags ? { tags } : {}),
    });
    // Publishing-profile updates apply at once; an injected failure is reported, the change stays.
    const error = failure();
    done(error ? { status: 'Failed', error } : { status: 'Succeeded' });
    return {
      status,
      body: renderImageVersion(this.state, updated, false),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private deleteVersion(context: RequestContext): Reply {
    this.requireImage(context);
    const id = this.versionId(context);
    const version = this.state.getImageVersion(id);
    if (!version) return { status: 204 };
    const seconds = this.options.latency.imageVersionDeleteSeconds;
    const { operation, failure, done } = this.beginOperation(context, version.location, seconds);
    this.state.deleteImageVersion(id, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }
}

function storedSourceOf(properties: JsonObject): string {
  return (
    textOr(objectPath(properties, 'storageProfile', 'osDiskImage', 'source')?.id, '') ||
    textOr(objectPath(properties, 'storageProfile', 'source')?.id, '')
  );
}
