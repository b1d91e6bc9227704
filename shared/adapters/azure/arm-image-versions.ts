/**
 * Gallery image versions over @azure/arm-compute: requested from a snapshot or a disk, hidden from
 * `latest` until published, retagged and deleted. Long-running operations are only submitted; callers
 * poll.
 */
import type { GalleryImageVersion, GalleryImageVersionUpdate, TargetRegion } from '@azure/arm-compute';

import type { ImageDefinitionRef, ImageVersion, ImageVersionRef } from '../../domain/compute.js';
import { ignoreNotFound } from '../../domain/errors.js';
import type {
  ImageVersionRequest,
  ImageVersionsPort,
  ImageVersionVisibility,
} from '../../ports/compute/image-versions.js';
import type { ArmClients } from './arm-clients.js';
import { describeDefinition, describeVersion } from './arm-gallery.js';
import { createByName } from './create-by-name.js';
import { withArmErrors } from './errors.js';
import { toImageVersion } from './to-domain-gallery.js';

export class ArmImageVersions implements ImageVersionsPort {
  constructor(private readonly clients: ArmClients) {}

  async list(ref: ImageDefinitionRef): Promise<ImageVersion[]> {
    const action = `listing image versions of ${describeDefinition(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    return withArmErrors(action, async () => {
      const versions: ImageVersion[] = [];
      for await (const version of client.galleryImageVersions.listByGalleryImage(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
      )) {
        if (version.name !== undefined) {
          versions.push(toImageVersion(version, { ...ref, versionName: version.name }));
        }
      }
      return versions;
    });
  }

  async get(ref: ImageVersionRef): Promise<ImageVersion> {
    const action = `reading image version ${describeVersion(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const version = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName, {
        expand: 'ReplicationStatus',
      }),
    );
    return toImageVersion(version, ref);
  }

  async request(request: ImageVersionRequest): Promise<void> {
    const { ref } = request;
    const action = `requesting image version ${describeVersion(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    await createByName({
      action,
      newName: request.newName === true,
      read: () =>
        client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName),
      what: 'image version',
      nameTakenCode: 'ImageVersionNameTaken',
      sourceId: request.sourceId,
      existingOf: (existing) => ({
        provisioningState: existing.provisioningState,
        sourceId: existing.storageProfile?.osDiskImage?.source?.id ?? existing.storageProfile?.source?.id,
      }),
      create: () =>
        client.galleryImageVersions.beginCreateOrUpdate(
          ref.resourceGroup,
          ref.galleryName,
          ref.imageName,
          ref.versionName,
          imageVersionBody(request),
        ),
    });
  }

  /** `addTags` go with the change (tags are replaced as a whole: the ones read are kept). */
  async requestExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags: Readonly<Record<string, string>> = {},
    knownTags?: Readonly<Record<string, string>>,
  ): Promise<ImageVersionVisibility | undefined> {
    const action = `requesting ${excludeFromLatest ? 'exclusion from' : 'inclusion in'} latest of image version ${describeVersion(ref)}`;
    if (knownTags !== undefined) {
      // The caller read the version (no target region with a flag of its own) and knows its tags: the
      // PATCH names the version's flag alone, which ARM merges into the publishing profile (its target
      // regions untouched), and the tags as a whole. Sent again as is, it changes nothing.
      return this.#update(ref, action, {
        publishingProfile: { excludeFromLatest },
        ...(Object.keys(addTags).length === 0 ? {} : { tags: { ...knownTags, ...addTags } }),
      });
    }
    const version = await this.#read(ref, action);
    const regions = version.publishingProfile?.targetRegions ?? [];
    const settled =
      (version.publishingProfile?.excludeFromLatest === true) === excludeFromLatest &&
      regions.every(
        (region) => region.excludeFromLatest === undefined || region.excludeFromLatest === excludeFromLatest,
      );
    if (settled) {
      return { provisioningState: version.provisioningState ?? 'Unknown', excludeFromLatest };
    }
    return this.#update(ref, action, {
      publishingProfile: {
        excludeFromLatest,
        // A regional flag overrides the global one; keep both saying the same thing.
        ...(regions.length === 0
          ? {}
          : { targetRegions: regions.map((region): TargetRegion => ({ ...region, excludeFromLatest })) }),
      },
      ...(Object.keys(addTags).length === 0 ? {} : { tags: { ...version.tags, ...addTags } }),
    });
  }

  /** PATCH of the version's tags (replaced as a whole); a no-op when they are already these. */
  async requestTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void> {
    const action = `requesting tags of image version ${describeVersion(ref)}`;
    const version = await this.#read(ref, action);
    const current = version.tags ?? {};
    const same =
      Object.keys(current).length === Object.keys(tags).length &&
      Object.entries(tags).every(([key, value]) => current[key] === value);
    if (same) {
      return;
    }
    await this.#update(ref, action, {
      tags: { ...tags },
    });
  }

  async #read(ref: ImageVersionRef, action: string): Promise<GalleryImageVersion> {
    const client = this.clients.client(ref.subscriptionId, action);
    return withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName),
    );
  }

  /**
   * PATCH of the version (a long-running operation: submitted, not awaited). ARM answers it with the
   * version (200, or 201/202 while it applies): its provisioning state and flag are returned, so that a
   * change ARM already applied is not read again.
   */
  async #update(
    ref: ImageVersionRef,
    action: string,
    body: GalleryImageVersionUpdate,
  ): Promise<ImageVersionVisibility | undefined> {
    const client = this.clients.client(ref.subscriptionId, action);
    let answered: ImageVersionVisibility | undefined;
    const onResponse = (response: { readonly status: number; readonly parsedBody?: unknown }): void => {
      if (response.status < 200 || response.status > 299) return;
      answered = visibilityOf(response.parsedBody);
    };
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginUpdate(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
        body,
        { onResponse },
      ),
    );
    return answered;
  }

  async requestDeletion(ref: ImageVersionRef): Promise<void> {
    const action = `requesting deletion of image version ${describeVersion(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginDelete(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
      ),
    ).catch(ignoreNotFound);
  }
}

function imageVersionBody(request: ImageVersionRequest): GalleryImageVersion {
  const regions = [request.location, ...request.extraRegions].filter(
    (region, index, all) =>
      all.findIndex((other) => normaliseRegion(other) === normaliseRegion(region)) === index,
  );
  return {
    location: request.location,
    tags: { ...request.tags },
    storageProfile: { osDiskImage: { source: { id: request.sourceId } } },
    publishingProfile: {
      // The version's own region must be a target; the regional storage type must be given per region
      // or ARM falls back to Standard_LRS there.
      targetRegions: regions.map((name) => ({
        name,
        regionalReplicaCount: 1,
        storageAccountType: request.storageAccountType,
      })),
      replicaCount: 1,
      storageAccountType: request.storageAccountType,
      excludeFromLatest: request.excludeFromLatest,
    },
  };
}

/** The provisioning state and flag of a version as ARM sends it on the wire (`properties.…`). */
function visibilityOf(body: unknown): ImageVersionVisibility | undefined {
  const properties = (body as { readonly properties?: unknown } | undefined)?.properties as
    | {
        readonly provisioningState?: unknown;
        readonly publishingProfile?: { readonly excludeFromLatest?: unknown };
      }
    | undefined;
  const state = properties?.provisioningState;
  if (typeof state !== 'string') return undefined;
  return {
    provisioningState: state,
    excludeFromLatest: properties?.publishingProfile?.excludeFromLatest === true,
  };
}

function normaliseRegion(region: string): string {
  return region.replaceAll(' ', '').toLowerCase();
}
