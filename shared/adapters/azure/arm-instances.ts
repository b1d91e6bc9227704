/**
 * Scale set members over @azure/arm-compute: Uniform instances (`virtualMachineScaleSetVMs`) and
 * Flexible members (plain `virtualMachines`, in their own resource group), read with their instance view,
 * powered off gracefully and started. Power requests are idempotent: a VM already on its way is left.
 * Plain VMs and their recorded scale set: arm-virtual-machines.ts.
 */
import type { AttachDetachDataDisksRequest } from '@azure/arm-compute';

import type { DataDiskTarget, PowerState, PowerTarget, ScaleSetInstance } from '../../domain/compute.js';
import { ignoreNotFound, NotFoundError } from '../../domain/errors.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import {
  describeScaleSet,
  isScaleSetInstanceId,
  resourceGroupOfId,
  sameResourceId,
  scaleSetResourceId,
} from '../../domain/resource-id.js';
import type { InstancesPort } from '../../ports/compute/instances.js';
import type { ArmClients } from './arm-clients.js';
import type { ArmScaleSets } from './arm-scale-sets.js';
import { withArmErrors } from './errors.js';
import { isMemberOf, toFlexibleInstance, toUniformInstance } from './to-domain-instances.js';

const STOPPED_OR_STOPPING: ReadonlySet<PowerState> = new Set([
  'stopping',
  'stopped',
  'deallocating',
  'deallocated',
]);
const RUNNING_OR_STARTING: ReadonlySet<PowerState> = new Set(['starting', 'running']);

export class ArmInstances implements InstancesPort {
  constructor(
    private readonly clients: ArmClients,
    private readonly scaleSets: ArmScaleSets,
  ) {}

  async get(scaleSetOrRef: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance> {
    const action = `reading instance ${instanceId} of scale set ${describeScaleSet(scaleSetOrRef)}`;
    const client = this.clients.client(scaleSetOrRef.subscriptionId, action);
    const mode = await this.scaleSets.orchestrationMode(scaleSetOrRef, action);
    // A full ScaleSet is accepted (it saves a read) but only the ref travels on with the instance.
    const { subscriptionId, resourceGroup, name } = scaleSetOrRef;
    const scaleSet: ScaleSetRef = { subscriptionId, resourceGroup, name };
    if (mode === 'Uniform') {
      const vm = await withArmErrors(action, () =>
        client.virtualMachineScaleSetVMs.get(scaleSet.resourceGroup, scaleSet.name, instanceId, {
          expand: 'instanceView',
        }),
      );
      return toUniformInstance(scaleSet, vm);
    }
    const vm = await withArmErrors(action, () =>
      client.virtualMachines.get(scaleSet.resourceGroup, instanceId, { expand: 'instanceView' }),
    );
    if (!isMemberOf(vm, scaleSet)) {
      // The VM exists but is not this scale set's instance: for the caller, the instance is missing.
      throw new NotFoundError(
        'InstanceNotFound',
        `${action}: virtual machine ${instanceId} is not a member of the scale set (it belongs to ${vm.virtualMachineScaleSet?.id ?? 'no scale set'})`,
      );
    }
    return toFlexibleInstance(scaleSet, vm);
  }

  /** Every instance (Uniform) or member VM (Flexible) with its instance view, in ARM's order. */
  async list(scaleSetOrRef: ScaleSetRef): Promise<ScaleSetInstance[]> {
    const action = `listing instances of scale set ${describeScaleSet(scaleSetOrRef)}`;
    const client = this.clients.client(scaleSetOrRef.subscriptionId, action);
    const mode = await this.scaleSets.orchestrationMode(scaleSetOrRef, action);
    const { subscriptionId, resourceGroup, name } = scaleSetOrRef;
    const scaleSet: ScaleSetRef = { subscriptionId, resourceGroup, name };
    return withArmErrors(action, async () => {
      const instances: ScaleSetInstance[] = [];
      if (mode === 'Uniform') {
        for await (const vm of client.virtualMachineScaleSetVMs.list(resourceGroup, name, {
          expand: 'instanceView',
        })) {
          instances.push(toUniformInstance(scaleSet, vm));
        }
        return instances;
      }
      // Flexible members live as plain VMs; ARM filters them by their scale set (in its resource group).
      for await (const vm of client.virtualMachines.list(resourceGroup, {
        filter: `'virtualMachineScaleSet/id' eq '${scaleSetResourceId(scaleSet)}'`,
        expand: 'instanceView',
      })) {
        if (isMemberOf(vm, scaleSet)) instances.push(toFlexibleInstance(scaleSet, vm));
      }
      return instances;
    });
  }

  /** Deletes one instance; a no-op when it is gone already. */
  async requestDeletion(scaleSetOrRef: ScaleSetRef, instanceId: string): Promise<void> {
    const action = `requesting deletion of instance ${instanceId} of scale set ${describeScaleSet(scaleSetOrRef)}`;
    const client = this.clients.client(scaleSetOrRef.subscriptionId, action);
    const mode = await this.scaleSets.orchestrationMode(scaleSetOrRef, action);
    const { resourceGroup, name } = scaleSetOrRef;
    await withArmErrors(action, async () => {
      if (mode === 'Uniform') {
        await client.virtualMachineScaleSetVMs.beginDelete(resourceGroup, name, instanceId);
      } else {
        await client.virtualMachines.beginDelete(resourceGroup, instanceId);
      }
    }).catch(ignoreNotFound);
  }

  async requestPowerOff(instance: ScaleSetInstance): Promise<void> {
    const action = `requesting power off of instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    const client = this.clients.client(instance.scaleSet.subscriptionId, action);
    // Judged on the instance the caller just read (with its instance view): no second read.
    if (STOPPED_OR_STOPPING.has(instance.powerState)) {
      return;
    }
    const { resourceGroup, name } = instance.scaleSet;
    await withArmErrors(action, async () => {
      // skipShutdown false: a graceful ACPI shutdown, so the file systems are clean for the snapshot.
      if (isScaleSetInstanceId(instance.resourceId)) {
        await client.virtualMachineScaleSetVMs.beginPowerOff(resourceGroup, name, instance.instanceId, {
          skipShutdown: false,
        });
      } else {
        await client.virtualMachines.beginPowerOff(vmResourceGroup(instance), instance.instanceId, {
          skipShutdown: false,
        });
      }
    });
  }

  async requestStart(instance: PowerTarget): Promise<void> {
    const action = `requesting start of instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    const client = this.clients.client(instance.scaleSet.subscriptionId, action);
    if (RUNNING_OR_STARTING.has(instance.powerState)) {
      return;
    }
    const { resourceGroup, name } = instance.scaleSet;
    await withArmErrors(action, async () => {
      if (isScaleSetInstanceId(instance.resourceId)) {
        await client.virtualMachineScaleSetVMs.beginStart(resourceGroup, name, instance.instanceId);
      } else {
        await client.virtualMachines.beginStart(vmResourceGroup(instance), instance.instanceId);
      }
    });
  }

  /**
   * POST …/attachDetachDataDisks (Uniform instance or Flexible VM): names only the disk, so nothing else
   * of the instance model is re-submitted (a PUT of the model would also carry its network profile).
   */
  async requestDataDiskAttach(instance: DataDiskTarget, diskId: string, lun: number): Promise<void> {
    const action = `requesting attach of disk ${lastSegment(diskId)} to instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    // Judged on the instance as the caller read it (just now, or a past view it judges again on refusal).
    if ((instance.dataDisks ?? []).some((disk) => sameResourceId(disk.diskId, diskId))) return;
    await this.#attachDetach(instance, action, { dataDisksToAttach: [{ diskId, lun, caching: 'None' }] });
  }

  async requestDataDiskDetach(instance: DataDiskTarget, diskId: string): Promise<void> {
    const action = `requesting detach of disk ${lastSegment(diskId)} from instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    const attached = (instance.dataDisks ?? []).find((disk) => sameResourceId(disk.diskId, diskId));
    if (attached === undefined || attached.toBeDetached === true) return;
    await this.#attachDetach(instance, action, { dataDisksToDetach: [{ diskId }] });
  }

  async #attachDetach(
    instance: DataDiskTarget,
    action: string,
    request: AttachDetachDataDisksRequest,
  ): Promise<void> {
    const client = this.clients.client(instance.scaleSet.subscriptionId, action);
    const { resourceGroup, name } = instance.scaleSet;
    await withArmErrors(action, async () => {
      if (isScaleSetInstanceId(instance.resourceId)) {
        await client.virtualMachineScaleSetVMs.beginAttachDetachDataDisks(
          resourceGroup,
          name,
          instance.instanceId,
          request,
        );
      } else {
        await client.virtualMachines.beginAttachDetachDataDisks(
          vmResourceGroup(instance),
          instance.instanceId,
          request,
        );
      }
    });
  }
}

/** A Flexible member's own resource group (taken from its id: it need not be the scale set's). */
function vmResourceGroup(instance: Pick<ScaleSetInstance, 'resourceId' | 'scaleSet'>): string {
  return resourceGroupOfId(instance.resourceId) ?? instance.scaleSet.resourceGroup;
}

function lastSegment(id: string): string {
  return id.split('/').at(-1) ?? id;
}
