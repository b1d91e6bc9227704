/** The fake scale sets port: the model (image, tags, capacity) and its extensions, on the estate's clock. */
import type { ScaleSetExtension } from '../../../domain/compute.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import { describeScaleSet } from '../../../domain/resource-id.js';
import type { ScaleSet } from '../../../domain/scale-set.js';
import type { ComputeMethod } from '../../compute/index.js';
import type {
  ScaleSetChange,
  ScaleSetImageUpdate,
  ScaleSetsPort,
  ScaleSetWritten,
} from '../../compute/scale-sets.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';

export class FakeScaleSets implements ScaleSetsPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  get(ref: ScaleSetRef): Promise<ScaleSet> {
    return this.log.call('scaleSets.get', [ref], () => {
      const record = this.estate.scaleSetRecord(ref, `reading scale set ${describeScaleSet(ref)}`);
      this.estate.settleScaleSet(record);
      return {
        ...record.scaleSet,
        etag: `"${record.etag}"`,
        capacity: this.estate.instancesOf(ref).length,
        // The model carries its extensions, as ARM's scale set GET does.
        extensions: record.extensions.map((extension) => ({ ...extension })),
      };
    });
  }

  requestImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void> {
    return this.log.call('scaleSets.requestImageUpdate', [ref, update], () => {
      const action = `requesting image update of scale set ${describeScaleSet(ref)}`;
      const record = this.estate.scaleSetRecord(ref, action);
      this.estate.settleScaleSet(record);
      this.estate.checkEtag(record, update.ifMatch, action);
      record.etag += 1;
      record.scaleSet = {
        ...record.scaleSet,
        provisioningState: 'Updating',
        ...(update.tags === undefined ? {} : { tags: { ...update.tags } }),
      };
      if (update.customDataBase64 !== undefined) record.customDataBase64 = update.customDataBase64;
      record.pendingImage = {
        to: { id: update.imageId },
        at: this.estate.now() + this.estate.timings.scaleSetUpdate,
      };
    });
  }

  requestChange(ref: ScaleSetRef, change: ScaleSetChange): Promise<ScaleSetWritten> {
    return this.log.call('scaleSets.requestChange', [ref, change], () => {
      const action = `requesting a change of scale set ${describeScaleSet(ref)}`;
      const record = this.estate.scaleSetRecord(ref, action);
      this.estate.settleScaleSet(record);
      this.estate.checkEtag(record, change.ifMatch, action);
      record.etag += 1;
      if (change.tags !== undefined) record.scaleSet = { ...record.scaleSet, tags: { ...change.tags } };
      if (change.imageReference !== undefined) {
        const fields: Record<string, string> = { ...record.scaleSet.imageReferenceFields };
        for (const [key, value] of Object.entries(change.imageReference)) {
          if (value === null) delete fields[key];
          else fields[key] = value;
        }
        record.scaleSet = { ...record.scaleSet, provisioningState: 'Updating' };
        record.pendingImage = { to: fields, at: this.estate.now() + this.estate.timings.scaleSetUpdate };
      }
      if (change.capacity !== undefined) {
        const current = this.estate.instancesOf(ref).length;
        for (let added = current; added < change.capacity; added++) this.estate.createInstance(ref, record);
      }
      return { etag: `"${record.etag}"` };
    });
  }

  listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]> {
    return this.log.call('scaleSets.listExtensions', [ref], () => {
      const record = this.estate.scaleSetRecord(
        ref,
        `listing extensions of scale set ${describeScaleSet(ref)}`,
      );
      this.estate.settleScaleSet(record);
      return record.extensions.map((extension) => ({ ...extension }));
    });
  }

  requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void> {
    return this.log.call('scaleSets.requestExtensionDeletion', [ref, extensionName], () => {
      const record = this.estate.scaleSetRecord(ref, `deleting extension ${extensionName}`);
      this.estate.settleScaleSet(record);
      const index = record.extensions.findIndex((extension) => extension.name === extensionName);
      const extension = record.extensions[index];
      if (extension === undefined || extension.provisioningState === 'Deleting') return;
      record.extensions[index] = { ...extension, provisioningState: 'Deleting' };
      record.pendingExtensions.set(extensionName, this.estate.now() + this.estate.timings.extensionDeletion);
    });
  }
}
