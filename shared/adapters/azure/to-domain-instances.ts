/**
 * Converters from @azure/arm-compute's scale set members to the domain's instances: Uniform instances and
 * Flexible member VMs with their instance view (power and provisioning state, disks, image). Pure, as
 * to-domain.ts.
 */
import type {
  ImageReference as ArmImageReference,
  InstanceViewStatus,
  VirtualMachine,
  VirtualMachineScaleSetVM,
} from '@azure/arm-compute';

import type { PowerState, ScaleSetInstance } from '../../domain/compute.js';
import { definedOnly } from '../../domain/optional.js';
import {
  scaleSetInstanceResourceId,
  type ScaleSetRef,
  scaleSetResourceId,
  virtualMachineResourceId,
} from '../../domain/resource-id.js';
import type { HyperVGeneration } from '../../domain/scale-set.js';
import { nonEmpty, toHyperVGeneration } from './to-domain.js';

/** Reads `PowerState/<state>` from instance view statuses (ARM lists ProvisioningState first). */
export function toPowerState(statuses: readonly InstanceViewStatus[] | undefined): PowerState {
  for (const status of statuses ?? []) {
    const code = status.code?.toLowerCase();
    if (code?.startsWith('powerstate/') === true) {
      return POWER_STATES.get(code.slice('powerstate/'.length)) ?? 'unknown';
    }
  }
  return 'unknown';
}

const POWER_STATES: ReadonlyMap<string, PowerState> = new Map<string, PowerState>([
  ['starting', 'starting'],
  ['running', 'running'],
  ['stopping', 'stopping'],
  ['stopped', 'stopped'],
  ['deallocating', 'deallocating'],
  ['deallocated', 'deallocated'],
]);

/** A Uniform instance (`virtualMachineScaleSetVMs.get` with `$expand=instanceView`). */
export function toUniformInstance(scaleSet: ScaleSetRef, vm: VirtualMachineScaleSetVM): ScaleSetInstance {
  const instanceId = vm.instanceId ?? vm.name ?? '';
  return toInstance(scaleSet, instanceId, vm.id ?? scaleSetInstanceResourceId(scaleSet, instanceId), vm);
}

/** A Flexible member (`virtualMachines.get` with `$expand=instanceView`); its instance id is the VM name. */
export function toFlexibleInstance(scaleSet: ScaleSetRef, vm: VirtualMachine): ScaleSetInstance {
  const name = vm.name ?? '';
  return toInstance(scaleSet, name, vm.id ?? virtualMachineResourceId({ ...scaleSet, name }), vm);
}

/** What Uniform instances and Flexible members share (both carry a VM model with its instance view). */
function toInstance(
  scaleSet: ScaleSetRef,
  instanceId: string,
  resourceId: string,
  vm: VirtualMachineScaleSetVM | VirtualMachine,
): ScaleSetInstance {
  const osDisk = vm.storageProfile?.osDisk;
  const ephemeral = osDisk?.diffDiskSettings !== undefined && osDisk.diffDiskSettings !== null;
  const osDiskId = ephemeral ? undefined : nonEmpty(osDisk?.managedDisk?.id);
  const osDiskType = ephemeral ? undefined : nonEmpty(osDisk?.managedDisk?.storageAccountType);
  const vmId = nonEmpty(vm.vmId);
  const computerName = nonEmpty(vm.osProfile?.computerName) ?? nonEmpty(vm.instanceView?.computerName);
  return {
    scaleSet,
    instanceId,
    resourceId,
    ...definedOnly({ vmId, computerName }),
    powerState: toPowerState(vm.instanceView?.statuses),
    provisioningState: vm.provisioningState ?? provisioningStateFromStatuses(vm.instanceView?.statuses),
    ...definedOnly({ osDiskId, osDiskType }),
    ephemeralOsDisk: ephemeral,
    location: vm.location,
    zones: [...(vm.zones ?? [])],
    ...instanceHyperVGeneration(vm.instanceView?.hyperVGeneration),
    ...instanceImage(vm.storageProfile?.imageReference),
    ...(vm.timeCreated === undefined ? {} : { createdAt: toIso(vm.timeCreated) }),
    dataDisks: (vm.storageProfile?.dataDisks ?? []).map((disk) => {
      const diskId = nonEmpty(disk.managedDisk?.id);
      return {
        lun: disk.lun,
        name: disk.name ?? '',
        ...definedOnly({ diskId }),
        ...(disk.toBeDetached === true ? { toBeDetached: true } : {}),
      };
    }),
  };
}

/** The image an instance was built from, and the version ARM resolved `latest` to where it says so. */
function instanceImage(reference: ArmImageReference | undefined): {
  imageId?: string;
  exactVersion?: string;
} {
  const imageId = nonEmpty(reference?.id);
  const exactVersion = nonEmpty(reference?.exactVersion);
  return {
    ...definedOnly({ imageId, exactVersion }),
  };
}

function toIso(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

/** The instance view reports the VM's Hyper-V generation; the model does not (docs/design.md#gallery-and-image-definition). */
function instanceHyperVGeneration(value: string | undefined): { hyperVGeneration?: HyperVGeneration } {
  const generation = toHyperVGeneration(value);
  return generation === undefined ? {} : { hyperVGeneration: generation };
}

/** True when a VM's `virtualMachineScaleSet.id` names `scaleSet` (ARM ids compare case-insensitively). */
export function isMemberOf(vm: VirtualMachine, scaleSet: ScaleSetRef): boolean {
  const owner = vm.virtualMachineScaleSet?.id;
  return owner !== undefined && owner.toLowerCase() === scaleSetResourceId(scaleSet).toLowerCase();
}

function provisioningStateFromStatuses(statuses: readonly InstanceViewStatus[] | undefined): string {
  for (const status of statuses ?? []) {
    const code = status.code;
    if (code?.toLowerCase().startsWith('provisioningstate/') === true) {
      const state = code.slice('provisioningstate/'.length).split('/')[0] ?? '';
      return state.charAt(0).toUpperCase() + state.slice(1);
    }
  }
  return 'Unknown';
}
