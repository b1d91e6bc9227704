/**
 * The ComputeGateway over @azure/arm-compute 25.x, composed per Azure resource: scale sets
 * (arm-scale-sets.ts), their member VMs (arm-virtual-machines.ts), snapshots (arm-snapshots.ts), managed
 * disks (arm-disks.ts) and the
 * Compute Gallery (arm-gallery.ts), sharing one SDK client per subscription (arm-clients.ts). Long-running
 * operations are only submitted (`beginX` resolves once ARM accepted the request); callers poll with the
 * `get*` methods.
 */
import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersion,
  ImageVersionRef,
  ManagedDisk,
  PowerTarget,
  RunCommandState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
  VirtualMachineSummary,
} from '../../domain/compute.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import type { ScaleSet } from '../../domain/scale-set.js';
import type {
  ComputeGateway,
  DiskFromSnapshotRequest,
  ImageVersionRequest,
  ScaleSetChange,
  ScaleSetImageUpdate,
  SnapshotRequest,
} from '../../ports/compute-gateway.js';
import { ArmClients, type ArmComputeGatewayOptions } from './arm-clients.js';
import { ArmDisks } from './arm-disks.js';
import { ArmGallery } from './arm-gallery.js';
import { ArmRunCommands } from './arm-run-command.js';
import { ArmScaleSets } from './arm-scale-sets.js';
import { ArmSnapshots } from './arm-snapshots.js';
import { ArmVirtualMachines } from './arm-virtual-machines.js';

export class ArmComputeGateway implements ComputeGateway {
  readonly #scaleSets: ArmScaleSets;
  readonly #vms: ArmVirtualMachines;
  readonly #snapshots: ArmSnapshots;
  readonly #disks: ArmDisks;
  readonly #gallery: ArmGallery;
  readonly #runCommands: ArmRunCommands;

  constructor(options: ArmComputeGatewayOptions) {
    const clients = new ArmClients(options);
    this.#scaleSets = new ArmScaleSets(clients);
    this.#vms = new ArmVirtualMachines(clients, this.#scaleSets);
    this.#snapshots = new ArmSnapshots(clients);
    this.#disks = new ArmDisks(clients);
    this.#gallery = new ArmGallery(clients);
    this.#runCommands = new ArmRunCommands(clients);
  }

  getScaleSet(ref: ScaleSetRef, options?: { readonly imageFacts?: boolean }): Promise<ScaleSet> {
    return this.#scaleSets.get(ref, options?.imageFacts === true);
  }

  requestScaleSetImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void> {
    return this.#scaleSets.requestImageUpdate(ref, update);
  }

  requestScaleSetChange(ref: ScaleSetRef, change: ScaleSetChange): Promise<void> {
    return this.#scaleSets.requestChange(ref, change);
  }

  listInstances(scaleSet: ScaleSetRef): Promise<ScaleSetInstance[]> {
    return this.#vms.listInstances(scaleSet);
  }

  requestInstanceDeletion(scaleSet: ScaleSetRef, instanceId: string): Promise<void> {
    return this.#vms.requestDeletion(scaleSet, instanceId);
  }

  getDiskImageVersionId(diskId: string): Promise<string | undefined> {
    return this.#snapshots.diskImageVersionId(diskId);
  }

  requestImageVersionTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void> {
    return this.#gallery.requestVersionTags(ref, tags);
  }

  listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]> {
    return this.#scaleSets.listExtensions(ref);
  }

  requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void> {
    return this.#scaleSets.requestExtensionDeletion(ref, extensionName);
  }

  getInstance(scaleSet: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance> {
    return this.#vms.get(scaleSet, instanceId);
  }

  requestPowerOff(instance: ScaleSetInstance): Promise<void> {
    return this.#vms.requestPowerOff(instance);
  }

  requestStart(instance: PowerTarget): Promise<void> {
    return this.#vms.requestStart(instance);
  }

  requestDataDiskAttach(instance: ScaleSetInstance, diskId: string, lun: number): Promise<void> {
    return this.#vms.requestDataDiskAttach(instance, diskId, lun);
  }

  requestDataDiskDetach(instance: ScaleSetInstance, diskId: string): Promise<void> {
    return this.#vms.requestDataDiskDetach(instance, diskId);
  }

  getDisk(subscriptionId: string, resourceGroup: string, name: string): Promise<ManagedDisk> {
    return this.#disks.get(subscriptionId, resourceGroup, name);
  }

  listDisks(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]> {
    return this.#disks.list(subscriptionId, resourceGroup);
  }

  requestDiskFromSnapshot(request: DiskFromSnapshotRequest): Promise<void> {
    return this.#disks.requestFromSnapshot(request);
  }

  requestDiskDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    return this.#disks.requestDeletion(subscriptionId, resourceGroup, name);
  }

  listVirtualMachines(
    subscriptionId: string,
    resourceGroup: string,
    scaleSet?: ScaleSetRef,
  ): Promise<VirtualMachineSummary[]> {
    return this.#vms.list(subscriptionId, resourceGroup, scaleSet);
  }

  requestRunCommand(instance: ScaleSetInstance, script: readonly string[]): Promise<string> {
    return this.#runCommands.request(instance, script);
  }

  getRunCommand(scaleSet: ScaleSetRef, handle: string): Promise<RunCommandState> {
    return this.#runCommands.get(scaleSet, handle);
  }

  getSnapshot(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot> {
    return this.#snapshots.get(subscriptionId, resourceGroup, name);
  }

  listSnapshots(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]> {
    return this.#snapshots.list(subscriptionId, resourceGroup);
  }

  requestSnapshot(request: SnapshotRequest): Promise<void> {
    return this.#snapshots.request(request);
  }

  requestSnapshotDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    return this.#snapshots.requestDeletion(subscriptionId, resourceGroup, name);
  }

  ensureGallery(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    knownAbsent = false,
  ): Promise<void> {
    return this.#gallery.ensure(ref, location, tags, knownAbsent);
  }

  getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition> {
    return this.#gallery.getDefinition(ref);
  }

  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    knownAbsent = false,
  ): Promise<ImageDefinition> {
    return this.#gallery.ensureDefinition(ref, location, spec, knownAbsent);
  }

  listImageVersions(ref: ImageDefinitionRef): Promise<ImageVersion[]> {
    return this.#gallery.listVersions(ref);
  }

  getImageVersion(ref: ImageVersionRef): Promise<ImageVersion> {
    return this.#gallery.getVersion(ref);
  }

  requestImageVersion(request: ImageVersionRequest): Promise<void> {
    return this.#gallery.requestVersion(request);
  }

  requestImageVersionExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    return this.#gallery.requestVersionExclusion(ref, excludeFromLatest, addTags);
  }

  requestImageVersionDeletion(ref: ImageVersionRef): Promise<void> {
    return this.#gallery.requestVersionDeletion(ref);
  }
}
