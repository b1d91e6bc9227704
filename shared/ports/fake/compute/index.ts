/**
 * In-memory compute ports for fast tests of whatever uses them (activities, orchestrations): scale sets
 * with their model and extensions, instances whose power state changes when asked, snapshots and gallery
 * image versions whose provisioning states move on with the fake's clock (or stay where a test puts
 * them). One fake per port (scale-sets.ts, instances.ts, …) over one simulated estate (estate.ts), one
 * clock and one call log. They keep the ports' contract: NotFoundError for missing reads, no-op deletions
 * of absent resources, idempotent requests, ARM's refusals (a name taken, a resource still being deleted,
 * ZRS where a region has no zones). Calls are logged as `<port>.<method>` (`scaleSets.get`,
 * `snapshots.request`); `nextError` queues one-shot failures, `failAllUntil` an ARM outage; `reset`
 * starts afresh.
 */
import type {
  ImageDefinitionRef,
  ImageVersion,
  ManagedDisk,
  PowerState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
} from '../../../domain/compute.js';
import { definedOnly } from '../../../domain/optional.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import { scaleSetKey } from '../../../domain/resource-id.js';
import type { ScaleSet } from '../../../domain/scale-set.js';
import type { ComputeMethod, ComputePorts } from '../../compute/index.js';
import { CallLog, RecordingFake } from '../recording-fake.js';
import { FakeDisks } from './disks.js';
import {
  ComputeEstate,
  type FakeComputeOptions,
  type FakeRunCommandOutcome,
  type Pending,
} from './estate.js';
import { FakeGallery } from './gallery.js';
import { FakeImageVersions } from './image-versions.js';
import { FakeInstances } from './instances.js';
import { fieldsOfReference, instanceKey } from './keys.js';
import { FakeRunCommands } from './run-commands.js';
import { FakeScaleSets } from './scale-sets.js';
import { FakeSnapshots } from './snapshots.js';
import { FakeVirtualMachines } from './virtual-machines.js';

export type {
  FakeComputeOptions,
  FakeComputeTimings,
  FakeRunCommand,
  FakeRunCommandOutcome,
} from './estate.js';

export class FakeCompute extends RecordingFake<ComputeMethod> implements ComputePorts {
  readonly scaleSets: FakeScaleSets;
  readonly instances: FakeInstances;
  readonly virtualMachines: FakeVirtualMachines;
  readonly disks: FakeDisks;
  readonly snapshots: FakeSnapshots;
  readonly gallery: FakeGallery;
  readonly imageVersions: FakeImageVersions;
  readonly runCommands: FakeRunCommands;
  private readonly estate: ComputeEstate;

  constructor(options: FakeComputeOptions = {}) {
    super(new CallLog<ComputeMethod>(options.now ?? (() => Date.now())));
    this.estate = new ComputeEstate(this.now, options);
    this.scaleSets = new FakeScaleSets(this.log, this.estate);
    this.instances = new FakeInstances(this.log, this.estate);
    this.virtualMachines = new FakeVirtualMachines(this.log, this.estate);
    this.disks = new FakeDisks(this.log, this.estate);
    this.snapshots = new FakeSnapshots(this.log, this.estate);
    this.gallery = new FakeGallery(this.log, this.estate);
    this.imageVersions = new FakeImageVersions(this.log, this.estate);
    this.runCommands = new FakeRunCommands(this.log, this.estate);
  }

  // ---- test controls -----------------------------------------------------------------------------

  /** Forgets every resource, call and queued error. */
  override reset(): void {
    super.reset();
    this.estate.reset();
  }

  /** The next snapshot or image version created ends in this state. */
  nextOutcome(kind: 'snapshot' | 'imageVersion', outcome: 'Succeeded' | 'Failed'): void {
    this.estate.outcomes[kind].push(outcome);
  }

  /** The next Run Command ends this way (then `succeeded` again). */
  nextRunCommandOutcome(outcome: FakeRunCommandOutcome): void {
    this.estate.runCommandOutcomes.push(outcome);
  }

  addScaleSet(scaleSet: ScaleSet, extensions: readonly ScaleSetExtension[] = []): void {
    this.estate.scaleSets.set(scaleSetKey(scaleSet), {
      scaleSet: { ...scaleSet, ...fieldsOfReference(scaleSet.imageReference) },
      extensions: [...extensions],
      pendingExtensions: new Map(),
      etag: 1,
      nextInstance: 0,
    });
  }

  /** Another tool writes the scale set (its etag changes); `imageId` also changes its image. */
  changeScaleSetElsewhere(ref: ScaleSetRef, imageId?: string): void {
    const record = this.estate.scaleSetRecord(ref, 'changing a scale set elsewhere');
    this.estate.settleScaleSet(record);
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
    return this.estate.addInstance(scaleSet, instanceId, fields);
  }

  /**
   * The guest powers itself off at `at` (what the prep pod's `poweroff` does). Returns what calls it
   * off, as long as it has not happened.
   */
  schedulePowerOff(scaleSet: ScaleSetRef, instanceId: string, at: number): () => void {
    const record = this.estate.instances.get(instanceKey(scaleSet, instanceId));
    if (record === undefined) return () => undefined;
    const pending: Pending<PowerState> = { to: 'stopped', at };
    record.pending = pending;
    return () => {
      if (record.pending === pending) delete record.pending;
    };
  }

  /** Starts of this instance never complete (capacity, a broken host): it stays stopped. */
  failStarts(scaleSet: ScaleSetRef, instanceId: string): void {
    const record = this.estate.instances.get(instanceKey(scaleSet, instanceId));
    if (record !== undefined) record.startFails = true;
  }

  /** Removes an instance (scaled in by the autoscaler or an operator). */
  deleteInstance(scaleSet: ScaleSetRef, instanceId: string): void {
    this.estate.instances.delete(instanceKey(scaleSet, instanceId));
  }

  /** The scale set as it is now (model updates applied once due). */
  scaleSetState(ref: ScaleSetRef): (ScaleSet & { readonly customDataBase64?: string }) | undefined {
    const record = this.estate.scaleSets.get(scaleSetKey(ref));
    if (record === undefined) return undefined;
    this.estate.settleScaleSet(record);
    return {
      ...record.scaleSet,
      ...definedOnly({ customDataBase64: record.customDataBase64 }),
    };
  }

  instanceState(scaleSet: ScaleSetRef, instanceId: string): ScaleSetInstance | undefined {
    const record = this.estate.instances.get(instanceKey(scaleSet, instanceId));
    return record === undefined ? undefined : this.estate.settleInstance(record);
  }

  /** Snapshots that exist now (deletions applied once due). */
  snapshotsNow(): Snapshot[] {
    return [...this.estate.snapshots.entries()].flatMap(([key, record]) => {
      const value = this.estate.settle(this.estate.snapshots, key, record);
      return value === undefined ? [] : [value];
    });
  }

  /** Snapshots a run left: those that exist now, less those ARM is deleting (given back: runs do not wait). */
  snapshotsLeft(): Snapshot[] {
    return this.snapshotsNow().filter((snapshot) => snapshot.provisioningState !== 'Deleting');
  }

  /** Managed disks a run left: those that exist now, less those ARM is deleting (as snapshotsLeft). */
  disksLeft(): ManagedDisk[] {
    return this.disksNow().filter((disk) => disk.provisioningState !== 'Deleting');
  }

  /** Managed disks that exist now (deletions applied once due). */
  disksNow(): ManagedDisk[] {
    for (const record of this.estate.instances.values()) this.estate.settleInstance(record);
    return [...this.estate.disks.entries()].flatMap(([key, record]) => {
      const value = this.estate.settle(this.estate.disks, key, record);
      return value === undefined ? [] : [value];
    });
  }

  /** Image versions of a definition that exist now. */
  imageVersionsNow(ref: ImageDefinitionRef): ImageVersion[] {
    return this.estate.versionsNow(ref);
  }
}
