/**
 * Azure Compute Gallery over @azure/arm-compute: the cluster's gallery and the pool's image definition
 * (created when absent, never changed), image versions requested from a snapshot, hidden from `latest`
 * until published, and deleted. Long-running operations are only submitted; callers poll.
 */
import type { GalleryImage, GalleryImageVersion, TargetRegion } from '@azure/arm-compute';

import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersion,
  ImageVersionRef,
} from '../../domain/compute.js';
import { ignoreNotFound } from '../../domain/errors.js';
import type { ImageVersionRequest } from '../../ports/compute-gateway.js';
import type { ArmClients } from './arm-clients.js';
import { createByName } from './create-by-name.js';
import { withArmErrors } from './errors.js';
import { toImageDefinition, toImageVersion } from './to-domain.js';

export class ArmGallery {
  constructor(private readonly clients: ArmClients) {}

  async ensure(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    knownAbsent: boolean,
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

  async getDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition> {
    const action = `reading image definition ${describeDefinition(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const image = await withArmErrors(action, () =>
      client.galleryImages.get(ref.resourceGroup, ref.galleryName, ref.imageName),
    );
    return toImageDefinition(image, ref);
  }

  async ensureDefinition(
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
      ...(spec.description === undefined ? {} : { description: spec.description }),
      ...(spec.securityType === undefined
        ? {}
        : { features: [{ name: 'SecurityType', value: spec.securityType }] }),
    };
    const created = await withArmErrors(action, () =>
      client.galleryImages.beginCreateOrUpdateAndWait(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        body,
        this.clients.pollOptions(),
      ),
    );
    return toImageDefinition(created, ref);
  }

  async listVersions(ref: ImageDefinitionRef): Promise<ImageVersion[]> {
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

  async getVersion(ref: ImageVersionRef): Promise<ImageVersion> {
    const action = `reading image version ${describeVersion(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const version = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName, {
        expand: 'ReplicationStatus',
      }),
    );
    return toImageVersion(version, ref);
  }

  async requestVersion(request: ImageVersionRequest): Promise<void> {
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
  async requestVersionExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags: Readonly<Record<string, string>>,
  ): Promise<void> {
    const action = `requesting ${excludeFromLatest ? 'exclusion from' : 'inclusion in'} latest of image version ${describeVersion(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const version = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName),
    );
    const regions = version.publishingProfile?.targetRegions ?? [];
    const settled =
      (version.publishingProfile?.excludeFromLatest === true) === excludeFromLatest &&
      regions.every(
        (region) => region.excludeFromLatest === undefined || region.excludeFromLatest === excludeFromLatest,
      );
    if (settled) {
      return;
    }
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginUpdate(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
        {
          publishingProfile: {
            excludeFromLatest,
            // A regional flag overrides the global one; keep both saying the same thing.
            ...(regions.length === 0
              ? {}
              : { targetRegions: regions.map((region): TargetRegion => ({ ...region, excludeFromLatest })) }),
          },
          ...(Object.keys(addTags).length === 0 ? {} : { tags: { ...version.tags, ...addTags } }),
        },
      ),
    );
  }

  /** PATCH of the version's tags (replaced as a whole); a no-op when they are already these. */
  async requestVersionTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void> {
    const action = `requesting tags of image version ${describeVersion(ref)}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const version = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName),
    );
    const current = version.tags ?? {};
    const same =
      Object.keys(current).length === Object.keys(tags).length &&
      Object.entries(tags).every(([key, value]) => current[key] === value);
    if (same) {
      return;
    }
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginUpdate(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
        {
          tags: { ...tags },
        },
      ),
    );
  }

  async requestVersionDeletion(ref: ImageVersionRef): Promise<void> {
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

function normaliseRegion(region: string): string {
  return region.replaceAll(' ', '').toLowerCase();
}

function describeDefinition(ref: ImageDefinitionRef): string {
  return `${ref.resourceGroup}/${ref.galleryName}/${ref.imageName}`;
}

function describeVersion(ref: ImageVersionRef): string {
  return `${describeDefinition(ref)}/${ref.versionName}`;
}
