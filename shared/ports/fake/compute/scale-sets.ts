/** The fake scale sets port: the model (image, tags, capacity) and its extensions, on the estate's clock. */
import { carriesOwnerTags, type ScaleSetModelDocument } from '../../../domain/canary-scale-set.js';
import type { ScaleSetExtension } from '../../../domain/compute.js';
import { TerminalError } from '../../../domain/errors.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import { describeScaleSet, scaleSetKey, scaleSetResourceId } from '../../../domain/resource-id.js';
import type { ScaleSet } from '../../../domain/scale-set.js';
import type { ComputeMethod } from '../../compute/index.js';
import type {
  ScaleSetChange,
  ScaleSetCreated,
  ScaleSetCreation,
  ScaleSetImageUpdate,
  ScaleSetsPort,
  ScaleSetWritten,
} from '../../compute/scale-sets.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate, ScaleSetRecord } from './estate.js';

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

  list(subscriptionId: string, resourceGroup: string): Promise<ScaleSet[]> {
    return this.log.call('scaleSets.list', [subscriptionId, resourceGroup], () =>
      [...this.estate.scaleSets.values()]
        .filter(
          (record) =>
            record.scaleSet.subscriptionId === subscriptionId &&
            record.scaleSet.resourceGroup.toLowerCase() === resourceGroup.toLowerCase(),
        )
        .map((record) => {
          this.estate.settleScaleSet(record);
          return {
            ...record.scaleSet,
            etag: `"${record.etag}"`,
            capacity: this.estate.instancesOf(record.scaleSet).length,
          };
        }),
    );
  }

  /** The model as ARM returns it, from the record: image, tags, capacity, extensions (customData never). */
  readModel(ref: ScaleSetRef): Promise<ScaleSetModelDocument> {
    return this.log.call('scaleSets.readModel', [ref], () => {
      const record = this.estate.scaleSetRecord(ref, `reading the model of ${describeScaleSet(ref)}`);
      this.estate.settleScaleSet(record);
      const { scaleSet } = record;
      return {
        id: scaleSet.id,
        name: scaleSet.name,
        location: scaleSet.location,
        sku: {
          ...(scaleSet.vmSize === undefined ? {} : { name: scaleSet.vmSize }),
          capacity: this.estate.instancesOf(ref).length,
        },
        zones: [...scaleSet.zones],
        tags: { ...scaleSet.tags },
        orchestrationMode: scaleSet.orchestrationMode,
        upgradePolicy: { mode: scaleSet.upgradePolicyMode ?? 'Manual' },
        virtualMachineProfile: {
          osProfile: { computerNamePrefix: scaleSet.name, adminUsername: 'azureuser' },
          storageProfile: { imageReference: { ...scaleSet.imageReferenceFields } },
          networkProfile: { networkInterfaceConfigurations: [] },
          extensionProfile: {
            extensions: record.extensions.map((extension) => ({
              name: extension.name,
              publisher: extension.publisher,
              typePropertiesType: extension.type,
            })),
          },
        },
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

  /** Creates the scale set from the model at once (its instances start on the estate's clock). */
  requestCreation(ref: ScaleSetRef, creation: ScaleSetCreation): Promise<ScaleSetCreated> {
    return this.log.call('scaleSets.requestCreation', [ref, creation], () => {
      const action = `requesting creation of scale set ${describeScaleSet(ref)}`;
      const existing = this.estate.scaleSets.get(scaleSetKey(ref));
      if (existing !== undefined) {
        if (!carriesOwnerTags(existing.scaleSet.tags, creation.ownerTags)) {
          throw new TerminalError(
            'ScaleSetNameTaken',
            `${action}: a scale set of this name is not this run's`,
          );
        }
        return 'found';
      }
      const { model } = creation;
      const profile = model.virtualMachineProfile ?? {};
      const image = profile.storageProfile?.['imageReference'] as Record<string, string> | undefined;
      const mode = model['orchestrationMode'] === 'Flexible' ? 'Flexible' : 'Uniform';
      const record = {
        scaleSet: {
          ...ref,
          id: scaleSetResourceId(ref),
          location: model.location,
          orchestrationMode: mode,
          osType: 'Linux',
          upgradePolicyMode: 'Manual',
          automaticOsUpgrade: false,
          ephemeralOsDisk: false,
          zones: [...(model.zones ?? [])],
          tags: { ...model.tags },
          provisioningState: 'Succeeded',
          ...(image === undefined ? {} : { imageReferenceFields: { ...image } }),
          ...(model.sku?.name === undefined ? {} : { vmSize: model.sku.name }),
        },
        extensions: (profile.extensionProfile?.extensions ?? []).map((extension) => ({
          name: extension.name ?? '',
          publisher: extension.publisher ?? '',
          type: extension.typePropertiesType ?? '',
          provisioningState: 'Succeeded',
        })),
        pendingExtensions: new Map<string, number>(),
        ...(typeof profile.osProfile?.['customData'] === 'string'
          ? { customDataBase64: profile.osProfile['customData'] }
          : {}),
        etag: 1,
        nextInstance: 0,
      } satisfies ScaleSetRecord;
      this.estate.scaleSets.set(scaleSetKey(ref), record);
      for (let added = 0; added < (model.sku?.capacity ?? 0); added++)
        this.estate.createInstance(ref, record);
      return 'requested';
    });
  }

  /** Forgets the scale set and its instances at once; a missing one is done. */
  requestDeletion(ref: ScaleSetRef): Promise<void> {
    return this.log.call('scaleSets.requestDeletion', [ref], () => {
      const prefix = `${scaleSetKey(ref)}/`;
      for (const key of [...this.estate.instances.keys()]) {
        if (key.startsWith(prefix)) this.estate.instances.delete(key);
      }
      this.estate.scaleSets.delete(scaleSetKey(ref));
    });
  }
}
