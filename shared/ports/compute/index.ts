/**
 * The ports to Azure compute, one per resource (scale sets, their instances, virtual machines, disks,
 * snapshots, the Compute Gallery and its image versions, Run Command). Implemented by
 * shared/adapters/azure over @azure/arm-compute; use cases and tests depend only on these contracts.
 *
 * Contract for every method of every port:
 * - Inputs and outputs are domain types; no SDK type crosses this boundary.
 * - A missing resource is `NotFoundError` for reads and a no-op for deletions.
 * - Throttling (429), 5xx and connection failures are `TransientError` (with `retryAfterMs` when ARM
 *   said so); everything else the caller cannot fix by retrying is `TerminalError` with an ARM code.
 * - Long-running operations are only *requested* here (`request*`): the method returns once ARM has
 *   accepted the request. Callers observe completion with the matching `get*` (monitor pattern), so
 *   no activity ever blocks for the 10 minutes to hours an image version takes.
 * - Every `request*` is idempotent: requesting a state that is already reached or under way is safe.
 */
import type { DisksPort } from './disks.js';
import type { GalleryPort } from './gallery.js';
import type { ImageVersionsPort } from './image-versions.js';
import type { InstancesPort } from './instances.js';
import type { RunCommandsPort } from './run-commands.js';
import type { ScaleSetsPort } from './scale-sets.js';
import type { SnapshotsPort } from './snapshots.js';
import type { VirtualMachinesPort } from './virtual-machines.js';

export type { DiskFromSnapshotRequest, DisksPort } from './disks.js';
export type { GalleryPort } from './gallery.js';
export type { ImageVersionRequest, ImageVersionsPort } from './image-versions.js';
export type { InstancesPort } from './instances.js';
export type { NamedByCaller } from './named-by-caller.js';
export type { RunCommandsPort } from './run-commands.js';
export type {
  ScaleSetChange,
  ScaleSetCreated,
  ScaleSetCreation,
  ScaleSetImageUpdate,
  ScaleSetsPort,
} from './scale-sets.js';
export type { SnapshotRequest, SnapshotsPort } from './snapshots.js';
export type { VirtualMachinesPort } from './virtual-machines.js';

/** Azure compute as the use cases see it: one port per resource. */
export interface ComputePorts {
  readonly scaleSets: ScaleSetsPort;
  readonly instances: InstancesPort;
  readonly virtualMachines: VirtualMachinesPort;
  readonly disks: DisksPort;
  readonly snapshots: SnapshotsPort;
  readonly gallery: GalleryPort;
  readonly imageVersions: ImageVersionsPort;
  readonly runCommands: RunCommandsPort;
}

/** A method of one of the ports, as `<port>.<method>` (what the fakes record, e.g. `scaleSets.get`). */
export type ComputeMethod = {
  [Port in keyof ComputePorts]: `${Port}.${keyof ComputePorts[Port] & string}`;
}[keyof ComputePorts];
