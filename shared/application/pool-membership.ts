/**
 * Which nodes belong to which scale set, for Uniform and Flexible scale sets alike. A Uniform instance's
 * providerID names its scale set; a Flexible member's is a plain virtual machine id that cannot be told
 * from a standalone VM's, so its scale set comes from ARM (`virtualMachineScaleSet.id` of the VM): one
 * list of the resource group's VMs, never a guess from node names.
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import { groupNodesByScaleSet, type NodeGroups } from '../domain/prototype-selection.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { parseScaleSetResourceId, scaleSetKey } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';
import type { ComputeGateway } from '../ports/compute-gateway.js';

/**
 * Every scale set that has nodes in the cluster: Uniform ones from the providerIDs; Flexible ones from
 * the VMs of each resource group that holds a node with a plain VM providerID (standalone VMs, such as
 * control planes outside any scale set, name none and are left out).
 */
export async function scaleSetsWithNodes(
  compute: ComputeGateway,
  nodes: readonly ClusterNode[],
  groups: NodeGroups = groupNodesByScaleSet(nodes),
): Promise<ScaleSetRef[]> {
  const found = new Map<string, ScaleSetRef>();
  for (const members of groups.byScaleSet.values()) {
    const first = members[0];
    if (first === undefined || !first.providerId.ok) continue;
    const id = first.providerId.providerId;
    if (id.kind === 'scale-set-instance') found.set(scaleSetKey(id.scaleSet), id.scaleSet);
  }
  const vmGroups = new Map<string, { subscriptionId: string; resourceGroup: string; names: Set<string> }>();
  for (const entry of groups.byVirtualMachine.values()) {
    if (!entry.providerId.ok || entry.providerId.providerId.kind !== 'virtual-machine') continue;
    const vm = entry.providerId.providerId.virtualMachine;
    const key = `${vm.subscriptionId}/${vm.resourceGroup}`.toLowerCase();
    const group = vmGroups.get(key) ?? {
      subscriptionId: vm.subscriptionId,
      resourceGroup: vm.resourceGroup,
      names: new Set<string>(),
    };
    group.names.add(vm.name.toLowerCase());
    vmGroups.set(key, group);
  }
  for (const group of vmGroups.values()) {
    const vms = await compute.listVirtualMachines(group.subscriptionId, group.resourceGroup);
    for (const vm of vms) {
      if (vm.scaleSetId === undefined || !group.names.has(vm.name.toLowerCase())) continue;
      const scaleSet = parseScaleSetResourceId(vm.scaleSetId);
      if (scaleSet !== undefined) found.set(scaleSetKey(scaleSet), scaleSet);
    }
  }
  return [...found.values()];
}

/**
 * The member VM ids of a Flexible scale set (what selection matches node providerIDs against);
 * undefined for a Uniform one, whose members the providerIDs name.
 */
export async function flexibleMemberIds(
  compute: ComputeGateway,
  scaleSet: ScaleSet,
): Promise<string[] | undefined> {
  if (scaleSet.orchestrationMode !== 'Flexible') return undefined;
  const members = await compute.listVirtualMachines(
    scaleSet.subscriptionId,
    scaleSet.resourceGroup,
    scaleSet,
  );
  return members.map((member) => member.id);
}
