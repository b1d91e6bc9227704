/** The fake instances port: power state and data disks change when asked, once due on the estate's clock. */
import type { DataDiskTarget, PowerTarget, ScaleSetInstance } from '../../../domain/compute.js';
import { NotFoundError, TerminalError } from '../../../domain/errors.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import { describeScaleSet, sameResourceId, scaleSetKey } from '../../../domain/resource-id.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { InstancesPort } from '../../compute/instances.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';
import { diskKeyOfId, instanceKey, lastSegment } from './keys.js';

export class FakeInstances implements InstancesPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  get(scaleSet: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance> {
    return this.log.call('instances.get', [scaleSet, instanceId], () =>
      this.estate.settleInstance(this.estate.instanceRecord(scaleSet, instanceId)),
    );
  }

  list(scaleSet: ScaleSetRef): Promise<ScaleSetInstance[]> {
    return this.log.call('instances.list', [scaleSet], () => {
      this.estate.scaleSetRecord(scaleSet, `listing instances of scale set ${describeScaleSet(scaleSet)}`);
      return this.estate.instancesOf(scaleSet).map((record) => this.estate.settleInstance(record));
    });
  }

  requestPowerOff(instance: ScaleSetInstance): Promise<void> {
    return this.log.call('instances.requestPowerOff', [instance], () => {
      const record = this.estate.instanceRecord(instance.scaleSet, instance.instanceId);
      const state = this.estate.settleInstance(record).powerState;
      if (state !== 'running' && state !== 'starting') return;
      record.instance = { ...record.instance, powerState: 'stopping' };
      record.pending = { to: 'stopped', at: this.estate.now() + this.estate.timings.powerOff };
    });
  }

  requestStart(instance: PowerTarget): Promise<void> {
    return this.log.call('instances.requestStart', [instance], () => {
      const record = this.estate.instanceRecord(instance.scaleSet, instance.instanceId);
      const state = this.estate.settleInstance(record).powerState;
      if (state === 'running' || state === 'starting') return;
      if (record.startFails) return;
      record.instance = { ...record.instance, powerState: 'starting' };
      record.pending = { to: 'running', at: this.estate.now() + this.estate.timings.start };
    });
  }

  requestDataDiskAttach(instance: DataDiskTarget, diskId: string, lun: number): Promise<void> {
    return this.log.call('instances.requestDataDiskAttach', [instance, diskId, lun], () => {
      const action = `attaching disk ${lastSegment(diskId)} to instance ${instance.instanceId}`;
      const record = this.estate.instanceRecord(instance.scaleSet, instance.instanceId);
      const current = this.estate.settleInstance(record);
      const pendingAttach = record.diskChanges.some(
        (c) => c.kind === 'attach' && sameResourceId(c.diskId, diskId),
      );
      if (pendingAttach || (current.dataDisks ?? []).some((disk) => sameResourceId(disk.diskId, diskId)))
        return;
      const disk = this.estate.settleKey(this.estate.disks, diskKeyOfId(diskId));
      if (disk === undefined) throw new NotFoundError('NotFound', `${action}: the disk was not found`);
      if (disk.managedBy !== undefined) {
        throw new TerminalError(
          'OperationNotAllowed',
          `${action}: the disk is attached to ${disk.managedBy}`,
        );
      }
      if ((current.dataDisks ?? []).some((attached) => attached.lun === lun)) {
        throw new TerminalError('InvalidParameter', `${action}: LUN ${lun} is in use`);
      }
      record.instance = { ...current, provisioningState: 'Updating' };
      record.diskChanges.push({
        kind: 'attach',
        diskId,
        lun,
        at: this.estate.now() + this.estate.timings.dataDiskAttach,
      });
    });
  }

  requestDataDiskDetach(instance: DataDiskTarget, diskId: string): Promise<void> {
    return this.log.call('instances.requestDataDiskDetach', [instance, diskId], () => {
      const record = this.estate.instanceRecord(instance.scaleSet, instance.instanceId);
      const current = this.estate.settleInstance(record);
      const attached = (current.dataDisks ?? []).find((disk) => sameResourceId(disk.diskId, diskId));
      if (attached === undefined || attached.toBeDetached === true) return;
      record.instance = {
        ...current,
        provisioningState: 'Updating',
        dataDisks: (current.dataDisks ?? []).map((disk) =>
          disk === attached ? { ...disk, toBeDetached: true } : disk,
        ),
      };
      record.diskChanges.push({
        kind: 'detach',
        diskId,
        lun: attached.lun,
        at: this.estate.now() + this.estate.timings.dataDiskDetach,
      });
    });
  }

  requestDeletion(scaleSet: ScaleSetRef, instanceId: string): Promise<void> {
    return this.log.call('instances.requestDeletion', [scaleSet, instanceId], () => {
      const record = this.estate.scaleSets.get(scaleSetKey(scaleSet));
      const instance = this.estate.instances.get(instanceKey(scaleSet, instanceId));
      if (instance === undefined) return;
      this.estate.instances.delete(instanceKey(scaleSet, instanceId));
      if (record !== undefined) record.etag += 1;
      this.estate.onInstanceDeleted?.(instance.instance);
    });
  }
}
