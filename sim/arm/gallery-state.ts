/**
 * Azure Compute Gallery resources of the simulated compute state: galleries, image definitions
 * (immutable properties refused like ARM does) and image versions (built on simulated time, with
 * replication progress), plus the region capabilities that decide whether ZRS versions succeed.
 */
import { durationOf } from '../contracts.js';
import {
  ComputeCore,
  type GalleryRecord,
  type ImageRecord,
  outcomeOf,
  type PendingTransition,
  stripReadOnly,
  versionInfo,
  type VersionRecord,
} from './compute-core.js';
import { deepCopy, idKey, isObject, objectAt } from './compute-json.js';
import {
  type ArmErrorBody,
  type Completion,
  ComputeError,
  type DiskContent,
  type FailureCheck,
  type GallerySeed,
  type ImageVersionInfo,
  type JsonObject,
  type RegionCapabilities,
  type ReplicationStatus,
} from './compute-types.js';

export class GalleryState extends ComputeCore {
  private readonly regions = new Map<string, RegionCapabilities>();

  /** Region capabilities (default: ZRS available everywhere). */
  setRegionCapabilities(location: string, capabilities: RegionCapabilities): void {
    this.regions.set(location.toLowerCase(), { ...capabilities });
  }

  regionCapabilities(location: string): RegionCapabilities {
    return this.regions.get(location.toLowerCase()) ?? { zrs: true };
  }

  /** Creates a gallery with image definitions and versions (all Succeeded unless seeded otherwise). */
  addGallery(seed: GallerySeed): GalleryRecord {
    const subscriptionId = seed.subscriptionId ?? this.defaultSubscriptionId;
    const location = seed.location ?? this.defaultLocation;
    const gallery = this.putGallery(
      subscriptionId,
      seed.resourceGroup,
      seed.name,
      { location, tags: seed.tags ?? {}, properties: {} },
      undefined,
    );
    for (const image of seed.images ?? []) {
      this.putImageDefinition(
        gallery.id,
        image.name,
        {
          location,
          tags: image.tags ?? {},
          properties: {
            osType: image.osType ?? 'Linux',
            osState: image.osState ?? 'Generalized',
            hyperVGeneration: image.hyperVGeneration ?? 'V2',
            architecture: image.architecture ?? 'x64',
            identifier: image.identifier ?? {
              publisher: 'VMSS-Prototype-Pattern',
              offer: seed.resourceGroup,
              sku: image.name,
            },
            ...(image.features ? { features: image.features } : {}),
          },
        },
        undefined,
      );
      const imageId = `${gallery.id}/images/${image.name}`;
      for (const version of image.versions ?? []) {
        const record: VersionRecord = {
          id: `${imageId}/versions/${version.name}`,
          imageId,
          name: version.name,
          location,
          tags: { ...(version.tags ?? {}) },
          properties: {
            publishingProfile: {
              targetRegions: [
                {
                  name: location,
                  regionalReplicaCount: 1,
                  storageAccountType: version.storageAccountType ?? 'Standard_LRS',
                },
              ],
              replicaCount: 1,
              storageAccountType: version.storageAccountType ?? 'Standard_LRS',
              excludeFromLatest: version.excludeFromLatest ?? false,
              publishedDate: this.nowIso(),
            },
            storageProfile: version.sourceId ? { osDiskImage: { source: { id: version.sourceId } } } : {},
            provisioningState: version.provisioningState ?? 'Succeeded',
          },
          replication: [
            {
              region: location,
              state:
                version.provisioningState === 'Creating'
                  ? 'Replicating'
                  : version.provisioningState === 'Failed'
                    ? 'Failed'
                    : 'Completed',
              progress: version.provisioningState === 'Creating' ? 0 : 100,
            },
          ],
        };
        this.versions.set(idKey(record.id), record);
      }
    }
    return deepCopy(gallery);
  }

  getGallery(id: string): GalleryRecord | undefined {
    const record = this.galleries.get(idKey(id));
    return record ? deepCopy(record) : undefined;
  }

  listGalleries(subscriptionId: string, resourceGroup: string): GalleryRecord[] {
    const prefix = idKey(`/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/`);
    return [...this.galleries.values()]
      .filter((gallery) => idKey(gallery.id).startsWith(prefix))
      .map((g) => deepCopy(g));
  }

  getImageDefinition(id: string): ImageRecord | undefined {
    const record = this.images.get(idKey(id));
    return record ? deepCopy(record) : undefined;
  }

  listImageDefinitions(galleryId: string): ImageRecord[] {
    const key = idKey(galleryId);
    return [...this.images.values()]
      .filter((image) => idKey(image.galleryId) === key)
      .map((image) => deepCopy(image));
  }

  getImageVersionRecord(id: string): VersionRecord | undefined {
    const record = this.versions.get(idKey(id));
    if (!record) return undefined;
    const { pending: _pending, content: _content, ...rest } = record;
    return deepCopy(rest);
  }

  /** The content an image version carries (what instances built from it boot with); a copy. */
  getImageVersionContent(id: string): DiskContent | undefined {
    const content = this.versions.get(idKey(id))?.content;
    return content ? deepCopy(content) : undefined;
  }

  getImageVersion(id: string): ImageVersionInfo | undefined {
    const record = this.versions.get(idKey(id));
    return record ? versionInfo(record) : undefined;
  }

  /** Versions of one image definition, in creation order. */
  listImageVersions(imageId: string): ImageVersionInfo[] {
    const key = idKey(imageId);
    return [...this.versions.values()]
      .filter((version) => idKey(version.imageId) === key)
      .map((v) => versionInfo(v));
  }

  listImageVersionRecords(imageId: string): VersionRecord[] {
    const key = idKey(imageId);
    return [...this.versions.values()]
      .filter((version) => idKey(version.imageId) === key)
      .map(({ pending: _pending, content: _content, ...rest }) => deepCopy(rest));
  }

  // ---------------------------------------------------------------- galleries

  /** Creates or updates a gallery (Succeeded after `galleryCreateSeconds` when new). */
  putGallery(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    body: { location: string; tags: Record<string, string>; properties: JsonObject },
    onComplete: Completion | undefined,
    failure?: FailureCheck,
  ): GalleryRecord {
    const id = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/galleries/${name}`;
    const existing = this.galleries.get(idKey(id));
    if (existing) {
      existing.tags = { ...body.tags };
      existing.properties = {
        ...existing.properties,
        ...stripReadOnly(body.properties),
        provisioningState: 'Succeeded',
      };
      onComplete?.(outcomeOf(failure));
      return deepCopy(existing);
    }
    const record: GalleryRecord = {
      id,
      subscriptionId,
      resourceGroup,
      name,
      location: body.location,
      tags: { ...body.tags },
      properties: {
        ...stripReadOnly(body.properties),
        identifier: { uniqueName: `${subscriptionId}-${name.toUpperCase()}` },
        provisioningState: onComplete ? 'Creating' : 'Succeeded',
      },
    };
    this.galleries.set(idKey(id), record);
    if (onComplete) {
      this.scheduler.after(durationOf(this.latency, 'galleryCreateSeconds'), `gallery ${name}`, () => {
        const outcome = outcomeOf(failure);
        record.properties.provisioningState = outcome.status;
        onComplete(outcome);
      });
    }
    return deepCopy(record);
  }

  /**
   * Creates or updates an image definition. Immutable properties (osType, osState, hyperVGeneration,
   * identifier, architecture, features without allowUpdateImage) refuse a change like ARM does.
   */
  putImageDefinition(
    galleryId: string,
    name: string,
    body: { location: string; tags: Record<string, string>; properties: JsonObject },
    onComplete: Completion | undefined,
    failure?: FailureCheck,
  ): ImageRecord {
    const gallery = this.galleries.get(idKey(galleryId));
    if (!gallery)
      throw new ComputeError(
        404,
        'ParentResourceNotFound',
        `Can not perform requested operation on nested resource. Parent resource '${galleryId.split('/').pop() ?? ''}' not found.`,
      );
    const id = `${gallery.id}/images/${name}`;
    const existing = this.images.get(idKey(id));
    const properties = stripReadOnly(body.properties);
    if (existing) {
      const allowUpdate = properties.allowUpdateImage === true;
      for (const key of ['osType', 'osState', 'hyperVGeneration', 'identifier', 'architecture', 'features']) {
        if (key === 'features' && allowUpdate) continue;
        const before = normalizeImmutable(key, existing.properties[key]);
        const after = normalizeImmutable(key, properties[key]);
        if (after !== undefined && before !== after) {
          const message = `Changing property 'galleryImage.properties.${key}' is not allowed.`;
          throw new ComputeError(409, 'PropertyChangeNotAllowed', message, [
            { code: 'PropertyChangeNotAllowed', target: `galleryImage.properties.${key}`, message },
          ]);
        }
      }
      existing.tags = { ...body.tags };
      existing.properties = { ...existing.properties, ...properties, provisioningState: 'Succeeded' };
      onComplete?.(outcomeOf(failure));
      return deepCopy(existing);
    }
    const record: ImageRecord = {
      id,
      galleryId: gallery.id,
      name,
      location: body.location,
      tags: { ...body.tags },
      properties: {
        hyperVGeneration: 'V1',
        architecture: 'x64',
        ...properties,
        provisioningState: onComplete ? 'Creating' : 'Succeeded',
      },
    };
    this.images.set(idKey(id), record);
    if (onComplete) {
      this.scheduler.after(durationOf(this.latency, 'imageDefinitionCreateSeconds'), `image ${name}`, () => {
        const outcome = outcomeOf(failure);
        record.properties.provisioningState = outcome.status;
        onComplete(outcome);
      });
    }
    return deepCopy(record);
  }

  /**
   * Creates an image version from a snapshot or disk: `Creating` with replication `Replicating`,
   * then `Succeeded`/`Completed` after `imageVersionCreateSeconds`. With `fail`, it ends `Failed`
   * with that error instead (ZRS refusal, injected LRO failure); the failed version stays, as in Azure.
   */
  createImageVersion(
    imageId: string,
    name: string,
    body: { location: string; tags: Record<string, string>; properties: JsonObject },
    options: {
      fail?: ArmErrorBody;
      failAfterSeconds?: number;
      onComplete?: Completion;
      failure?: FailureCheck;
    },
  ): VersionRecord {
    const image = this.images.get(idKey(imageId));
    if (!image)
      throw new ComputeError(
        404,
        'ParentResourceNotFound',
        `Can not perform requested operation on nested resource. Parent resource '${imageId.split('/').slice(-3).join('/')}' not found.`,
      );
    const id = `${image.id}/versions/${name}`;
    const properties = stripReadOnly(body.properties);
    const publishing = objectAt(properties, 'publishingProfile');
    const regions = Array.isArray(publishing.targetRegions)
      ? (publishing.targetRegions as unknown[]).filter(isObject).map((region) => String(region.name))
      : [body.location];
    if (!Array.isArray(publishing.targetRegions)) {
      publishing.targetRegions = [
        {
          name: body.location,
          regionalReplicaCount: publishing.replicaCount ?? 1,
          storageAccountType: publishing.storageAccountType ?? 'Standard_LRS',
        },
      ];
    }
    publishing.storageAccountType ??= 'Standard_LRS';
    publishing.replicaCount ??= 1;
    publishing.excludeFromLatest ??= false;
    publishing.publishedDate = this.nowIso();
    properties.provisioningState = 'Creating';
    const record: VersionRecord = {
      id,
      imageId: image.id,
      name,
      location: body.location,
      tags: { ...body.tags },
      properties,
      replication: regions.map((region) => ({ region, state: 'Replicating', progress: 0 })),
      startedMs: this.clock.nowMs(),
    };
    const source = sourceIdOf(properties);
    const sourceContent = source
      ? (this.snapshots.get(idKey(source))?.content ?? this.disks.get(idKey(source))?.content)
      : undefined;
    if (sourceContent) record.content = deepCopy(sourceContent);
    this.versions.set(idKey(id), record);
    const seconds = options.fail
      ? (options.failAfterSeconds ?? 0)
      : durationOf(this.latency, 'imageVersionCreateSeconds');
    record.durationSeconds = seconds;
    const pending: PendingTransition = { kind: 'imageVersion', cancel: () => undefined };
    if (options.onComplete) pending.onComplete = options.onComplete;
    pending.cancel = this.scheduler.after(seconds, `image version ${name}`, () => {
      if (record.pending !== pending) return;
      record.pending = undefined;
      const error = options.fail ?? options.failure?.();
      if (error) {
        record.properties.provisioningState = 'Failed';
        record.replication = record.replication.map((status) => ({
          ...status,
          state: 'Failed',
          details: error.message,
        }));
        options.onComplete?.({ status: 'Failed', error });
        return;
      }
      record.properties.provisioningState = 'Succeeded';
      record.replication = record.replication.map((status) => ({
        ...status,
        state: 'Completed',
        progress: 100,
      }));
      options.onComplete?.({ status: 'Succeeded' });
    });
    record.pending = pending;
    return deepCopy({ ...record, pending: undefined });
  }

  /** Replication progress of a version in `Creating`, proportional to elapsed simulated time. */
  replicationProgress(id: string): ReplicationStatus[] {
    const record = this.versions.get(idKey(id));
    if (!record) return [];
    if (record.properties.provisioningState !== 'Creating') return deepCopy(record.replication);
    const published = record.startedMs ?? this.clock.nowMs();
    const elapsed = (this.clock.nowMs() - published) / 1000;
    const progress = Math.min(
      99,
      Math.floor(
        (elapsed / Math.max(1, record.durationSeconds ?? this.latency.imageVersionCreateSeconds)) * 100,
      ),
    );
    return record.replication.map((status) => ({ ...status, progress }));
  }

  /** Applies an updatable change to a version (publishingProfile.excludeFromLatest, endOfLifeDate, tags). */
  updateImageVersion(
    id: string,
    change: { properties: JsonObject; tags?: Record<string, string> },
  ): VersionRecord {
    const record = this.versions.get(idKey(id));
    if (!record) throw new ComputeError(404, 'ResourceNotFound', `The Resource '${id}' was not found.`);
    record.properties = change.properties;
    if (change.tags) record.tags = { ...change.tags };
    return deepCopy({ ...record, pending: undefined });
  }

  /**
   * What an outsider does when it deletes an image definition from under a run (its versions first, as ARM
   * requires, then the definition): everything gone at once, a pending creation preempted. False when absent.
   */
  deleteImageDefinitionWithVersions(id: string): boolean {
    if (!this.images.has(idKey(id))) return false;
    for (const [key, version] of [...this.versions]) {
      if (idKey(version.imageId) !== idKey(id)) continue;
      this.preempt(version.pending, 'delete');
      this.versions.delete(key);
    }
    this.images.delete(idKey(id));
    return true;
  }

  /** Deletes a version after `imageVersionDeleteSeconds` (a pending creation is preempted); on `failure` it stays. */
  deleteImageVersion(id: string, onComplete?: Completion, failure?: FailureCheck): boolean {
    const record = this.versions.get(idKey(id));
    if (!record) return false;
    this.preempt(record.pending, 'delete');
    record.pending = undefined;
    const before = record.properties.provisioningState;
    record.properties.provisioningState = 'Deleting';
    this.scheduler.after(
      durationOf(this.latency, 'imageVersionDeleteSeconds'),
      `delete image version ${record.name}`,
      () => {
        const error = failure?.();
        if (error) {
          record.properties.provisioningState = before === 'Creating' ? 'Failed' : before;
          onComplete?.({ status: 'Failed', error });
          return;
        }
        this.versions.delete(idKey(id));
        onComplete?.({ status: 'Succeeded' });
      },
    );
    return true;
  }
}

function normalizeImmutable(key: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (key === 'features' && Array.isArray(value)) {
    const features = value
      .filter(isObject)
      .map((feature) => `${String(feature.name).toLowerCase()}=${String(feature.value).toLowerCase()}`)
      .sort();
    return features.join(',');
  }
  if (typeof value === 'string') return value.toLowerCase();
  if (isObject(value)) {
    return JSON.stringify(
      Object.fromEntries(
        Object.entries(value)
          .map(([k, v]) => [k, String(v).toLowerCase()])
          .sort(),
      ),
    );
  }
  return JSON.stringify(value);
}

function sourceIdOf(properties: JsonObject): string | undefined {
  const storage = isObject(properties.storageProfile) ? properties.storageProfile : {};
  const osDiskImage = isObject(storage.osDiskImage) ? storage.osDiskImage : {};
  const fromOsDisk = isObject(osDiskImage.source) ? osDiskImage.source.id : undefined;
  const fromSource = isObject(storage.source) ? storage.source.id : undefined;
  return typeof fromOsDisk === 'string'
    ? fromOsDisk
    : typeof fromSource === 'string'
      ? fromSource
      : undefined;
}
