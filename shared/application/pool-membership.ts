/**
 * Which nodes belong to which scale set, for Uniform and Flexible scale sets alike, and the one answer to
 * which scale set a Flexible VM belongs to. A Uniform instance's providerID names its scale set; a
 * Flexible member's is a plain virtual machine id that cannot be told from a standalone VM's, and its
 * name need not start with its scale set's: its scale set is what ARM records on the VM
 * (`virtualMachineScaleSet.id`, `recordedScaleSet`), read by one list of the resource group's VMs or one
 * GET of the VM, never guessed from a VM or node name.
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import type { VirtualMachineSummary } from '../domain/compute.js';
import { ignoreNotFound } from '../domain/errors.js';
import { groupNodesByScaleSet, type NodeGroups } from '../domain/prototype-selection.js';
import type { ScaleSetRef, VirtualMachineRef } from '../domain/resource-id.js';
import { parseScaleSetResourceId, scaleSetKey } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';
import type { ComputePorts } from '../ports/compute/index.js';

/** The scale set ARM records a VM in (its `virtualMachineScaleSet.id`); undefined for a standalone VM. */
export function recordedScaleSet(vm: VirtualMachineSummary): ScaleSetRef | undefined {
  return vm.scaleSetId === undefined ? undefined : parseScaleSetResourceId(vm.scaleSetId);
}

/** The scale set of each VM of a resource group that is in one, by lowercased VM name: one ARM list. */
export async function scaleSetsOfVirtualMachines(
  compute: ComputePorts,
  subscriptionId: string,
  resourceGroup: string,
): Promise<Map<string, ScaleSetRef>> {
  const owners = new Map<string, ScaleSetRef>();
  for (const vm of await compute.virtualMachines.list(subscriptionId, resourceGroup)) {
    const owner = recordedScaleSet(vm);
    if (owner !== undefined) owners.set(vm.name.toLowerCase(), owner);
  }
  return owners;
}

/** The scale set of one VM as ARM records it (one GET); undefined for a standalone VM or one that is gone. */
export async function scaleSetOfVirtualMachine(
  compute: ComputePorts,
  vm: VirtualMachineRef,
): Promise<ScaleSetRef | undefined> {
  const found = await compute.virtualMachines.get(vm).catch(ignoreNotFound);
  return found === undefined ? undefined : recordedScaleSet(found);
}

/**
 * Every scale set that has nodes in the cluster: Uniform ones from the providerIDs; Flexible ones from
 * the VMs of each resource group that holds a node with a plain VM providerID (standalone VMs, such as
 * control planes outside any scale set, name none and are left out).
 */
export async function scaleSetsWithNodes(
  compute: ComputePorts,
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
    const owners = await scaleSetsOfVirtualMachines(compute, group.subscriptionId, group.resourceGroup);
    for (const [name, scaleSet] of owners) {
      if (group.names.has(name)) found.set(scaleSetKey(scaleSet), scaleSet);
    }
  }
  return [...found.values()];
}

/**
 * The member VM ids of a Flexible scale set (what selection matches node providerIDs against);
 * undefined for a Uniform one, whose members the providerIDs name.
 */
export async function flexibleMemberIds(
  compute: ComputePorts,
  scaleSet: ScaleSet,
): Promise<string[] | undefined> {
  if (scaleSet.orchestrationMode !== 'Flexible') return undefined;
  const members = await compute.virtualMachines.list(
    scaleSet.subscriptionId,
    scaleSet.resourceGroup,
    scaleSet,
  );
  return members.map((member) => member.id);
}
