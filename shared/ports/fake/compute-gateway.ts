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
  PowerState,
  RunCommandState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
  VirtualMachineSummary,
} from '../../domain/compute.js';
import { NotFoundError, TerminalError, TransientError } from '../../domain/errors.js';
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
import type { ScaleSet } from '../../domain/scale-set.js';
import type {
  ComputeGateway,
  ImageVersionRequest,
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
  runCommand: 30_000,
};

export interface FakeComputeOptions {
  /** The clock transitions follow (epoch ms); a test's virtual clock. Default: Date.now. */
  readonly now?: () => number;
  readonly timings?: Partial<FakeComputeTimings>;
  /** Regions that refuse Standard_ZRS image versions. */
  readonly regionsWithoutZrs?: readonly string[];
}

/** A state that becomes `to` at `at` (epoch ms), applied when the resource is next looked at. */
interface Pending<T> {
  readonly to: T;
  readonly at: number;
}

interface InstanceRecord {
  instance: ScaleSetInstance;
  pending?: Pending<PowerState>;
  /** A start that never completes (allocation failure): the instance stays stopped. */
  startFails: boolean;
}

interface ScaleSetRecord {
  scaleSet: ScaleSet;
  extensions: ScaleSetExtension[];
  pendingExtensions: Map<string, number>;
  pendingImage?: Pending<string>;
  customDataBase64?: string;
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
  #galleries = new Set<string>();
  #definitions = new Map<string, ImageDefinition>();
  #versions = new Map<string, TimedRecord<ImageVersion>>();
  /** Outcomes of the next long-running creations, in order; Succeeded when none is queued. */
  #outcomes = { snapshot: [] as ('Succeeded' | 'Failed')[], imageVersion: [] as ('Succeeded' | 'Failed')[] };
  #runCommands: FakeRunCommand[] = [];
  #runCommandOutcomes: FakeRunCommandOutcome[] = [];

  constructor(options: FakeComputeOptions = {}) {
    super(options.now ?? (() => Date.now()));
    this.#timings = { ...DEFAULT_COMPUTE_TIMINGS, ...options.timings };
    this.#noZrs = new Set((options.regionsWithoutZrs ?? []).map(normaliseRegion));
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
    this.#galleries = new Set();
    this.#definitions = new Map();
    this.#versions = new Map();
    this.#outcomes = { snapshot: [], imageVersion: [] };
  }

  addScaleSet(scaleSet: ScaleSet, extensions: readonly ScaleSetExtension[] = []): void {
    this.#scaleSets.set(scaleSetKey(scaleSet), {
      scaleSet,
      extensions: [...extensions],
      pendingExtensions: new Map(),
    });
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
    this.#instances.set(instanceKey(scaleSet, instanceId), { instance, startFails: false });
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
      return { ...record.scaleSet };
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

  requestStart(instance: ScaleSetInstance): Promise<void> {
    return this.call('requestStart', [instance], () => {
      const record = this.#instanceRecord(instance.scaleSet, instance.instanceId);
      const state = this.#settleInstance(record).powerState;
      if (state === 'running' || state === 'starting') return;
      if (record.startFails) return;
      record.instance = { ...record.instance, powerState: 'starting' };
      record.pending = { to: 'running', at: this.now() + this.#timings.start };
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

  ensureGallery(ref: GalleryRef, location: string, tags: Readonly<Record<string, string>>): Promise<void> {
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
        if (existing.sourceId?.toLowerCase() !== request.snapshotId.toLowerCase()) {
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
        sourceId: request.snapshotId,
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

  requestImageVersionExclusion(ref: ImageVersionRef, excludeFromLatest: boolean): Promise<void> {
    return this.call('requestImageVersionExclusion', [ref, excludeFromLatest], () => {
      const key = versionKey(ref);
      const existing = this.#settleKey(this.#versions, key);
      const record = this.#versions.get(key);
      if (existing === undefined || record === undefined) {
        throw new NotFoundError('ResourceNotFound', `updating image version ${ref.versionName}: not found`);
      }
      if (existing.excludeFromLatest === excludeFromLatest) return;
      record.value = { ...existing, provisioningState: 'Updating' };
      record.pending = {
        to: { ...existing, excludeFromLatest, provisioningState: 'Succeeded' },
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
      const record = this.#scaleSetRecord(
        ref,
        `requesting image update of scale set ${describeScaleSet(ref)}`,
      );
      this.#settleScaleSet(record);
      record.scaleSet = { ...record.scaleSet, provisioningState: 'Updating' };
      record.customDataBase64 = update.customDataBase64;
      record.pendingImage = { to: update.imageId, at: this.now() + this.#timings.scaleSetUpdate };
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
    return record.instance;
  }

  #settleScaleSet(record: ScaleSetRecord): void {
    const now = this.now();
    const pending = record.pendingImage;
    if (pending !== undefined && now >= pending.at) {
      record.scaleSet = {
        ...record.scaleSet,
        imageReference: { kind: 'gallery', id: pending.to },
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

function instanceKey(scaleSet: ScaleSetRef, instanceId: string): string {
  return `${scaleSetKey(scaleSet)}/${instanceId.toLowerCase()}`;
}

function snapshotKey(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${subscriptionId}/${resourceGroup}/${name}`.toLowerCase();
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
