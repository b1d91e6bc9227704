/**
 * In-memory Microsoft.Compute world of the simulator: scale sets (Uniform and Flexible) and their
 * instances, OS disks, snapshots, galleries, image definitions and versions, with simulated-time
 * transitions. The ARM handler serves it over HTTP; the world drives it directly and listens to it.
 *
 * Public API (stable, the world codes against it):
 * - seeding: `addScaleSet`, `addGallery`, `setRegionCapabilities`, `setRunCommandHandler`
 * - queries: `getScaleSet`, `listScaleSets`, `getScaleSetModel` (customData included), `listInstances`,
 *   `getInstance`, `findInstanceByVmId`, `findInstanceByProviderId`, `findInstanceByComputerName`,
 *   `getDisk`, `listSnapshots`, `getSnapshot`, `getGallery`, `getImageDefinition`, `listImageVersions`,
 *   `getImageVersion`, `regionCapabilities`, `runCommandHistory`
 * - world-driven operations: `powerOffInstance` (cause 'guest' for a prep pod), `deallocateInstance`,
 *   `startInstance`, `restartInstance`, `scaleOut`, `deleteInstance` (at once), `requestInstanceDelete`
 *   (ARM's DELETE: `Deleting`, then gone), `deleteScaleSet`; disks: `createDiskFromSnapshot`,
 *   `deleteDisk`, `changeDataDisks` (attach/detach), `setCopyObserver` (the world judges snapshots)
 * - events: `subscribe(listener)` → instance power changes, instance created / deleted, model changes.
 * Long-running changes take an optional `onComplete` and `failure` check (asked when the change would
 * complete; the handler wires it to the fault injector's `<action>#lro`). A new power operation on an
 * instance preempts the pending one (Canceled, OperationPreempted).
 * All ids are ARM resource ids and compare case-insensitively. All time comes from the injected clock.
 *
 * The work is done per Azure resource — `instance-state.ts` (VMs), `scale-set-state.ts`,
 * `disk-state.ts` (disks, snapshots), `gallery-state.ts` — over the maps of `compute-core.ts`; this
 * class is the one entry point, binding each operation to the part that owns it.
 */
import type { LatencyProfile, Scheduler, SimClock } from '../contracts.js';
import type { ComputeShared } from './compute-core.js';
import type { ComputeListener, ComputeStateOptions } from './compute-types.js';
import { DiskState } from './disk-state.js';
import { GalleryState } from './gallery-state.js';
import { InstanceState } from './instance-state.js';
import { ScaleSetState } from './scale-set-state.js';

export type { GalleryRecord, ImageRecord, VersionRecord } from './compute-core.js';
export {
  deepCopy,
  deterministicUuid,
  idKey,
  isGalleryImageReference,
  isObject,
  parseResourceId,
  textOr,
} from './compute-json.js';
export * from './compute-types.js';

const DEFAULT_SUBSCRIPTION = '00000000-0000-0000-0000-000000000000';

export class ComputeState {
  readonly clock: SimClock;
  readonly scheduler: Scheduler;
  readonly latency: LatencyProfile;
  readonly defaultLocation: string;
  readonly defaultSubscriptionId: string;

  // Seeding and events.
  readonly addScaleSet: ScaleSetState['addScaleSet'];
  readonly addGallery: GalleryState['addGallery'];
  readonly setRegionCapabilities: GalleryState['setRegionCapabilities'];
  readonly regionCapabilities: GalleryState['regionCapabilities'];
  readonly setRunCommandHandler: InstanceState['setRunCommandHandler'];
  readonly resourceGroupsInUse: InstanceState['resourceGroupsInUse'];
  // Scale sets.
  readonly getScaleSet: ScaleSetState['getScaleSet'];
  readonly listScaleSets: ScaleSetState['listScaleSets'];
  readonly getScaleSetModel: ScaleSetState['getScaleSetModel'];
  readonly createScaleSet: ScaleSetState['createScaleSet'];
  readonly replaceScaleSet: ScaleSetState['replaceScaleSet'];
  readonly deleteScaleSet: ScaleSetState['deleteScaleSet'];
  readonly requestScaleSetDelete: ScaleSetState['requestScaleSetDelete'];
  readonly scaleSetResource: ScaleSetState['scaleSetResource'];
  readonly listScaleSetIds: ScaleSetState['listScaleSetIds'];
  readonly deleteExtension: ScaleSetState['deleteExtension'];
  readonly extensionDeleteSeconds: ScaleSetState['extensionDeleteSeconds'];
  // Instances (VMSS VMs and Flexible VMs).
  readonly listInstances: InstanceState['listInstances'];
  readonly getInstance: InstanceState['getInstance'];
  readonly getInstanceBootModel: InstanceState['getInstanceBootModel'];
  readonly findInstanceByVmId: InstanceState['findInstanceByVmId'];
  readonly findInstanceByProviderId: InstanceState['findInstanceByProviderId'];
  readonly findInstanceByComputerName: InstanceState['findInstanceByComputerName'];
  readonly listVirtualMachineIds: InstanceState['listVirtualMachineIds'];
  readonly instanceDetails: InstanceState['instanceDetails'];
  readonly powerOffInstance: InstanceState['powerOffInstance'];
  readonly deallocateInstance: InstanceState['deallocateInstance'];
  readonly startInstance: InstanceState['startInstance'];
  readonly restartInstance: InstanceState['restartInstance'];
  readonly scaleOut: InstanceState['scaleOut'];
  readonly deleteInstance: InstanceState['deleteInstance'];
  readonly requestInstanceDelete: InstanceState['requestInstanceDelete'];
  readonly runCommand: InstanceState['runCommand'];
  readonly runCommandHistory: InstanceState['runCommandHistory'];
  // Disks and snapshots.
  readonly listDisks: DiskState['listDisks'];
  readonly getDiskContent: DiskState['getDiskContent'];
  readonly peekDiskImages: DiskState['peekDiskImages'];
  readonly setDiskContent: DiskState['setDiskContent'];
  readonly getSnapshotContent: DiskState['getSnapshotContent'];
  readonly getDisk: DiskState['getDisk'];
  readonly listSnapshots: DiskState['listSnapshots'];
  readonly getSnapshot: DiskState['getSnapshot'];
  readonly createSnapshot: DiskState['createSnapshot'];
  readonly deleteSnapshot: DiskState['deleteSnapshot'];
  readonly createDiskFromSnapshot: DiskState['createDiskFromSnapshot'];
  readonly deleteDisk: DiskState['deleteDisk'];
  readonly setCopyObserver: DiskState['setCopyObserver'];
  readonly changeDataDisks: InstanceState['changeDataDisks'];
  // Galleries, image definitions, image versions.
  readonly getGallery: GalleryState['getGallery'];
  readonly listGalleries: GalleryState['listGalleries'];
  readonly putGallery: GalleryState['putGallery'];
  readonly getImageDefinition: GalleryState['getImageDefinition'];
  readonly listImageDefinitions: GalleryState['listImageDefinitions'];
  readonly putImageDefinition: GalleryState['putImageDefinition'];
  readonly getImageVersionRecord: GalleryState['getImageVersionRecord'];
  readonly getImageVersion: GalleryState['getImageVersion'];
  readonly getImageVersionContent: GalleryState['getImageVersionContent'];
  readonly listImageVersions: GalleryState['listImageVersions'];
  readonly listImageVersionRecords: GalleryState['listImageVersionRecords'];
  readonly createImageVersion: GalleryState['createImageVersion'];
  readonly replicationProgress: GalleryState['replicationProgress'];
  readonly updateImageVersion: GalleryState['updateImageVersion'];
  readonly deleteImageVersion: GalleryState['deleteImageVersion'];
  readonly deleteImageDefinitionWithVersions: GalleryState['deleteImageDefinitionWithVersions'];

  private readonly listeners = new Set<ComputeListener>();

  constructor(options: ComputeStateOptions) {
    this.clock = options.clock;
    this.scheduler = options.scheduler;
    this.latency = options.latency;
    this.defaultLocation = options.defaultLocation ?? 'westeurope';
    this.defaultSubscriptionId = options.defaultSubscriptionId ?? DEFAULT_SUBSCRIPTION;
    const shared: ComputeShared = {
      clock: this.clock,
      scheduler: this.scheduler,
      latency: this.latency,
      defaultLocation: this.defaultLocation,
      defaultSubscriptionId: this.defaultSubscriptionId,
      scaleSets: new Map(),
      instances: new Map(),
      disks: new Map(),
      snapshots: new Map(),
      galleries: new Map(),
      images: new Map(),
      versions: new Map(),
      listeners: this.listeners,
    };
    const instances = new InstanceState(shared);
    const scaleSets = new ScaleSetState(shared, instances);
    const disks = new DiskState(shared);
    const galleries = new GalleryState(shared);

    this.addScaleSet = scaleSets.addScaleSet.bind(scaleSets);
    this.addGallery = galleries.addGallery.bind(galleries);
    this.setRegionCapabilities = galleries.setRegionCapabilities.bind(galleries);
    this.regionCapabilities = galleries.regionCapabilities.bind(galleries);
    this.setRunCommandHandler = instances.setRunCommandHandler.bind(instances);
    this.resourceGroupsInUse = instances.resourceGroupsInUse.bind(instances);

    this.getScaleSet = scaleSets.getScaleSet.bind(scaleSets);
    this.listScaleSets = scaleSets.listScaleSets.bind(scaleSets);
    this.getScaleSetModel = scaleSets.getScaleSetModel.bind(scaleSets);
    this.createScaleSet = scaleSets.createScaleSet.bind(scaleSets);
    this.replaceScaleSet = scaleSets.replaceScaleSet.bind(scaleSets);
    this.deleteScaleSet = scaleSets.deleteScaleSet.bind(scaleSets);
    this.requestScaleSetDelete = scaleSets.requestScaleSetDelete.bind(scaleSets);
    this.scaleSetResource = scaleSets.scaleSetResource.bind(scaleSets);
    this.listScaleSetIds = scaleSets.listScaleSetIds.bind(scaleSets);
    this.deleteExtension = scaleSets.deleteExtension.bind(scaleSets);
    this.extensionDeleteSeconds = scaleSets.extensionDeleteSeconds.bind(scaleSets);

    this.listInstances = instances.listInstances.bind(instances);
    this.getInstance = instances.getInstance.bind(instances);
    this.getInstanceBootModel = instances.getInstanceBootModel.bind(instances);
    this.findInstanceByVmId = instances.findInstanceByVmId.bind(instances);
    this.findInstanceByProviderId = instances.findInstanceByProviderId.bind(instances);
    this.findInstanceByComputerName = instances.findInstanceByComputerName.bind(instances);
    this.listVirtualMachineIds = instances.listVirtualMachineIds.bind(instances);
    this.instanceDetails = instances.instanceDetails.bind(instances);
    this.powerOffInstance = instances.powerOffInstance.bind(instances);
    this.deallocateInstance = instances.deallocateInstance.bind(instances);
    this.startInstance = instances.startInstance.bind(instances);
    this.restartInstance = instances.restartInstance.bind(instances);
    this.scaleOut = instances.scaleOut.bind(instances);
    this.deleteInstance = instances.deleteInstance.bind(instances);
    this.requestInstanceDelete = instances.requestInstanceDelete.bind(instances);
    this.runCommand = instances.runCommand.bind(instances);
    this.runCommandHistory = instances.runCommandHistory.bind(instances);

    this.listDisks = disks.listDisks.bind(disks);
    this.getDiskContent = disks.getDiskContent.bind(disks);
    this.peekDiskImages = disks.peekDiskImages.bind(disks);
    this.setDiskContent = disks.setDiskContent.bind(disks);
    this.getSnapshotContent = disks.getSnapshotContent.bind(disks);
    this.getDisk = disks.getDisk.bind(disks);
    this.listSnapshots = disks.listSnapshots.bind(disks);
    this.getSnapshot = disks.getSnapshot.bind(disks);
    this.createSnapshot = disks.createSnapshot.bind(disks);
    this.deleteSnapshot = disks.deleteSnapshot.bind(disks);
    this.createDiskFromSnapshot = disks.createDiskFromSnapshot.bind(disks);
    this.deleteDisk = disks.deleteDisk.bind(disks);
    this.setCopyObserver = disks.setCopyObserver.bind(disks);
    this.changeDataDisks = instances.changeDataDisks.bind(instances);

    this.getGallery = galleries.getGallery.bind(galleries);
    this.listGalleries = galleries.listGalleries.bind(galleries);
    this.putGallery = galleries.putGallery.bind(galleries);
    this.getImageDefinition = galleries.getImageDefinition.bind(galleries);
    this.listImageDefinitions = galleries.listImageDefinitions.bind(galleries);
    this.putImageDefinition = galleries.putImageDefinition.bind(galleries);
    this.getImageVersionRecord = galleries.getImageVersionRecord.bind(galleries);
    this.getImageVersion = galleries.getImageVersion.bind(galleries);
    this.getImageVersionContent = galleries.getImageVersionContent.bind(galleries);
    this.listImageVersions = galleries.listImageVersions.bind(galleries);
    this.listImageVersionRecords = galleries.listImageVersionRecords.bind(galleries);
    this.createImageVersion = galleries.createImageVersion.bind(galleries);
    this.replicationProgress = galleries.replicationProgress.bind(galleries);
    this.updateImageVersion = galleries.updateImageVersion.bind(galleries);
    this.deleteImageVersion = galleries.deleteImageVersion.bind(galleries);
    this.deleteImageDefinitionWithVersions = galleries.deleteImageDefinitionWithVersions.bind(galleries);
  }

  /** Registers a listener for instance and model events; returns an unsubscribe function. */
  subscribe(listener: ComputeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
