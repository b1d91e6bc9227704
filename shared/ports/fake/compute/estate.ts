/**
 * The simulated estate behind the fake compute ports (index.ts): scale sets with their model and
 * extensions, instances, snapshots, disks, the gallery and its versions, Run Commands. One estate, one
 * clock: a state change that is due is applied when a resource is next looked at (`settle*`), whichever
 * port looks. Its members are the fakes' shared state, not a port.
 */
import type {
  ImageDefinition,
  ImageDefinitionRef,
  ImageVersion,
  ManagedDisk,
  PowerState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
} from '../../../domain/compute.js';
import { CONCURRENT_CHANGE, NotFoundError, TerminalError } from '../../../domain/errors.js';
import { definedOnly } from '../../../domain/optional.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import {
  describeScaleSet,
  galleryImageResourceId,
  sameResourceId,
  scaleSetInstanceResourceId,
  scaleSetKey,
} from '../../../domain/resource-id.js';
import type { ScaleSet } from '../../../domain/scale-set.js';
import {
  compareNames,
  definitionKey,
  diskKeyOfId,
  fieldsOfReference,
  instanceKey,
  lastSegment,
  normaliseRegion,
  referenceOfFields,
} from './keys.js';

/** How long each long-running operation takes on the fake's clock (ms). */
export interface FakeComputeTimings {
  readonly powerOff: number;
  readonly start: number;
  readonly snapshot: number;
  readonly snapshotDeletion: number;
  readonly imageVersion: number;
  readonly imageVersionUpdate: number;
  readonly imageVersionDeletion: number;
  readonly scaleSetUpdate: number;
  readonly extensionDeletion: number;
  readonly diskCreation: number;
  readonly diskDeletion: number;
  readonly dataDiskAttach: number;
  readonly dataDiskDetach: number;
  readonly runCommand: number;
}

export const DEFAULT_COMPUTE_TIMINGS: FakeComputeTimings = {
  powerOff: 30_000,
  start: 30_000,
  snapshot: 60_000,
  snapshotDeletion: 15_000,
  imageVersion: 300_000,
  imageVersionUpdate: 10_000,
  imageVersionDeletion: 30_000,
  scaleSetUpdate: 10_000,
  extensionDeletion: 15_000,
  diskCreation: 10_000,
  diskDeletion: 10_000,
  dataDiskAttach: 10_000,
  dataDiskDetach: 10_000,
  runCommand: 30_000,
};

export interface FakeComputeOptions {
  /** The clock transitions follow (epoch ms); a test's virtual clock. Default: Date.now. */
  readonly now?: () => number;
  readonly timings?: Partial<FakeComputeTimings>;
  /** Regions that refuse Standard_ZRS image versions. */
  readonly regionsWithoutZrs?: readonly string[];
  /** Called when a scale-out creates an instance (the fake world makes it join as a node). */
  readonly onInstanceCreated?: (instance: ScaleSetInstance, runningAt: number) => void;
  /** Called when an instance is deleted through the port (its node goes with it). */
  readonly onInstanceDeleted?: (instance: ScaleSetInstance) => void;
}

/** A state that becomes `to` at `at` (epoch ms), applied when the resource is next looked at. */
export interface Pending<T> {
  readonly to: T;
  readonly at: number;
}

export interface InstanceRecord {
  instance: ScaleSetInstance;
  pending?: Pending<PowerState>;
  /** Data disk changes under way, applied once due. */
  diskChanges: {
    readonly kind: 'attach' | 'detach';
    readonly diskId: string;
    readonly lun: number;
    readonly at: number;
  }[];
  /** A start that never completes (allocation failure): the instance stays stopped. */
  startFails: boolean;
}

export interface ScaleSetRecord {
  scaleSet: ScaleSet;
  extensions: ScaleSetExtension[];
  pendingExtensions: Map<string, number>;
  pendingImage?: Pending<Readonly<Record<string, string>>>;
  customDataBase64?: string;
  /** Bumped by every write, as ARM's etag. */
  etag: number;
  nextInstance: number;
}

/** How a Run Command ends: the script ran (`succeeded`), or it failed on the host (stderr), or ARM failed it. */
/**
 * How a fake run command ends. Every script outcome is reported as Azure's Linux extension does: the
 * operation succeeds with the script's streams, whatever its exit status; a script that prints its exit
 * status (an EXIT trap echoing `$?`) has it as the last line of stdout.
 */
export type FakeRunCommandOutcome =
  | 'succeeded'
  /** Exit 1 with an error on stderr. */
  | 'script-failed'
  /** Exit 1 printing nothing (`false` under `set -e`). */
  | 'script-failed-silently'
  /** Exit 0 with a warning on stderr. */
  | 'succeeded-with-warning'
  /** The agent did not report: the operation itself failed. */
  | 'operation-failed';

/** A Run Command the fake received: its instance, script, when it ends and how. */
export interface FakeRunCommand {
  readonly handle: string;
  readonly scaleSet: ScaleSetRef;
  readonly instanceId: string;
  readonly script: readonly string[];
  readonly finishesAt: number;
  readonly outcome: FakeRunCommandOutcome;
}

export interface TimedRecord<T> {
  value: T;
  pending?: Pending<T | 'gone'>;
}

export class ComputeEstate {
  readonly timings: FakeComputeTimings;
  readonly noZrs: Set<string>;
  readonly onInstanceCreated: FakeComputeOptions['onInstanceCreated'];
  readonly onInstanceDeleted: FakeComputeOptions['onInstanceDeleted'];
  scaleSets = new Map<string, ScaleSetRecord>();
  instances = new Map<string, InstanceRecord>();
  snapshots = new Map<string, TimedRecord<Snapshot>>();
  disks = new Map<string, TimedRecord<ManagedDisk>>();
  galleries = new Set<string>();
  definitions = new Map<string, ImageDefinition>();
  versions = new Map<string, TimedRecord<ImageVersion>>();
  /** The gallery image version each instance's OS disk was created from. */
  diskVersions = new Map<string, string>();
  /** Outcomes of the next long-running creations, in order; Succeeded when none is queued. */
  outcomes = { snapshot: [] as ('Succeeded' | 'Failed')[], imageVersion: [] as ('Succeeded' | 'Failed')[] };
  runCommands: FakeRunCommand[] = [];
  runCommandOutcomes: FakeRunCommandOutcome[] = [];

  constructor(
    readonly now: () => number,
    options: FakeComputeOptions,
  ) {
    this.timings = { ...DEFAULT_COMPUTE_TIMINGS, ...options.timings };
    this.noZrs = new Set((options.regionsWithoutZrs ?? []).map(normaliseRegion));
    this.onInstanceCreated = options.onInstanceCreated;
    this.onInstanceDeleted = options.onInstanceDeleted;
  }

  /** Forgets every resource. */
  reset(): void {
    this.runCommands = [];
    this.runCommandOutcomes = [];
    this.scaleSets = new Map();
    this.instances = new Map();
    this.snapshots = new Map();
    this.disks = new Map();
    this.galleries = new Set();
    this.definitions = new Map();
    this.versions = new Map();
    this.diskVersions = new Map();
    this.outcomes = { snapshot: [], imageVersion: [] };
  }

  /** Adds a running instance of a scale set added before; fields default from the scale set. */
  addInstance(
    scaleSet: ScaleSetRef,
    instanceId: string,
    fields: Partial<ScaleSetInstance> = {},
  ): ScaleSetInstance {
    const model = this.scaleSetRecord(scaleSet, 'adding an instance').scaleSet;
    const resourceId = scaleSetInstanceResourceId(scaleSet, instanceId);
    const instance: ScaleSetInstance = {
      scaleSet: {
        subscriptionId: scaleSet.subscriptionId,
        resourceGroup: scaleSet.resourceGroup,
        name: scaleSet.name,
      },
      instanceId,
      resourceId,
      vmId: `00000000-0000-4000-8000-${instanceId.padStart(12, '0')}`,
      powerState: 'running',
      provisioningState: 'Succeeded',
      osDiskId: `/subscriptions/${scaleSet.subscriptionId}/resourceGroups/${scaleSet.resourceGroup}/providers/Microsoft.Compute/disks/${scaleSet.name}_osdisk_${instanceId}`,
      ephemeralOsDisk: false,
      location: model.location,
      zones: [],
      ...definedOnly({ hyperVGeneration: model.hyperVGeneration }),
      ...fields,
    };
    this.instances.set(instanceKey(scaleSet, instanceId), { instance, startFails: false, diskChanges: [] });
    const record = this.scaleSetRecord(scaleSet, 'adding an instance');
    record.nextInstance = Math.max(record.nextInstance, Number(instanceId) + 1 || 0);
    return instance;
  }

  /** Image versions of a definition that exist now. */
  versionsNow(ref: ImageDefinitionRef): ImageVersion[] {
    const prefix = `${definitionKey(ref)}/`;
    return [...this.versions.entries()].flatMap(([key, record]) => {
      if (!key.startsWith(prefix)) return [];
      const value = this.settle(this.versions, key, record);
      return value === undefined ? [] : [value];
    });
  }

  checkEtag(record: ScaleSetRecord, ifMatch: string | undefined, action: string): void {
    if (ifMatch === undefined || ifMatch === '*' || ifMatch === `"${record.etag}"`) return;
    throw new TerminalError(
      CONCURRENT_CHANGE,
      `${action}: the resource was changed by someone else since it was read (etag ${ifMatch}, now "${record.etag}")`,
    );
  }

  instancesOf(scaleSet: ScaleSetRef): InstanceRecord[] {
    const prefix = `${scaleSetKey(scaleSet)}/`;
    return [...this.instances.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([, record]) => record)
      .sort((a, b) => Number(a.instance.instanceId) - Number(b.instance.instanceId));
  }

  /** A scale-out instance: built from the model as it is now, running after the start time. */
  createInstance(scaleSet: ScaleSetRef, record: ScaleSetRecord): void {
    const instanceId = String(record.nextInstance);
    const imageId = record.scaleSet.imageReferenceFields?.['id'];
    const instance = this.addInstance(scaleSet, instanceId, {
      powerState: 'starting',
      provisioningState: 'Creating',
      ...definedOnly({ imageId }),
      createdAt: new Date(this.now()).toISOString(),
    });
    const runningAt = this.now() + this.timings.start;
    const created = this.instances.get(instanceKey(scaleSet, instanceId));
    if (created !== undefined) created.pending = { to: 'running', at: runningAt };
    const version = imageId === undefined ? undefined : this.resolveVersion(imageId);
    if (version !== undefined && instance.osDiskId !== undefined) {
      this.diskVersions.set(instance.osDiskId.toLowerCase(), version.id);
    }
    this.onInstanceCreated?.(instance, runningAt);
  }

  /** The version an image reference resolves to now: itself, or the definition's newest in `latest`. */
  resolveVersion(imageId: string): ImageVersion | undefined {
    const all = [...this.versions.entries()].flatMap(([key, record]) => {
      const value = this.settle(this.versions, key, record);
      return value === undefined ? [] : [value];
    });
    const exact = all.find((version) => version.id.toLowerCase() === imageId.toLowerCase());
    if (exact !== undefined) return exact;
    return all
      .filter(
        (version) =>
          galleryImageResourceId(version.ref).toLowerCase() === imageId.toLowerCase() &&
          version.provisioningState === 'Succeeded' &&
          !version.excludeFromLatest,
      )
      .sort((a, b) => compareNames(b.ref.versionName, a.ref.versionName))[0];
  }

  scaleSetRecord(ref: ScaleSetRef, action: string): ScaleSetRecord {
    const record = this.scaleSets.get(scaleSetKey(ref));
    if (record === undefined) throw new NotFoundError('ResourceNotFound', `${action}: scale set not found`);
    return record;
  }

  instanceRecord(scaleSet: ScaleSetRef, instanceId: string): InstanceRecord {
    const record = this.instances.get(instanceKey(scaleSet, instanceId));
    if (record === undefined) {
      throw new NotFoundError(
        'ResourceNotFound',
        `reading instance ${instanceId} of scale set ${describeScaleSet(scaleSet)}: not found`,
      );
    }
    return record;
  }

  definition(ref: ImageDefinitionRef, action: string): ImageDefinition {
    const definition = this.definitions.get(definitionKey(ref));
    if (definition === undefined) {
      throw new NotFoundError(
        'ResourceNotFound',
        `${action} of ${ref.imageName}: image definition not found`,
      );
    }
    return definition;
  }

  settleInstance(record: InstanceRecord): ScaleSetInstance {
    const pending = record.pending;
    if (pending !== undefined && this.now() >= pending.at) {
      record.instance = { ...record.instance, powerState: pending.to };
      delete record.pending;
    }
    const due = record.diskChanges.filter((change) => this.now() >= change.at);
    for (const change of due) {
      const diskKey = diskKeyOfId(change.diskId);
      const disk = this.disks.get(diskKey);
      const disks = record.instance.dataDisks ?? [];
      if (change.kind === 'attach') {
        record.instance = {
          ...record.instance,
          dataDisks: [...disks, { lun: change.lun, name: lastSegment(change.diskId), diskId: change.diskId }],
        };
        if (disk !== undefined) disk.value = { ...disk.value, managedBy: record.instance.resourceId };
      } else {
        record.instance = {
          ...record.instance,
          dataDisks: disks.filter((attached) => !sameResourceId(attached.diskId, change.diskId)),
        };
        if (disk !== undefined) {
          const { managedBy: _managedBy, ...detached } = disk.value;
          disk.value = detached;
        }
      }
    }
    if (due.length > 0) {
      record.diskChanges = record.diskChanges.filter((change) => !due.includes(change));
      if (record.diskChanges.length === 0)
        record.instance = { ...record.instance, provisioningState: 'Succeeded' };
    }
    return record.instance;
  }

  /** Applies what is due on every instance (data disk changes move their disks' `managedBy`). */
  settleAllInstances(): void {
    for (const record of this.instances.values()) this.settleInstance(record);
  }

  settleScaleSet(record: ScaleSetRecord): void {
    const now = this.now();
    const pending = record.pendingImage;
    if (pending !== undefined && now >= pending.at) {
      record.scaleSet = {
        ...record.scaleSet,
        ...fieldsOfReference(referenceOfFields(pending.to)),
        provisioningState: 'Succeeded',
      };
      delete record.pendingImage;
    }
    for (const [name, at] of record.pendingExtensions) {
      if (now < at) continue;
      record.extensions = record.extensions.filter((extension) => extension.name !== name);
      record.pendingExtensions.delete(name);
    }
  }

  settleKey<T>(records: Map<string, TimedRecord<T>>, key: string): T | undefined {
    const record = records.get(key);
    return record === undefined ? undefined : this.settle(records, key, record);
  }

  settle<T>(records: Map<string, TimedRecord<T>>, key: string, record: TimedRecord<T>): T | undefined {
    const pending = record.pending;
    if (pending !== undefined && this.now() >= pending.at) {
      if (pending.to === 'gone') {
        records.delete(key);
        return undefined;
      }
      record.value = pending.to;
      delete record.pending;
    }
    return record.value;
  }
}
