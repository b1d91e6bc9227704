/**
 * The port to plain virtual machines, the one answer to which Flexible scale set a VM belongs to (contract:
 * index.ts). A Flexible member's providerID is a plain VM id that cannot be told from a standalone VM's,
 * and its name need not start with its scale set's: only ARM's record, the VM's
 * `properties.virtualMachineScaleSet.id` (`VirtualMachineSummary.scaleSetId`), says.
 */
import type { VirtualMachineSummary } from '../../domain/compute.js';
import type { ScaleSetRef, VirtualMachineRef } from '../../domain/resource-id.js';

export interface VirtualMachinesPort {
  /**
   * The virtual machines of a resource group (one paged list); with `scaleSet`, only the members of that
   * Flexible scale set (ARM's `virtualMachineScaleSet/id` filter). Flexible members are plain VMs whose
   * providerID does not name their scale set: this is how a node is known to belong to one.
   */
  list(
    subscriptionId: string,
    resourceGroup: string,
    scaleSet?: ScaleSetRef,
  ): Promise<VirtualMachineSummary[]>;
  /** One virtual machine with the scale set ARM records it in (none for a standalone VM). */
  get(vm: VirtualMachineRef): Promise<VirtualMachineSummary>;
}
