/**
 * Plain virtual machines over @azure/arm-compute, read for the one thing the product asks of them: which
 * Flexible scale set ARM records each in (`properties.virtualMachineScaleSet.id`). A Flexible member's
 * providerID does not name its scale set, and its name need not start with the scale set's.
 */
import type { VirtualMachine } from '@azure/arm-compute';

import type { VirtualMachineSummary } from '../../domain/compute.js';
import { definedOnly } from '../../domain/optional.js';
import type { ScaleSetRef, VirtualMachineRef } from '../../domain/resource-id.js';
import { describeScaleSet, scaleSetResourceId, virtualMachineResourceId } from '../../domain/resource-id.js';
import type { VirtualMachinesPort } from '../../ports/compute/virtual-machines.js';
import type { ArmClients } from './arm-clients.js';
import { withArmErrors } from './errors.js';

export class ArmVirtualMachines implements VirtualMachinesPort {
  constructor(private readonly clients: ArmClients) {}

  /** A resource group's VMs (paged); with `scaleSet`, ARM's filter keeps that Flexible scale set's members. */
  async list(
    subscriptionId: string,
    resourceGroup: string,
    scaleSet?: ScaleSetRef,
  ): Promise<VirtualMachineSummary[]> {
    const action =
      scaleSet === undefined
        ? `listing virtual machines of resource group ${resourceGroup}`
        : `listing the members of scale set ${describeScaleSet(scaleSet)}`;
    const client = this.clients.client(subscriptionId, action);
    const filter =
      scaleSet === undefined ? undefined : `'virtualMachineScaleSet/id' eq '${scaleSetResourceId(scaleSet)}'`;
    return withArmErrors(action, async () => {
      const found: VirtualMachineSummary[] = [];
      for await (const vm of client.virtualMachines.list(
        resourceGroup,
        filter === undefined ? {} : { filter },
      )) {
        const summary = toSummary(vm);
        if (summary !== undefined) found.push(summary);
      }
      return found;
    });
  }

  async get(ref: VirtualMachineRef): Promise<VirtualMachineSummary> {
    const action = `reading virtual machine ${ref.resourceGroup}/${ref.name}`;
    const client = this.clients.client(ref.subscriptionId, action);
    const vm = await withArmErrors(action, () => client.virtualMachines.get(ref.resourceGroup, ref.name));
    return toSummary(vm) ?? { id: virtualMachineResourceId(ref), name: ref.name };
  }
}

function toSummary(vm: VirtualMachine): VirtualMachineSummary | undefined {
  if (vm.id === undefined || vm.name === undefined) return undefined;
  const owner = vm.virtualMachineScaleSet?.id;
  return { id: vm.id, name: vm.name, ...definedOnly({ scaleSetId: owner }) };
}
