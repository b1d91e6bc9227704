/** The port to a scale set's members: Uniform instances and Flexible member VMs (contract: index.ts). */
import type { DataDiskTarget, PowerTarget, ScaleSetInstance } from '../../domain/compute.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';

export interface InstancesPort {
  /** Uniform: instance id; Flexible: member VM name. */
  get(scaleSet: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance>;
  /** Every instance (Uniform) or member VM (Flexible), with its power state and the image it was built from. */
  list(scaleSet: ScaleSetRef): Promise<ScaleSetInstance[]>;
  /**
   * Graceful power off (not deallocate: the disk and IP stay). No-op when stopping or stopped, judged on
   * `instance` as `get` just returned it (its power state is not read again).
   */
  requestPowerOff(instance: ScaleSetInstance): Promise<void>;
  /**
   * No-op when starting or running, judged on `instance` as last seen (`get`, or a read the caller made
   * just before): its power state is not read again.
   */
  requestStart(instance: PowerTarget): Promise<void>;
  /**
   * Attaches a managed data disk at `lun` (POST …/attachDetachDataDisks: only the disks change, no
   * get-modify-put of the instance model). No-op when the disk is attached to the instance already,
   * judged on `instance` as `get` just returned it (not read again).
   */
  requestDataDiskAttach(instance: DataDiskTarget, diskId: string, lun: number): Promise<void>;
  /** Detaches a data disk; no-op when it is not attached to the instance (judged on `instance`). */
  requestDataDiskDetach(instance: DataDiskTarget, diskId: string): Promise<void>;
  /** Deletes one instance (and its OS disk); a no-op when it is already gone. */
  requestDeletion(scaleSet: ScaleSetRef, instanceId: string): Promise<void>;
}
