/**
 * Azure compute over @azure/arm-compute 25.x, one class per resource port: scale sets (arm-scale-sets.ts),
 * their members (arm-instances.ts), plain VMs (arm-virtual-machines.ts), managed disks (arm-disks.ts),
 * snapshots (arm-snapshots.ts), the Compute Gallery (arm-gallery.ts) and its image versions
 * (arm-image-versions.ts) and Run Command (arm-run-command.ts), sharing one SDK client per subscription
 * (arm-clients.ts). Long-running operations are only submitted (`beginX` resolves once ARM accepted the
 * request); callers poll with the `get*` methods.
 */
import type { ComputePorts } from '../../ports/compute/index.js';
import { ArmClients, type ArmComputeOptions } from './arm-clients.js';
import { ArmDisks } from './arm-disks.js';
import { ArmGallery } from './arm-gallery.js';
import { ArmImageVersions } from './arm-image-versions.js';
import { ArmInstances } from './arm-instances.js';
import { ArmRunCommands } from './arm-run-command.js';
import { ArmScaleSets } from './arm-scale-sets.js';
import { ArmSnapshots } from './arm-snapshots.js';
import { ArmVirtualMachines } from './arm-virtual-machines.js';

export type { ArmComputeOptions } from './arm-clients.js';

/** The compute ports over ARM, sharing one client per subscription and the scale sets' remembered modes. */
export function armCompute(options: ArmComputeOptions): ComputePorts {
  const clients = new ArmClients(options);
  const scaleSets = new ArmScaleSets(clients);
  return {
    scaleSets,
    instances: new ArmInstances(clients, scaleSets),
    virtualMachines: new ArmVirtualMachines(clients),
    disks: new ArmDisks(clients),
    snapshots: new ArmSnapshots(clients),
    gallery: new ArmGallery(clients),
    imageVersions: new ArmImageVersions(clients),
    runCommands: new ArmRunCommands(clients),
  };
}
