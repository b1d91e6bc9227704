/**
 * An in-memory ComputeGateway for fast tests of whatever uses the port (activities, orchestrations):
 * scale sets with their model and extensions, instances whose power state changes when asked, snapshots
 * and gallery image versions whose provisioning states move on with the fake's clock (or stay where a test
 * puts them). It keeps the port's contract: NotFoundError for missing reads, no-op deletions of absent
 * resources, idempotent requests, ARM's refusals (a name taken, a resource still being deleted, ZRS where
 * a region has no zones). Calls are logged; `nextError` queues one-shot failures; `reset` starts afresh.
 * Over 400 lines on purpose: one class holds the whole simulated estate, so one `reset` and one clock rule it.
 */
import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersion,
  ImageVersionRef,
  ManagedDisk,
  PowerState,
  PowerTarget,
  RunCommandState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
  VirtualMachineSummary,
} from '../../domain/compute.js';
import { CONCURRENT_CHANGE, NotFoundError, TerminalError, TransientError } from '../../domain/errors.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import {
  describeScaleSet,
  galleryImageResourceId,
  isScaleSetInstanceId,
  resourceGroupOfId,
  scaleSetInstanceResourceId,
  scaleSetKey,
  scaleSetResourceId,
} from '../../domain/resource-id.js';
import type { ImageReference, ScaleSet } from '../../domain/scale-set.js';
import type {
  ComputeGateway,
  DiskFromSnapshotRequest,
  ImageVersionRequest,
  ScaleSetChange,
  ScaleSetImageUpdate,
  SnapshotRequest,
} from '../compute-gateway.js';
import { RecordingFake } from './recording-fake.js';

export type ComputeMethod = keyof ComputeGateway;

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

const DEFAULT_COMPUTE_TIMINGS: FakeComputeTimings = {
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
interface Pending<T> {
  readonly to: T;
  readonly at: number;
}

interface InstanceRecord {
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

interface ScaleSetRecord {
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
export type FakeRunCommandOutcome = 'succeeded' | 'script-failed' | 'operation-failed';

/** A Run Command the fake received: its instance, script, when it ends and how. */
export interface FakeRunCommand {
  readonly handle: string;
  readonly scaleSet: ScaleSetRef;
  readonly instanceId: string;
  readonly script: readonly string[];
  readonly finishesAt: number;
  readonly outcome: FakeRunCommandOutcome;
}

interface TimedRecord<T> {
  value: T;
  pending?: Pending<T | 'gone'>;
}

export class FakeComputeGateway extends RecordingFake<ComputeMethod> implements ComputeGateway {
  readonly #timings: FakeComputeTimings;
  readonly #noZrs: Set<string>;
  #scaleSets = new Map<string, ScaleSetRecord>();
  #instances = new Map<string, InstanceRecord>();
  #snapshots = new Map<string, TimedRecord<Snapshot>>();
  #disks = new Map<string, TimedRecord<ManagedDisk>>();
  #galleries = new Set<string>();
  #definitions = new Map<string, ImageDefinition>();
  #versions = new Map<string, TimedRecord<ImageVersion>>();
  /** The gallery image version each instance's OS disk was created from. */
  #diskVersions = new Map<string, string>();
  readonly #onInstanceCreated: FakeComputeOptions['onInstanceCreated'];
  readonly #onInstanceDeleted: FakeComputeOptions['onInstanceDeleted'];
  /** Outcomes of the next long-running creations, in order; Succeeded when none is queued. */
  #outcomes = { snapshot: [] as ('Succeeded' | 'Failed')[], imageVersion: [] as ('Succeeded' | 'Failed')[] };
  #runCommands: FakeRunCommand[] = [];
  #runCommandOutcomes: FakeRunCommandOutcome[] = [];

  constructor(options: FakeComputeOptions = {}) {
    super(options.now ?? (() => Date.now()));
    this.#timings = { ...DEFAULT_COMPUTE_TIMINGS, ...options.timings };
    this.#noZrs = new Set((options.regionsWithoutZrs ?? []).map(normaliseRegion));
    this.#onInstanceCreated = options.onInstanceCreated;
    this.#onInstanceDeleted = options.onInstanceDeleted;
  }

  // ---- test controls -----------------------------------------------------------------------------

  /** The next snapshot or image version created ends in this state. */
  nextOutcome(kind: 'snapshot' | 'imageVersion', outcome: 'Succeeded' | 'Failed'): void {
    this.#outcomes[kind].push(outcome);
  }

  /** The next Run Command ends this way (then `succeeded` again). */
  nextRunCommandOutcome(outcome: FakeRunCommandOutcome): void {
    this.#runCommandOutcomes.push(outcome);
  }

  /** Every Run Command requested, in order. */
  runCommands(): readonly FakeRunCommand[] {
    return [...this.#runCommands];
  }

  /** Forgets every resource, call and queued error. */
  override reset(): void {
    super.reset();
    this.#runCommands = [];
    this.#runCommandOutcomes = [];
    this.#scaleSets = new Map();
    this.#instances = new Map();
    this.#snapshots = new Map();
    this.#disks = new Map();
    this.#galleries = new Set();
    this.#definitions = new Map();
    this.#versions = new Map();
    this.#diskVersions = new Map();
    this.#outcomes = { snapshot: [], imageVersion: [] };
  }

  addScaleSet(scaleSet: ScaleSet, extensions: readonly ScaleSetExtension[] = []): void {
    this.#scaleSets.set(scaleSetKey(scaleSet), {
      scaleSet: { ...scaleSet, ...fieldsOfReference(scaleSet.imageReference) },
      extensions: [...extensions],
      pendingExtensions: new Map(),
      etag: 1,
      nextInstance: 0,
    });
  }

  /** Another tool writes the scale set (its etag changes); `imageId` also changes its image. */
  changeScaleSetElsewhere(ref: ScaleSetRef, imageId?: string): void {
    const record = this.#scaleSetRecord(ref, 'changing a scale set elsewhere');
    this.#settleScaleSet(record);
    record.etag += 1;
    if (imageId !== undefined) {
      record.scaleSet = { ...record.scaleSet, ...fieldsOfReference({ kind: 'gallery', id: imageId }) };
    }
  }

  /** Adds a running instance of a scale set added before; fields default from the scale set. */
  addInstance(
    scaleSet: ScaleSetRef,
    instanceId: string,
    fields: Partial<ScaleSetInstance> = {},
  ): ScaleSetInstance {
    const model = this.#scaleSetRecord(scaleSet, 'adding an instance').scaleSet;
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
      ...(model.hyperVGeneration === undefined ? {} : { hyperVGeneration: model.hyperVGeneration }),
      ...fields,
    };
    this.#instances.set(instanceKey(scaleSet, instanceId), { instance, startFails: false, diskChanges: [] });
    const record = this.#scaleSetRecord(scaleSet, 'adding an instance');
    record.nextInstance = Math.max(record.nextInstance, Number(instanceId) + 1 || 0);
    return instance;
  }

  /**
   * The guest powers itself off at `at` (what the prep pod's `poweroff` does). Returns what calls it
   * off, as long as it has not happened.
   */
  schedulePowerOff(scaleSet: ScaleSetRef, instanceId: string, at: number): () => void {
    const record = this.#instances.get(instanceKey(scaleSet, instanceId));
    if (record === undefined) return () => undefined;
    const pending: Pending<PowerState> = { to: 'stopped', at };
    record.pending = pending;
    return () => {
      if (record.pending === pending) delete record.pending;
    };
  }

  /** Starts of this instance never complete (capacity, a broken host): it stays stopped. */
  failStarts(scaleSet: ScaleSetRef, instanceId: string): void {
    const record = this.#instances.get(instanceKey(scaleSet, instanceId));
    if (record !== undefined) record.startFails = true;
  }

  /** Removes an instance (scaled in by the autoscaler or an operator). */
  deleteInstance(scaleSet: ScaleSetRef, instanceId: string): void {
    this.#instances.delete(instanceKey(scaleSet, instanceId));
  }

  /** The scale set as it is now (model updates applied once due). */
  scaleSetState(ref: ScaleSetRef): (ScaleSet & { readonly customDataBase64?: string }) | undefined {
    const record = this.#scaleSets.get(scaleSetKey(ref));
    if (record === undefined) return undefined;
    this.#settleScaleSet(record);
    return {
      ...record.scaleSet,
      ...(record.customDataBase64 === undefined ? {} : { customDataBase64: record.customDataBase64 }),
    };
  }

  instanceState(scaleSet: ScaleSetRef, instanceId: string): ScaleSetInstance | undefined {
    const record = this.#instances.get(instanceKey(scaleSet, instanceId));
    return record === undefined ? undefined : this.#settleInstance(record);
  }

  /** Snapshots that exist now (deletions applied once due). */
  snapshotsNow(): Snapshot[] {
    return [...this.#snapshots.entries()].flatMap(([key, record]) => {
      const value = this.#settle(this.#snapshots, key, record);
      return value === undefined ? [] : [value];
    });
  }

  /** Managed disks that exist now (deletions applied once due). */
  disksNow(): ManagedDisk[] {
    for (const record of this.#instances.values()) this.#settleInstance(record);
    return [...this.#disks.entries()].flatMap(([key, record]) => {
      const value = this.#settle(this.#disks, key, record);
      return value === undefined ? [] : [value];
    });
  }

  /** Image versions of a definition that exist now. */
  imageVersionsNow(ref: ImageDefinitionRef): ImageVersion[] {
    const prefix = `${definitionKey(ref)}/`;
    return [...this.#versions.entries()].flatMap(([key, record]) => {
      if (!key.startsWith(prefix)) return [];
      const value = this.#settle(this.#versions, key, record);
      return value === undefined ? [] : [value];
    });
  }

  // ---- the port ----------------------------------------------------------------------------------

  getScaleSet(ref: ScaleSetRef): Promise<ScaleSet> {
    return this.call('getScaleSet', [ref], () => {
      const record = this.#scaleSetRecord(ref, `reading scale set ${describeScaleSet(ref)}`);
      this.#settleScaleSet(record);
      return {
        ...record.scaleSet,
        etag: `"${record.etag}"`,
        capacity: this.#instancesOf(ref).length,
        // The model carries its extensions, as ARM's scale set GET does.
        extensions: record.extensions.map((extension) => ({ ...extension })),
      };
    });
  }

  getInstance(scaleSet: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance> {
    return this.call('getInstance', [scaleSet, instanceId], () =>
      this.#settleInstance(this.#instanceRecord(scaleSet, instanceId)),
    );
  }

  requestPowerOff(instance: ScaleSetInstance): Promise<void> {
    return this.call('requestPowerOff', [instance], () => {
      const record = this.#instanceRecord(instance.scaleSet, instance.instanceId);
      const state = this.#settleInstance(record).powerState;
      if (state !== 'running' && state !== 'starting') return;
      record.instance = { ...record.instance, powerState: 'stopping' };
      record.pending = { to: 'stopped', at: this.now() + this.#timings.powerOff };
    });
  }

  requestStart(instance: PowerTarget): Promise<void> {
    return this.call('requestStart', [instance], () => {
      const record = this.#instanceRecord(instance.scaleSet, instance.instanceId);
      const state = this.#settleInstance(record).powerState;
      if (state === 'running' || state === 'starting') return;
      if (record.startFails) return;
      record.instance = { ...record.instance, powerState: 'starting' };
      record.pending = { to: 'running', at: this.now() + this.#timings.start };
    });
  }

  requestDataDiskAttach(instance: ScaleSetInstance, diskId: string, lun: number): Promise<void> {
    return this.call('requestDataDiskAttach', [instance, diskId, lun], () => {
      const action = `attaching disk ${lastSegment(diskId)} to instance ${instance.instanceId}`;
      const record = this.#instanceRecord(instance.scaleSet, instance.instanceId);
      const current = this.#settleInstance(record);
      const pendingAttach = record.diskChanges.some((c) => c.kind === 'attach' && sameId(c.diskId, diskId));
      if (pendingAttach || (current.dataDisks ?? []).some((disk) => sameId(disk.diskId, diskId))) return;
      const disk = this.#settleKey(this.#disks, diskKeyOfId(diskId));
      if (disk === undefined) throw new NotFoundError('NotFound', `${action}: the disk was not found`);
      if (disk.managedBy !== undefined) {
        throw new TerminalError(
          'OperationNotAllowed',
          `${action}: the disk is attached to ${disk.managedBy}`,
        );
      }
      if ((current.dataDisks ?? []).some((attached) => attached.lun === lun)) {
        throw new TerminalError('InvalidParameter', `${action}: LUN ${lun} is in use`);
      }
      record.instance = { ...current, provisioningState: 'Updating' };
      record.diskChanges.push({ kind: 'attach', diskId, lun, at: this.now() + this.#timings.dataDiskAttach });
    });
  }

  requestDataDiskDetach(instance: ScaleSetInstance, diskId: string): Promise<void> {
    return this.call('requestDataDiskDetach', [instance, diskId], () => {
      const record = this.#instanceRecord(instance.scaleSet, instance.instanceId);
      const current = this.#settleInstance(record);
      const attached = (current.dataDisks ?? []).find((disk) => sameId(disk.diskId, diskId));
      if (attached === undefined || attached.toBeDetached === true) return;
      record.instance = {
        ...current,
        provisioningState: 'Updating',
        dataDisks: (current.dataDisks ?? []).map((disk) =>
          disk === attached ? { ...disk, toBeDetached: true } : disk,
        ),
      };
      record.diskChanges.push({
        kind: 'detach',
        diskId,
        lun: attached.lun,
        at: this.now() + this.#timings.dataDiskDetach,
      });
    });
  }

  getDisk(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk> {
    return this.call('getDisk', [subscriptionId, resourceGroup, name], () => {
      for (const record of this.#instances.values()) this.#settleInstance(record);
      const value = this.#settleKey(this.#disks, snapshotKey(subscriptionId, resourceGroup, name));
      if (value === undefined) {
        throw new NotFoundError('ResourceNotFound', `reading disk ${resourceGroup}/${name}: not found`);
      }
      return value;
    });
  }

  listDisks(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]> {
    return this.call('listDisks', [subscriptionId, resourceGroup], () => {
      for (const record of this.#instances.values()) this.#settleInstance(record);
      const prefix = `${subscriptionId}/${resourceGroup}/`.toLowerCase();
      return [...this.#disks.keys()].flatMap((key) => {
        if (!key.startsWith(prefix)) return [];
        const value = this.#settleKey(this.#disks, key);
        return value === undefined ? [] : [value];
      });
    });
  }

  requestDiskFromSnapshot(request: DiskFromSnapshotRequest): Promise<void> {
    return this.call('requestDiskFromSnapshot', [request], () => {
      const action = `requesting disk ${request.resourceGroup}/${request.name}`;
      const key = snapshotKey(request.subscriptionId, request.resourceGroup, request.name);
      const existing = this.#settleKey(this.#disks, key);
      if (existing !== undefined) {
        refuseIfDeleting(existing.provisioningState, action, 'disk');
        if (!sameId(existing.sourceResourceId, request.sourceSnapshotId)) {
          throw new TerminalError('DiskNameTaken', `${action}: a disk with this name already exists`);
        }
        return;
      }
      if (this.#settleKey(this.#snapshots, snapshotKeyOfId(request.sourceSnapshotId)) === undefined) {
        throw new NotFoundError('NotFound', `${action}: snapshot ${request.sourceSnapshotId} was not found`);
      }
      const value: ManagedDisk = {
        id: `/subscriptions/${request.subscriptionId}/resourceGroups/${request.resourceGroup}/providers/Microsoft.Compute/disks/${request.name}`,
        name: request.name,
        resourceGroup: request.resourceGroup,
        location: request.location,
        provisioningState: 'Creating',
        zones: request.zone === undefined ? [] : [request.zone],
        sourceResourceId: request.sourceSnapshotId,
        tags: { ...request.tags },
      };
      this.#disks.set(key, {
        value,
        pending: {
          to: { ...value, provisioningState: 'Succeeded' },
          at: this.now() + this.#timings.diskCreation,
        },
      });
    });
  }

  requestDiskDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    return this.call('requestDiskDeletion', [subscriptionId, resourceGroup, name], () => {
      for (const instance of this.#instances.values()) this.#settleInstance(instance);
      const key = snapshotKey(subscriptionId, resourceGroup, name);
      const existing = this.#settleKey(this.#disks, key);
      const record = this.#disks.get(key);
      if (existing === undefined || record === undefined || existing.provisioningState === 'Deleting') return;
      if (existing.managedBy !== undefined) {
        throw new TransientError(
          'OperationNotAllowed',
          `deleting disk ${resourceGroup}/${name}: it is attached to ${existing.managedBy}`,
        );
      }
      record.value = { ...existing, provisioningState: 'Deleting' };
      record.pending = { to: 'gone', at: this.now() + this.#timings.diskDeletion };
    });
  }

  listVirtualMachines(
    subscriptionId: string,
    resourceGroup: string,
    scaleSet?: ScaleSetRef,
  ): Promise<VirtualMachineSummary[]> {
    return this.call('listVirtualMachines', [subscriptionId, resourceGroup, scaleSet], () =>
      [...this.#instances.values()]
        .map((record) => record.instance)
        .filter(
          (instance) =>
            !isScaleSetInstanceId(instance.resourceId) &&
            instance.resourceId.toLowerCase().startsWith(`/subscriptions/${subscriptionId.toLowerCase()}/`) &&
            resourceGroupOfId(instance.resourceId)?.toLowerCase() === resourceGroup.toLowerCase() &&
            (scaleSet === undefined || scaleSetKey(instance.scaleSet) === scaleSetKey(scaleSet)),
        )
        .map((instance) => ({
          id: instance.resourceId,
          name: instance.instanceId,
          scaleSetId: scaleSetResourceId(instance.scaleSet),
        })),
    );
  }

  requestRunCommand(instance: ScaleSetInstance, script: readonly string[]): Promise<string> {
    return this.call('requestRunCommand', [instance, script], () => {
      const action = `running a command on instance ${instance.instanceId}`;
      const record = this.#instanceRecord(instance.scaleSet, instance.instanceId);
      if (this.#settleInstance(record).powerState !== 'running') {
        throw new TerminalError(
          'OperationNotAllowed',
          `${action}: the operation requires the VM to be running (OperationNotAllowed, HTTP 409)`,
        );
      }
      const key = instanceKey(instance.scaleSet, instance.instanceId);
      const busy = this.#runCommands.some(
        (command) =>
          instanceKey(command.scaleSet, command.instanceId) === key && this.now() < command.finishesAt,
      );
      if (busy) {
        throw new TransientError(
          'RunCommandInProgress',
          `${action}: Run command extension execution is in progress (Conflict, HTTP 409)`,
        );
      }
      const command: FakeRunCommand = {
        handle: `fake-run-command-${this.#runCommands.length + 1}`,
        scaleSet: { ...instance.scaleSet },
        instanceId: instance.instanceId,
        script: [...script],
        finishesAt: this.now() + this.#timings.runCommand,
        outcome: this.#runCommandOutcomes.shift() ?? 'succeeded',
      };
      this.#runCommands.push(command);
      return command.handle;
    });
  }

  getRunCommand(scaleSet: ScaleSetRef, handle: string): Promise<RunCommandState> {
    return this.call('getRunCommand', [scaleSet, handle], (): RunCommandState => {
      const command = this.#runCommands.find((candidate) => candidate.handle === handle);
      if (command === undefined) {
        throw new NotFoundError('NotFound', `reading run command ${handle}: the operation was not found`);
      }
      if (this.now() < command.finishesAt) return { state: 'running' };
      switch (command.outcome) {
        case 'succeeded':
          return { state: 'succeeded', stdout: '', stderr: '' };
        case 'script-failed':
          return {
            state: 'succeeded',
            stdout: '',
            stderr: 'rm: cannot remove /etc/hostname: Read-only file system',
          };
        case 'operation-failed':
          return {
            state: 'failed',
            code: 'VMAgentStatusCommunicationError',
            message: 'the VM agent did not report',
          };
      }
    });
  }

  getSnapshot(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot> {
    return this.call('getSnapshot', [subscriptionId, resourceGroup, name], () => {
      const key = snapshotKey(subscriptionId, resourceGroup, name);
      const value = this.#settleKey(this.#snapshots, key);
      if (value === undefined) {
        throw new NotFoundError('ResourceNotFound', `reading snapshot ${resourceGroup}/${name}: not found`);
      }
      return value;
    });
  }

  listSnapshots(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]> {
    return this.call('listSnapshots', [subscriptionId, resourceGroup], () => {
      const prefix = `${subscriptionId}/${resourceGroup}/`.toLowerCase();
      return [...this.#snapshots.keys()].flatMap((key) => {
        if (!key.startsWith(prefix)) return [];
        const value = this.#settleKey(this.#snapshots, key);
        return value === undefined ? [] : [value];
      });
    });
  }

  requestSnapshot(request: SnapshotRequest): Promise<void> {
    return this.call('requestSnapshot', [request], () => {
      const action = `requesting snapshot ${request.resourceGroup}/${request.name}`;
      const key = snapshotKey(request.subscriptionId, request.resourceGroup, request.name);
      const existing = this.#settleKey(this.#snapshots, key);
      if (existing !== undefined) {
        refuseIfDeleting(existing.provisioningState, action, 'snapshot');
        if (existing.sourceResourceId?.toLowerCase() !== request.sourceDiskId.toLowerCase()) {
          throw new TerminalError('SnapshotNameTaken', `${action}: a snapshot with this name already exists`);
        }
        return;
      }
      const outcome = this.#outcomes.snapshot.shift() ?? 'Succeeded';
      const value: Snapshot = {
        id: `/subscriptions/${request.subscriptionId}/resourceGroups/${request.resourceGroup}/providers/Microsoft.Compute/snapshots/${request.name}`,
        name: request.name,
        resourceGroup: request.resourceGroup,
        location: request.location,
        provisioningState: 'Creating',
        sourceResourceId: request.sourceDiskId,
        incremental: request.incremental,
        tags: { ...request.tags },
      };
      this.#snapshots.set(key, {
        value,
        pending: { to: { ...value, provisioningState: outcome }, at: this.now() + this.#timings.snapshot },
      });
    });
  }

  requestSnapshotDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    return this.call('requestSnapshotDeletion', [subscriptionId, resourceGroup, name], () => {
      const key = snapshotKey(subscriptionId, resourceGroup, name);
      const existing = this.#settleKey(this.#snapshots, key);
      const record = this.#snapshots.get(key);
      if (existing === undefined || record === undefined || existing.provisioningState === 'Deleting') return;
      record.value = { ...existing, provisioningState: 'Deleting' };
      record.pending = { to: 'gone', at: this.now() + this.#timings.snapshotDeletion };
    });
  }

  ensureGallery(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    _knownAbsent?: boolean,
  ): Promise<void> {
    return this.call('ensureGallery', [ref, location, tags], () => {
      this.#galleries.add(galleryKey(ref));
    });
  }

  getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition> {
    return this.call('getImageDefinition', [ref], () => this.#definition(ref, 'reading image definition'));
  }

  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    _knownAbsent?: boolean,
  ): Promise<ImageDefinition> {
    return this.call('ensureImageDefinition', [ref, location, spec], () => {
      const existing = this.#definitions.get(definitionKey(ref));
      if (existing !== undefined) return existing;
      if (!this.#galleries.has(galleryKey(ref))) {
        throw new NotFoundError(
          'ParentResourceNotFound',
          `ensuring image definition ${ref.imageName}: no gallery ${ref.galleryName}`,
        );
      }
      const definition: ImageDefinition = {
        id: galleryImageResourceId(ref),
        ref: { ...ref },
        location,
        provisioningState: 'Succeeded',
        spec,
      };
      this.#definitions.set(definitionKey(ref), definition);
      return definition;
    });
  }

  listImageVersions(ref: ImageDefinitionRef): Promise<ImageVersion[]> {
    return this.call('listImageVersions', [ref], () => {
      this.#definition(ref, 'listing image versions');
      return this.imageVersionsNow(ref);
    });
  }

  getImageVersion(ref: ImageVersionRef): Promise<ImageVersion> {
    return this.call('getImageVersion', [ref], () => {
      const value = this.#settleKey(this.#versions, versionKey(ref));
      if (value === undefined) {
        throw new NotFoundError(
          'ResourceNotFound',
          `reading image version ${ref.imageName}/${ref.versionName}: not found`,
        );
      }
      return value;
    });
  }

  requestImageVersion(request: ImageVersionRequest): Promise<void> {
    return this.call('requestImageVersion', [request], () => {
      const { ref } = request;
      const action = `requesting image version ${ref.imageName}/${ref.versionName}`;
      this.#definition(ref, action);
      if (
        request.storageAccountType === 'Standard_ZRS' &&
        this.#noZrs.has(normaliseRegion(request.location))
      ) {
        throw new TerminalError(
          'ZrsUnsupported',
          `${action}: zone-redundant storage (Standard_ZRS) is not supported in this region`,
        );
      }
      const key = versionKey(ref);
      const existing = this.#settleKey(this.#versions, key);
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
      const outcome = this.#outcomes.imageVersion.shift() ?? 'Succeeded';
      const value: ImageVersion = {
        id: `${galleryImageResourceId(ref)}/versions/${ref.versionName}`,
        ref: { ...ref },
        location: request.location,
        provisioningState: 'Creating',
        excludeFromLatest: request.excludeFromLatest,
        storageAccountType: request.storageAccountType,
        replicationState: 'Replicating',
        sourceId: request.sourceId,
        publishedAt: new Date(this.now()).toISOString(),
        tags: { ...request.tags },
      };
      this.#versions.set(key, {
        value,
        pending: {
          to: {
            ...value,
            provisioningState: outcome,
            replicationState: outcome === 'Succeeded' ? 'Completed' : 'Failed',
          },
          at: this.now() + this.#timings.imageVersion,
        },
      });
    });
  }

  requestImageVersionExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    return this.call('requestImageVersionExclusion', [ref, excludeFromLatest, addTags], () => {
      const key = versionKey(ref);
      const existing = this.#settleKey(this.#versions, key);
      const record = this.#versions.get(key);
      if (existing === undefined || record === undefined) {
        throw new NotFoundError('ResourceNotFound', `updating image version ${ref.versionName}: not found`);
      }
      if (existing.excludeFromLatest === excludeFromLatest) return;
      const tags = { ...existing.tags, ...addTags };
      record.value = { ...existing, tags, provisioningState: 'Updating' };
      record.pending = {
        to: { ...existing, tags, excludeFromLatest, provisioningState: 'Succeeded' },
        at: this.now() + this.#timings.imageVersionUpdate,
      };
    });
  }

  requestImageVersionDeletion(ref: ImageVersionRef): Promise<void> {
    return this.call('requestImageVersionDeletion', [ref], () => {
      const key = versionKey(ref);
      const existing = this.#settleKey(this.#versions, key);
      const record = this.#versions.get(key);
      if (existing === undefined || record === undefined || existing.provisioningState === 'Deleting') return;
      record.value = { ...existing, provisioningState: 'Deleting' };
      record.pending = { to: 'gone', at: this.now() + this.#timings.imageVersionDeletion };
    });
  }

  requestScaleSetImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void> {
    return this.call('requestScaleSetImageUpdate', [ref, update], () => {
      const action = `requesting image update of scale set ${describeScaleSet(ref)}`;
      const record = this.#scaleSetRecord(ref, action);
      this.#settleScaleSet(record);
      this.#checkEtag(record, update.ifMatch, action);
      record.etag += 1;
      record.scaleSet = {
        ...record.scaleSet,
        provisioningState: 'Updating',
        ...(update.tags === undefined ? {} : { tags: { ...update.tags } }),
      };
      record.customDataBase64 = update.customDataBase64;
      record.pendingImage = { to: { id: update.imageId }, at: this.now() + this.#timings.scaleSetUpdate };
    });
  }

  requestScaleSetChange(ref: ScaleSetRef, change: ScaleSetChange): Promise<void> {
    return this.call('requestScaleSetChange', [ref, change], () => {
      const action = `requesting a change of scale set ${describeScaleSet(ref)}`;
      const record = this.#scaleSetRecord(ref, action);
      this.#settleScaleSet(record);
      this.#checkEtag(record, change.ifMatch, action);
      record.etag += 1;
      if (change.tags !== undefined) record.scaleSet = { ...record.scaleSet, tags: { ...change.tags } };
      if (change.imageReference !== undefined) {
        const fields: Record<string, string> = { ...record.scaleSet.imageReferenceFields };
        for (const [key, value] of Object.entries(change.imageReference)) {
          if (value === null) delete fields[key];
          else fields[key] = value;
        }
        record.scaleSet = { ...record.scaleSet, provisioningState: 'Updating' };
        record.pendingImage = { to: fields, at: this.now() + this.#timings.scaleSetUpdate };
      }
      if (change.capacity !== undefined) {
        const current = this.#instancesOf(ref).length;
        for (let added = current; added < change.capacity; added++) this.#createInstance(ref, record);
      }
    });
  }

  listInstances(scaleSet: ScaleSetRef): Promise<ScaleSetInstance[]> {
    return this.call('listInstances', [scaleSet], () => {
      this.#scaleSetRecord(scaleSet, `listing instances of scale set ${describeScaleSet(scaleSet)}`);
      return this.#instancesOf(scaleSet).map((record) => this.#settleInstance(record));
    });
  }

  requestInstanceDeletion(scaleSet: ScaleSetRef, instanceId: string): Promise<void> {
    return this.call('requestInstanceDeletion', [scaleSet, instanceId], () => {
      const record = this.#scaleSets.get(scaleSetKey(scaleSet));
      const instance = this.#instances.get(instanceKey(scaleSet, instanceId));
      if (instance === undefined) return;
      this.#instances.delete(instanceKey(scaleSet, instanceId));
      if (record !== undefined) record.etag += 1;
      this.#onInstanceDeleted?.(instance.instance);
    });
  }

  getDiskImageVersionId(diskId: string): Promise<string | undefined> {
    return this.call('getDiskImageVersionId', [diskId], () => this.#diskVersions.get(diskId.toLowerCase()));
  }

  requestImageVersionTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void> {
    return this.call('requestImageVersionTags', [ref, tags], () => {
      const key = versionKey(ref);
      const existing = this.#settleKey(this.#versions, key);
      const record = this.#versions.get(key);
      if (existing === undefined || record === undefined) {
        throw new NotFoundError('ResourceNotFound', `tagging image version ${ref.versionName}: not found`);
      }
      record.value = { ...existing, tags: { ...tags } };
      if (record.pending !== undefined && record.pending.to !== 'gone') {
        record.pending = { ...record.pending, to: { ...record.pending.to, tags: { ...tags } } };
      }
    });
  }

  listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]> {
    return this.call('listExtensions', [ref], () => {
      const record = this.#scaleSetRecord(ref, `listing extensions of scale set ${describeScaleSet(ref)}`);
      this.#settleScaleSet(record);
      return record.extensions.map((extension) => ({ ...extension }));
    });
  }

  requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void> {
    return this.call('requestExtensionDeletion', [ref, extensionName], () => {
      const record = this.#scaleSetRecord(ref, `deleting extension ${extensionName}`);
      this.#settleScaleSet(record);
      const index = record.extensions.findIndex((extension) => extension.name === extensionName);
      const extension = record.extensions[index];
      if (extension === undefined || extension.provisioningState === 'Deleting') return;
      record.extensions[index] = { ...extension, provisioningState: 'Deleting' };
      record.pendingExtensions.set(extensionName, this.now() + this.#timings.extensionDeletion);
    });
  }

  // ---- internals ---------------------------------------------------------------------------------

  #checkEtag(record: ScaleSetRecord, ifMatch: string | undefined, action: string): void {
    if (ifMatch === undefined || ifMatch === '*' || ifMatch === `"${record.etag}"`) return;
    throw new TerminalError(
      CONCURRENT_CHANGE,
      `${action}: the resource was changed by someone else since it was read (etag ${ifMatch}, now "${record.etag}")`,
    );
  }

  #instancesOf(scaleSet: ScaleSetRef): InstanceRecord[] {
    const prefix = `${scaleSetKey(scaleSet)}/`;
    return [...this.#instances.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([, record]) => record)
      .sort((a, b) => Number(a.instance.instanceId) - Number(b.instance.instanceId));
  }

  /** A scale-out instance: built from the model as it is now, running after the start time. */
  #createInstance(scaleSet: ScaleSetRef, record: ScaleSetRecord): void {
    const instanceId = String(record.nextInstance);
    const imageId = record.scaleSet.imageReferenceFields?.['id'];
    const instance = this.addInstance(scaleSet, instanceId, {
      powerState: 'starting',
      provisioningState: 'Creating',
      ...(imageId === undefined ? {} : { imageId }),
      createdAt: new Date(this.now()).toISOString(),
    });
    const runningAt = this.now() + this.#timings.start;
    const created = this.#instances.get(instanceKey(scaleSet, instanceId));
    if (created !== undefined) created.pending = { to: 'running', at: runningAt };
    const version = imageId === undefined ? undefined : this.#resolveVersion(imageId);
    if (version !== undefined && instance.osDiskId !== undefined) {
      this.#diskVersions.set(instance.osDiskId.toLowerCase(), version.id);
    }
    this.#onInstanceCreated?.(instance, runningAt);
  }

  /** The version an image reference resolves to now: itself, or the definition's newest in `latest`. */
  #resolveVersion(imageId: string): ImageVersion | undefined {
    const all = [...this.#versions.entries()].flatMap(([key, record]) => {
      const value = this.#settle(this.#versions, key, record);
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

  #scaleSetRecord(ref: ScaleSetRef, action: string): ScaleSetRecord {
    const record = this.#scaleSets.get(scaleSetKey(ref));
    if (record === undefined) throw new NotFoundError('ResourceNotFound', `${action}: scale set not found`);
    return record;
  }

  #instanceRecord(scaleSet: ScaleSetRef, instanceId: string): InstanceRecord {
    const record = this.#instances.get(instanceKey(scaleSet, instanceId));
    if (record === undefined) {
      throw new NotFoundError(
        'ResourceNotFound',
        `reading instance ${instanceId} of scale set ${describeScaleSet(scaleSet)}: not found`,
      );
    }
    return record;
  }

  #definition(ref: ImageDefinitionRef, action: string): ImageDefinition {
    const definition = this.#definitions.get(definitionKey(ref));
    if (definition === undefined) {
      throw new NotFoundError(
        'ResourceNotFound',
        `${action} of ${ref.imageName}: image definition not found`,
      );
    }
    return definition;
  }

  #settleInstance(record: InstanceRecord): ScaleSetInstance {
    const pending = record.pending;
    if (pending !== undefined && this.now() >= pending.at) {
      record.instance = { ...record.instance, powerState: pending.to };
      delete record.pending;
    }
    const due = record.diskChanges.filter((change) => this.now() >= change.at);
    for (const change of due) {
      const diskKey = diskKeyOfId(change.diskId);
      const disk = this.#disks.get(diskKey);
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
          dataDisks: disks.filter((attached) => !sameId(attached.diskId, change.diskId)),
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

  #settleScaleSet(record: ScaleSetRecord): void {
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

  #settleKey<T>(records: Map<string, TimedRecord<T>>, key: string): T | undefined {
    const record = records.get(key);
    return record === undefined ? undefined : this.#settle(records, key, record);
  }

  #settle<T>(records: Map<string, TimedRecord<T>>, key: string, record: TimedRecord<T>): T | undefined {
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

/** A deletion in progress refuses a new resource of the same name (ARM answers 409 until it is gone). */
function refuseIfDeleting(state: string, action: string, what: string): void {
  if (state === 'Deleting') {
    throw new TransientError(
      'ResourceDeleting',
      `${action}: the previous ${what} of this name is still being deleted`,
      {
        retryAfterMs: 15_000,
      },
    );
  }
}

/** The image reference and its raw fields, from the interpreted view. */
function fieldsOfReference(reference: ImageReference | undefined): {
  imageReference?: ImageReference;
  imageReferenceFields?: Readonly<Record<string, string>>;
} {
  if (reference === undefined) return {};
  if (reference.kind === 'marketplace') {
    const { publisher, offer, sku, version } = reference;
    return { imageReference: reference, imageReferenceFields: { publisher, offer, sku, version } };
  }
  return { imageReference: reference, imageReferenceFields: { id: reference.id } };
}

function referenceOfFields(fields: Readonly<Record<string, string>>): ImageReference | undefined {
  const { id, publisher, offer, sku, version } = fields;
  if (id !== undefined) return { kind: 'gallery', id };
  if (publisher !== undefined && offer !== undefined && sku !== undefined) {
    return { kind: 'marketplace', publisher, offer, sku, version: version ?? 'latest' };
  }
  return undefined;
}

/** Version names compared numerically part by part (the gallery's order). */
function compareNames(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let index = 0; index < 3; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function instanceKey(scaleSet: ScaleSetRef, instanceId: string): string {
  return `${scaleSetKey(scaleSet)}/${instanceId.toLowerCase()}`;
}

function snapshotKey(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${subscriptionId}/${resourceGroup}/${name}`.toLowerCase();
}

/** The key of a disk or snapshot from its resource id. */
function diskKeyOfId(id: string): string {
  const match =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/(?:disks|snapshots)\/([^/]+)$/i.exec(
      id,
    );
  return match === null ? id.toLowerCase() : snapshotKey(match[1] ?? '', match[2] ?? '', match[3] ?? '');
}

const snapshotKeyOfId = diskKeyOfId;

function sameId(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

function lastSegment(id: string): string {
  return id.split('/').at(-1) ?? id;
}

function galleryKey(ref: GalleryRef): string {
  return `${ref.subscriptionId}/${ref.resourceGroup}/${ref.galleryName}`.toLowerCase();
}

function definitionKey(ref: ImageDefinitionRef): string {
  return `${galleryKey(ref)}/${ref.imageName.toLowerCase()}`;
}

function versionKey(ref: ImageVersionRef): string {
  return `${definitionKey(ref)}/${ref.versionName.toLowerCase()}`;
}

function normaliseRegion(region: string): string {
  return region.replaceAll(' ', '').toLowerCase();
}
