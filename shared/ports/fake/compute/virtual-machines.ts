/**
 * The fake virtual machines port: the estate's Flexible members (instances with a plain VM id) as ARM
 * lists and reads them, each with the scale set it belongs to (`scaleSetId`), whatever its name.
 */
import type { VirtualMachineSummary } from '../../../domain/compute.js';
import { NotFoundError } from '../../../domain/errors.js';
import type { ScaleSetRef, VirtualMachineRef } from '../../../domain/resource-id.js';
import {
  isScaleSetInstanceId,
  resourceGroupOfId,
  scaleSetKey,
  scaleSetResourceId,
  virtualMachineResourceId,
} from '../../../domain/resource-id.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { VirtualMachinesPort } from '../../compute/virtual-machines.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';

export class FakeVirtualMachines implements VirtualMachinesPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  list(
    subscriptionId: string,
    resourceGroup: string,
    scaleSet?: ScaleSetRef,
  ): Promise<VirtualMachineSummary[]> {
    return this.log.call('virtualMachines.list', [subscriptionId, resourceGroup, scaleSet], () =>
      [...this.estate.instances.values()]
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

  get(vm: VirtualMachineRef): Promise<VirtualMachineSummary> {
    return this.log.call('virtualMachines.get', [vm], () => {
      const id = virtualMachineResourceId(vm).toLowerCase();
      const member = [...this.estate.instances.values()].find(
        (record) => record.instance.resourceId.toLowerCase() === id,
      );
      if (member === undefined) {
        throw new NotFoundError(
          'ResourceNotFound',
          `reading virtual machine ${vm.resourceGroup}/${vm.name}: not found`,
        );
      }
      const { instance } = member;
      return {
        id: instance.resourceId,
        name: instance.instanceId,
        scaleSetId: scaleSetResourceId(instance.scaleSet),
      };
    });
  }
}
