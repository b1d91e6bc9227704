/**
 * The fake image versions port: a version replicates for its time and ends as `nextOutcome` says; ZRS is
 * refused in the regions the fake was told have no zones.
 */
import type { ImageDefinitionRef, ImageVersion, ImageVersionRef } from '../../../domain/compute.js';
import { NotFoundError, TerminalError } from '../../../domain/errors.js';
import { galleryImageResourceId } from '../../../domain/resource-id.js';
import type {
  ImageVersionRequest,
  ImageVersionsPort,
  ImageVersionVisibility,
} from '../../compute/image-versions.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';
import { normaliseRegion, refuseIfDeleting, versionKey } from './keys.js';

export class FakeImageVersions implements ImageVersionsPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  list(ref: ImageDefinitionRef): Promise<ImageVersion[]> {
    return this.log.call('imageVersions.list', [ref], () => {
      this.estate.definition(ref, 'listing image versions');
      return this.estate.versionsNow(ref);
    });
  }

  get(ref: ImageVersionRef): Promise<ImageVersion> {
    return this.log.call('imageVersions.get', [ref], () => {
      const value = this.estate.settleKey(this.estate.versions, versionKey(ref));
      if (value === undefined) {
        throw new NotFoundError(
          'ResourceNotFound',
          `reading image version ${ref.imageName}/${ref.versionName}: not found`,
        );
      }
      return value;
    });
  }

  request(request: ImageVersionRequest): Promise<void> {
    return this.log.call('imageVersions.request', [request], () => {
      const { ref } = request;
      const action = `requesting image version ${ref.imageName}/${ref.versionName}`;
      this.estate.definition(ref, action);
      if (
        request.storageAccountType === 'Standard_ZRS' &&
        this.estate.noZrs.has(normaliseRegion(request.location))
      ) {
        throw new TerminalError(
          'ZrsUnsupported',
          `${action}: zone-redundant storage (Standard_ZRS) is not supported in this region`,
        );
      }
      const key = versionKey(ref);
      const existing = this.estate.settleKey(this.estate.versions, key);
      if (existing !== undefined) {
        refuseIfDeleting(existing.provisioningState, action, 'image version');
        if (existing.sourceId?.toLowerCase() !== request.sourceId.toLowerCase()) {
          throw new TerminalError(
            'ImageVersionNameTaken',
            `${action}: the version exists with another source`,
          );
        }
        return;
      }
      const outcome = this.estate.outcomes.imageVersion.shift() ?? 'Succeeded';
      const value: ImageVersion = {
        id: `${galleryImageResourceId(ref)}/versions/${ref.versionName}`,
        ref: { ...ref },
        location: request.location,
        provisioningState: 'Creating',
        excludeFromLatest: request.excludeFromLatest,
        storageAccountType: request.storageAccountType,
        replicationState: 'Replicating',
        sourceId: request.sourceId,
        publishedAt: new Date(this.estate.now()).toISOString(),
        tags: { ...request.tags },
      };
      this.estate.versions.set(key, {
        value,
        pending: {
          to: {
            ...value,
            provisioningState: outcome,
            replicationState: outcome === 'Succeeded' ? 'Completed' : 'Failed',
          },
          at: this.estate.now() + this.estate.timings.imageVersion,
        },
      });
    });
  }

  requestExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags: Readonly<Record<string, string>> = {},
    // The fake holds the version itself: what the caller knows of its tags changes nothing here.
    _knownTags?: Readonly<Record<string, string>>,
  ): Promise<ImageVersionVisibility | undefined> {
    return this.log.call('imageVersions.requestExclusion', [ref, excludeFromLatest, addTags], () => {
      const key = versionKey(ref);
      const existing = this.estate.settleKey(this.estate.versions, key);
      const record = this.estate.versions.get(key);
      if (existing === undefined || record === undefined) {
        throw new NotFoundError('ResourceNotFound', `updating image version ${ref.versionName}: not found`);
      }
      if (existing.excludeFromLatest === excludeFromLatest)
        return { provisioningState: existing.provisioningState, excludeFromLatest };
      const tags = { ...existing.tags, ...addTags };
      // Applied after `timings.imageVersionUpdate` (0: at once, answered Succeeded as the simulator does).
      const to: ImageVersion = { ...existing, tags, excludeFromLatest, provisioningState: 'Succeeded' };
      if (this.estate.timings.imageVersionUpdate <= 0) {
        record.value = to;
        record.pending = undefined;
        return { provisioningState: 'Succeeded', excludeFromLatest };
      }
      record.value = { ...existing, tags, provisioningState: 'Updating' };
      record.pending = { to, at: this.estate.now() + this.estate.timings.imageVersionUpdate };
      return { provisioningState: 'Updating', excludeFromLatest };
    });
  }

  requestTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void> {
    return this.log.call('imageVersions.requestTags', [ref, tags], () => {
      const key = versionKey(ref);
      const existing = this.estate.settleKey(this.estate.versions, key);
      const record = this.estate.versions.get(key);
      if (existing === undefined || record === undefined) {
        throw new NotFoundError('ResourceNotFound', `tagging image version ${ref.versionName}: not found`);
      }
      record.value = { ...existing, tags: { ...tags } };
      if (record.pending !== undefined && record.pending.to !== 'gone') {
        record.pending = { ...record.pending, to: { ...record.pending.to, tags: { ...tags } } };
      }
    });
  }

  requestDeletion(ref: ImageVersionRef): Promise<void> {
    return this.log.call('imageVersions.requestDeletion', [ref], () => {
      const key = versionKey(ref);
      const existing = this.estate.settleKey(this.estate.versions, key);
      const record = this.estate.versions.get(key);
      if (existing === undefined || record === undefined || existing.provisioningState === 'Deleting') return;
      record.value = { ...existing, provisioningState: 'Deleting' };
      record.pending = { to: 'gone', at: this.estate.now() + this.estate.timings.imageVersionDeletion };
    });
  }
}
