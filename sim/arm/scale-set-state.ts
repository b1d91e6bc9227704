/**
 * Scale sets of the simulated compute state: seeding, creation by PUT, the stored model (replaced by
 * PUT/PATCH with a simulated-time update), capacity changes, and extension deletes.
 */
import { createHash } from 'node:crypto';

import { durationOf } from '../contracts.js';
import {
  ComputeCore,
  type ComputeShared,
  etagOf,
  type PendingTransition,
  type ScaleSetRecord,
} from './compute-core.js';
import {
  deepCopy,
  deterministicUuid,
  idKey,
  isObject,
  objectAt,
  parseResourceId,
  textOr,
} from './compute-json.js';
import type {
  Completion,
  FailureCheck,
  HyperVGeneration,
  JsonObject,
  ScaleSetInfo,
  ScaleSetSeed,
} from './compute-types.js';
import type { InstanceState } from './instance-state.js';

export class ScaleSetState extends ComputeCore {
  constructor(
    shared: ComputeShared,
    private readonly instanceState: InstanceState,
  ) {
    super(shared);
  }

  /** Creates a scale set with its instances (running unless seeded otherwise) and their OS disks. No events. */
  addScaleSet(seed: ScaleSetSeed): ScaleSetInfo {
    const subscriptionId = seed.subscriptionId ?? this.defaultSubscriptionId;
    const id = `/subscriptions/${subscriptionId}/resourceGroups/${seed.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${seed.name}`;
    if (this.scaleSets.has(idKey(id))) throw new Error(`adding scale set ${seed.name}: it exists already`);
    const mode = seed.orchestrationMode ?? 'Uniform';
    const ephemeral = seed.ephemeralOsDisk === true ? 'CacheDisk' : seed.ephemeralOsDisk || undefined;
    const osDisk: JsonObject = {
      createOption: 'FromImage',
      caching: ephemeral ? 'ReadOnly' : 'ReadWrite',
      osType: seed.osType ?? 'Linux',
      diskSizeGB: seed.osDiskSizeGB ?? 128,
      managedDisk: { storageAccountType: ephemeral ? 'Standard_LRS' : 'Premium_LRS' },
    };
    if (ephemeral) osDisk.diffDiskSettings = { option: 'Local', placement: ephemeral };
    const extensions = (seed.extensions ?? []).map((extension) => ({
      name: extension.name,
      properties: {
        publisher: extension.publisher,
        type: extension.type,
        typeHandlerVersion: extension.typeHandlerVersion ?? '2.1',
        autoUpgradeMinorVersion: true,
        settings: extension.settings ?? {},
        ...(extension.protectedSettings === undefined
          ? {}
          : { protectedSettings: extension.protectedSettings }),
        provisioningState: 'Succeeded',
      },
    }));
    const prefix = seed.computerNamePrefix ?? (mode === 'Uniform' ? `${seed.name}` : seed.name.slice(0, 9));
    const properties: JsonObject = {
      orchestrationMode: mode,
      singlePlacementGroup: mode === 'Uniform',
      upgradePolicy: {
        mode: seed.upgradePolicy?.mode ?? 'Manual',
        automaticOSUpgradePolicy: {
          enableAutomaticOSUpgrade: seed.upgradePolicy?.enableAutomaticOSUpgrade ?? false,
        },
      },
      virtualMachineProfile: {
        osProfile: {
          computerNamePrefix: prefix,
          adminUsername: seed.adminUsername ?? 'azureuser',
          ...(seed.customData === undefined ? {} : { customData: seed.customData }),
          linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [] } },
        },
        storageProfile: {
          imageReference: deepCopy(
            seed.imageReference ?? {
              publisher: 'Canonical',
              offer: 'ubuntu-24_04-lts',
              sku: 'server',
              version: 'latest',
            },
          ),
          osDisk,
        },
        networkProfile: {
          networkInterfaceConfigurations: [
            {
              name: `${seed.name}-nic`,
              properties: {
                primary: true,
                ipConfigurations: [
                  {
                    name: 'ipconfig1',
                    properties: {
                      subnet: {
                        id: `/subscriptions/${subscriptionId}/resourceGroups/${seed.resourceGroup}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
                      },
                    },
                  },
                ],
              },
            },
          ],
        },
        extensionProfile: { extensions },
        ...(seed.securityType && seed.securityType !== 'Standard'
          ? {
              securityProfile: {
                securityType: seed.securityType,
                uefiSettings: { secureBootEnabled: true, vTpmEnabled: true },
              },
            }
          : {}),
      },
      provisioningState: 'Succeeded',
      uniqueId: deterministicUuid(`vmss:${idKey(id)}`),
      timeCreated: this.nowIso(),
    };
    const count = typeof seed.instances === 'number' ? seed.instances : (seed.instances?.length ?? 0);
    const record: ScaleSetRecord = {
      id,
      subscriptionId,
      resourceGroup: seed.resourceGroup,
      name: seed.name,
      location: seed.location ?? this.defaultLocation,
      tags: { ...(seed.tags ?? {}) },
      sku: { name: seed.skuName ?? 'Standard_D4s_v5', tier: 'Standard', capacity: 0 },
      properties,
      nextInstanceNumber: 0,
      modelVersion: 1,
      etag: 1,
      hyperVGeneration: seed.hyperVGeneration ?? 'V2',
      architecture: seed.architecture ?? 'x64',
      bootstrapOverrides: new Map(
        (seed.extensions ?? [])
          .filter((extension) => extension.bootstrap !== undefined)
          .map((extension) => [extension.name.toLowerCase(), extension.bootstrap === true]),
      ),
      uniqueId: deterministicUuid(`vmss:${idKey(id)}`),
      timeCreated: this.nowIso(),
    };
    if (seed.zones) record.zones = [...seed.zones];
    this.scaleSets.set(idKey(id), record);
    for (let index = 0; index < count; index++) {
      const instanceSeed = Array.isArray(seed.instances) ? seed.instances[index] : undefined;
      this.instanceState.createInstanceRecord(record, instanceSeed?.powerState ?? 'running', instanceSeed);
    }
    return this.scaleSetInfo(record);
  }

  /**
   * ARM's PUT of a scale set that does not exist yet: `Creating` at once, with `capacity` instances built
   * from its model (each `instance-created`, so the world can join them), then `Succeeded` after
   * `scaleSetUpdateSeconds`. The model is stored as sent, customData included (never rendered). A
   * `failure` ends the operation Failed and leaves the scale set `Failed`, as a failed create in Azure.
   */
  createScaleSet(
    id: string,
    input: {
      location: string;
      tags: Record<string, string>;
      skuName: string;
      capacity: number;
      zones?: string[];
      properties: JsonObject;
      hyperVGeneration: HyperVGeneration;
    },
    onComplete?: Completion,
    failure?: FailureCheck,
  ): ScaleSetInfo {
    const parsed = parseResourceId(id);
    const name = parsed?.segments[1];
    if (!parsed || name === undefined) throw new Error(`creating scale set ${id}: not a scale set id`);
    if (this.scaleSets.has(idKey(id))) throw new Error(`creating scale set ${name}: it exists already`);
    const record: ScaleSetRecord = {
      id,
      subscriptionId: parsed.subscriptionId,
      resourceGroup: parsed.resourceGroup,
      name,
      location: input.location,
      tags: { ...input.tags },
      sku: { name: input.skuName, tier: 'Standard', capacity: 0 },
      properties: {
        orchestrationMode: 'Uniform',
        ...deepCopy(input.properties),
        provisioningState: 'Creating',
        uniqueId: deterministicUuid(`vmss:${idKey(id)}`),
        timeCreated: this.nowIso(),
      },
      nextInstanceNumber: 0,
      modelVersion: 1,
      etag: 1,
      hyperVGeneration: input.hyperVGeneration,
      architecture: 'x64',
      bootstrapOverrides: new Map(),
      uniqueId: deterministicUuid(`vmss:${idKey(id)}`),
      timeCreated: this.nowIso(),
    };
    if (input.zones && input.zones.length > 0) record.zones = [...input.zones];
    this.scaleSets.set(idKey(id), record);
    const pending: PendingTransition = { kind: 'create', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(
      durationOf(this.latency, 'scaleSetUpdateSeconds'),
      `create ${record.name}`,
      () => {
        if (record.pending !== pending) return;
        record.pending = undefined;
        const error = failure?.();
        record.properties.provisioningState = error ? 'Failed' : 'Succeeded';
        onComplete?.(error ? { status: 'Failed', error } : { status: 'Succeeded' });
      },
    );
    record.pending = pending;
    if (input.capacity > 0) this.instanceState.scaleOut(id, input.capacity);
    return this.scaleSetInfo(record);
  }

  getScaleSet(id: string): ScaleSetInfo | undefined {
    const record = this.scaleSets.get(idKey(id));
    return record ? this.scaleSetInfo(record) : undefined;
  }

  listScaleSets(): ScaleSetInfo[] {
    return [...this.scaleSets.values()].map((record) => this.scaleSetInfo(record));
  }

  /** The full stored model (ARM `properties`, customData included), a deep copy. */
  getScaleSetModel(id: string): JsonObject | undefined {
    const record = this.scaleSets.get(idKey(id));
    return record ? deepCopy(record.properties) : undefined;
  }

  // ---------------------------------------------------------------- scale set model (used by the ARM handler)

  /**
   * Replaces the stored model after a PUT/PATCH: `Updating` for `scaleSetUpdateSeconds`, then
   * `Succeeded`. A changed `virtualMachineProfile` or VM size (`skuName`) bumps the model version, so existing instances
   * report `latestModelApplied: false`. A larger `capacity` scales out. A `failure` ends the
   * operation Failed but keeps the new model (ARM has reported failure for updates that worked).
   */
  replaceScaleSet(
    id: string,
    next: { properties: JsonObject; tags: Record<string, string>; capacity?: number; skuName?: string },
    onComplete?: Completion,
    failure?: FailureCheck,
  ): void {
    const record = this.requireScaleSet(id);
    const sizeChanged = next.skuName !== undefined && next.skuName !== record.sku.name;
    if (next.skuName !== undefined) record.sku.name = next.skuName;
    const profileChanged =
      sizeChanged ||
      JSON.stringify(record.properties.virtualMachineProfile) !==
        JSON.stringify(next.properties.virtualMachineProfile);
    record.properties = deepCopy(next.properties);
    record.tags = { ...next.tags };
    if (profileChanged) record.modelVersion += 1;
    record.etag += 1;
    this.preempt(record.pending, 'update');
    record.properties.provisioningState = 'Updating';
    const pending: PendingTransition = { kind: 'update', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(
      durationOf(this.latency, 'scaleSetUpdateSeconds'),
      `update ${record.name}`,
      () => {
        if (record.pending !== pending) return;
        record.pending = undefined;
        record.properties.provisioningState = 'Succeeded';
        const error = failure?.();
        onComplete?.(error ? { status: 'Failed', error } : { status: 'Succeeded' });
      },
    );
    record.pending = pending;
    if (next.capacity !== undefined && next.capacity > record.sku.capacity) {
      this.instanceState.scaleOut(id, next.capacity - record.sku.capacity);
    } else if (next.capacity !== undefined && next.capacity < record.sku.capacity) {
      const surplus = this.instanceState.listInstances(id).slice(next.capacity);
      for (const instance of surplus) this.instanceState.deleteInstance(instance.id);
    }
    this.emit({ type: 'scale-set-model-changed', scaleSet: this.scaleSetInfo(record) });
  }

  /**
   * ARM's DELETE of a scale set: `Deleting` at once, then after `instanceStopSeconds` (its instances are
   * shut down and removed together) the instances (each `instance-deleted`, so their nodes go) and the
   * scale set. A `failure` leaves the scale set and its instances, `Failed`, as a failed delete in Azure.
   */
  requestScaleSetDelete(id: string, onComplete?: Completion, failure?: FailureCheck): void {
    const record = this.requireScaleSet(id);
    this.preempt(record.pending, 'delete');
    record.properties.provisioningState = 'Deleting';
    const pending: PendingTransition = { kind: 'delete', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(
      durationOf(this.latency, 'instanceStopSeconds'),
      `delete ${record.name}`,
      () => {
        if (record.pending !== pending) return;
        record.pending = undefined;
        const error = failure?.();
        if (error) {
          record.properties.provisioningState = 'Failed';
          onComplete?.({ status: 'Failed', error });
          return;
        }
        if (this.scaleSets.get(idKey(id)) === record) this.deleteScaleSet(id);
        onComplete?.({ status: 'Succeeded' });
      },
    );
    record.pending = pending;
  }

  /** Deletes a scale set: its instances first (each `instance-deleted`), then the scale set. */
  deleteScaleSet(id: string): void {
    const record = this.requireScaleSet(id);
    for (const instance of this.instanceState.listInstances(id))
      this.instanceState.deleteInstance(instance.id);
    const pending = record.pending;
    record.pending = undefined;
    this.preempt(pending, 'delete');
    this.scaleSets.delete(idKey(id));
  }

  /** Raw ARM view of a scale set for rendering: sku, zones, tags, properties (customData included). */
  scaleSetResource(id: string):
    | {
        id: string;
        name: string;
        location: string;
        tags: Record<string, string>;
        sku: JsonObject;
        zones?: string[];
        properties: JsonObject;
        etag: string;
      }
    | undefined {
    const record = this.scaleSets.get(idKey(id));
    if (!record) return undefined;
    return deepCopy({
      id: record.id,
      name: record.name,
      location: record.location,
      tags: record.tags,
      sku: record.sku,
      ...(record.zones ? { zones: record.zones } : {}),
      properties: record.properties,
      etag: etagOf(record),
    });
  }

  listScaleSetIds(subscriptionId: string, resourceGroup: string): string[] {
    const prefix = idKey(`/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/`);
    return [...this.scaleSets.values()].filter((s) => idKey(s.id).startsWith(prefix)).map((s) => s.id);
  }

  /**
   * Deletes a scale-set extension from the model after a deterministic 13–67 s (per the latency
   * profile). On `failure` the extension stays, with provisioningState Failed.
   */
  deleteExtension(scaleSetId: string, name: string, onComplete?: Completion, failure?: FailureCheck): void {
    const record = this.requireScaleSet(scaleSetId);
    const extensions = this.extensionArray(record);
    const extension = extensions.find(
      (candidate) => textOr(candidate.name, '').toLowerCase() === name.toLowerCase(),
    );
    if (!extension) {
      onComplete?.({ status: 'Succeeded' });
      return;
    }
    const properties = objectAt(extension, 'properties');
    properties.provisioningState = 'Deleting';
    this.scheduler.after(this.extensionDeleteSeconds(name), `delete extension ${name}`, () => {
      const error = failure?.();
      if (error) {
        // The extension stays in the model, marked Failed, as after a failed delete in Azure.
        properties.provisioningState = 'Failed';
        onComplete?.({ status: 'Failed', error });
        return;
      }
      // Splice the model's own array: a PUT may have replaced it since, then there is nothing to remove.
      const profile = objectAt(record.properties, 'virtualMachineProfile', 'extensionProfile');
      const current: unknown[] = Array.isArray(profile.extensions) ? (profile.extensions as unknown[]) : [];
      const index = current.findIndex(
        (candidate) => isObject(candidate) && textOr(candidate.name, '').toLowerCase() === name.toLowerCase(),
      );
      if (index >= 0) {
        current.splice(index, 1);
        record.modelVersion += 1;
        record.etag += 1;
        this.emit({ type: 'scale-set-model-changed', scaleSet: this.scaleSetInfo(record) });
      }
      onComplete?.({ status: 'Succeeded' });
    });
  }

  /** Deterministic extension delete time within the profile's bounds, keyed by the extension name. */
  extensionDeleteSeconds(name: string): number {
    const [low, high] = this.latency.extensionDeleteSeconds;
    const hash = createHash('sha256').update(name.toLowerCase()).digest();
    return low + (hash.readUInt32BE(0) % (high - low + 1));
  }
}
