/**
 * Instances of the simulated compute state (Uniform scale-set VMs and Flexible member VMs): lookups,
 * power operations with their simulated-time transitions, creation (scale-out) and deletion, Run
 * Command, and the details the ARM renderers need.
 */
import { createHash } from 'node:crypto';

import { durationOf } from '../contracts.js';
import {
  compareInstances,
  ComputeCore,
  type DiskRecord,
  type InstanceRecord,
  type PendingTransition,
  type ScaleSetRecord,
} from './compute-core.js';
import {
  deepCopy,
  deterministicUuid,
  idKey,
  isObject,
  objectAt,
  optionalObjectAt,
  stringAt,
} from './compute-json.js';
import {
  type Completion,
  ComputeError,
  type DataDiskInfo,
  type FailureCheck,
  type HyperVGeneration,
  type InstanceBootModel,
  type InstanceInfo,
  type InstanceSeed,
  type JsonObject,
  type OperationOutcome,
  type OsType,
  type PowerCause,
  type PowerOptions,
  type PowerState,
  type RunCommandHandler,
  type RunCommandOutput,
  type RunCommandRecord,
} from './compute-types.js';

export class InstanceState extends ComputeCore {
  private readonly runCommands: RunCommandRecord[] = [];
  /** Instances (by id key) whose run command is still executing. */
  private readonly executingRunCommands = new Set<string>();
  private runCommandHandler: RunCommandHandler = () => ({ stdout: '', stderr: '' });

  /** What RunShellScript prints on an instance (and any side effect the world wants, e.g. power-off). */
  setRunCommandHandler(handler: RunCommandHandler): void {
    this.runCommandHandler = handler;
  }

  /** Instances of a scale set, Uniform by numeric instance id, Flexible by name. */
  listInstances(scaleSetId: string): InstanceInfo[] {
    const key = idKey(scaleSetId);
    return [...this.instances.values()]
      .filter((instance) => idKey(instance.scaleSetId) === key)
      .sort(compareInstances)
      .map((instance) => this.instanceInfo(instance));
  }

  getInstance(id: string): InstanceInfo | undefined {
    const record = this.instances.get(idKey(id));
    return record ? this.instanceInfo(record) : undefined;
  }

  /** The model the instance was built from (InstanceBootModel), a deep copy. */
  getInstanceBootModel(id: string): InstanceBootModel | undefined {
    const record = this.instances.get(idKey(id));
    return record ? deepCopy(record.bootModel) : undefined;
  }

  findInstanceByVmId(vmId: string): InstanceInfo | undefined {
    const wanted = vmId.toLowerCase();
    for (const record of this.instances.values()) {
      if (record.vmId === wanted) return this.instanceInfo(record);
    }
    return undefined;
  }

  /** Accepts a node's `spec.providerID` (`azure:///subscriptions/…`) or a plain resource id. */
  findInstanceByProviderId(providerId: string): InstanceInfo | undefined {
    return this.getInstance(providerId.replace(/^azure:\/\//i, ''));
  }

  findInstanceByComputerName(computerName: string): InstanceInfo | undefined {
    const wanted = computerName.toLowerCase();
    for (const record of this.instances.values()) {
      if (record.computerName.toLowerCase() === wanted) return this.instanceInfo(record);
    }
    return undefined;
  }

  runCommandHistory(): RunCommandRecord[] {
    return deepCopy(this.runCommands);
  }

  // ---------------------------------------------------------------- instance power

  /**
   * Powers an instance off (API call or guest shutdown): `stopping`, then `stopped` after
   * `instanceStopSeconds`. A stopped or deallocated instance is left as it is. A pending transition
   * of the instance is preempted (its completion reports Canceled/OperationPreempted).
   */
  powerOffInstance(id: string, options: PowerOptions & { skipShutdown?: boolean } = {}): void {
    const record = this.requireInstance(id);
    if (this.whileDeleting(record, 'powerOff', options)) return;
    if (
      record.powerState === 'stopped' ||
      record.powerState === 'deallocated' ||
      record.powerState === 'deallocating'
    ) {
      options.onComplete?.({ status: 'Succeeded' });
      return;
    }
    this.transition(
      record,
      'powerOff',
      'stopping',
      'stopped',
      durationOf(this.latency, 'instanceStopSeconds'),
      {
        ...options,
        orderly: options.skipShutdown !== true,
      },
    );
  }

  /** Deallocates an instance: `deallocating`, then `deallocated` after `instanceDeallocateSeconds`. */
  deallocateInstance(id: string, options: PowerOptions = {}): void {
    const record = this.requireInstance(id);
    if (this.whileDeleting(record, 'deallocate', options)) return;
    if (record.ephemeralPlacement) {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Operation 'deallocate' is not supported for VMs or VM Scale Set instances with ephemeral OS disks.`,
      );
    }
    if (record.powerState === 'deallocated') {
      options.onComplete?.({ status: 'Succeeded' });
      return;
    }
    this.transition(
      record,
      'deallocate',
      'deallocating',
      'deallocated',
      durationOf(this.latency, 'instanceDeallocateSeconds'),
      options,
    );
  }

  /** Starts a stopped or deallocated instance: `starting`, then `running` after `instanceStartSeconds`. */
  startInstance(id: string, options: PowerOptions = {}): void {
    const record = this.requireInstance(id);
    if (this.whileDeleting(record, 'start', options)) return;
    if (record.powerState === 'running') {
      options.onComplete?.({ status: 'Succeeded' });
      return;
    }
    this.transition(
      record,
      'start',
      'starting',
      'running',
      durationOf(this.latency, 'instanceStartSeconds'),
      options,
    );
  }

  /** Restarts a running instance (goes through `starting`); refused when the instance is not running. */
  restartInstance(id: string, options: PowerOptions = {}): void {
    const record = this.requireInstance(id);
    if (this.whileDeleting(record, 'restart', options)) return;
    if (record.powerState !== 'running' && record.powerState !== 'starting') {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Operation 'restart' is not allowed on VM '${record.name}' since the VM is ${record.powerState}.`,
      );
    }
    this.transition(
      record,
      'restart',
      'starting',
      'running',
      durationOf(this.latency, 'instanceStartSeconds'),
      options,
    );
  }

  /**
   * An instance being deleted takes no other operation: ARM refuses one asked through the API (409, its
   * message); the guest or the world (a shutdown inside the VM, a reboot daemon) changes nothing on a
   * machine that is going away. True when the operation is not to run.
   */
  private whileDeleting(record: InstanceRecord, operation: string, options: PowerOptions): boolean {
    if (record.provisioningState !== 'Deleting') return false;
    if ((options.cause ?? 'api') === 'api') throw refusedWhileDeleting(record, operation);
    options.onComplete?.({ status: 'Succeeded' });
    return true;
  }

  private transition(
    record: InstanceRecord,
    kind: string,
    during: PowerState,
    target: PowerState,
    seconds: number,
    options: PowerOptions & { orderly?: boolean },
  ): void {
    const cause = options.cause ?? 'api';
    const orderly = options.orderly ?? true;
    const onComplete = options.onComplete;
    this.preempt(record.pending, kind);
    record.pending = undefined;
    const before = record.powerState;
    this.setPower(record, during, cause, orderly);
    const pending: PendingTransition = { kind, cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(seconds, `${kind} ${record.name}`, () => {
      if (record.pending !== pending) return;
      record.pending = undefined;
      const error = options.failure?.();
      if (error) {
        this.setPower(record, before, cause);
        onComplete?.({ status: 'Failed', error });
        return;
      }
      // A world-driven transition (a guest shutdown) may end while a deletion is under way: still Deleting.
      if (record.provisioningState !== 'Deleting') record.provisioningState = 'Succeeded';
      this.setPower(record, target, cause);
      onComplete?.({ status: 'Succeeded' });
    });
    record.pending = pending;
  }

  private setPower(record: InstanceRecord, state: PowerState, cause: PowerCause, orderly = true): void {
    const previous = record.powerState;
    if (previous === state) return;
    record.powerState = state;
    const disk = record.osDiskId ? this.disks.get(idKey(record.osDiskId)) : undefined;
    if (disk) disk.managedBy = record.id;
    this.emit({
      type: 'instance-power-changed',
      instance: this.instanceInfo(record),
      previous,
      cause,
      orderly,
    });
  }

  // ---------------------------------------------------------------- instance lifecycle

  /**
   * Adds `count` instances built from the current model. Each is `Creating`/`starting` and turns
   * `running` after `instanceStartSeconds`; `instance-created` fires at once so the world can start
   * the node's join clock.
   */
  scaleOut(scaleSetId: string, count: number): InstanceInfo[] {
    const record = this.requireScaleSet(scaleSetId);
    const created: InstanceInfo[] = [];
    for (let index = 0; index < count; index++) {
      const instance = this.createInstanceRecord(record, 'starting', undefined);
      record.etag += 1;
      instance.provisioningState = 'Creating';
      const info = this.instanceInfo(instance);
      created.push(info);
      this.emit({
        type: 'instance-created',
        instance: info,
        bootsFromGalleryImage: info.bootsFromGalleryImage,
        bootstrapExtensionsRemain: this.bootstrapExtensionsRemain(record),
      });
      const pending: PendingTransition = { kind: 'create', cancel: () => undefined };
      pending.cancel = this.scheduler.after(
        durationOf(this.latency, 'instanceStartSeconds'),
        `create ${instance.name}`,
        () => {
          if (instance.pending !== pending) return;
          instance.pending = undefined;
          instance.provisioningState = 'Succeeded';
          this.setPower(instance, 'running', 'world');
        },
      );
      instance.pending = pending;
    }
    return created;
  }

  /**
   * ARM's DELETE of one instance: `Deleting` at once (a GET or list shows it, as ARM does from the
   * moment it accepted the request), then after `instanceStopSeconds` gone with its OS disk (deleteInstance).
   * A DELETE of an instance already `Deleting` joins that deletion: ARM accepts it again and it ends with
   * the first. A `failure` leaves the instance, `Failed`, as a failed delete in Azure (a scale set's too).
   */
  requestInstanceDelete(id: string, onComplete?: Completion, failure?: FailureCheck): void {
    const record = this.requireInstance(id);
    const ongoing = record.pending;
    if (record.provisioningState === 'Deleting' && ongoing?.kind === 'delete') {
      const earlier = ongoing.onComplete;
      ongoing.onComplete = (outcome) => {
        earlier?.(outcome);
        onComplete?.(outcome);
      };
      return;
    }
    this.preempt(record.pending, 'delete');
    record.pending = undefined;
    this.preempt(record.diskPending, 'delete');
    record.diskPending = undefined;
    record.provisioningState = 'Deleting';
    const pending: PendingTransition = { kind: 'delete', cancel: () => undefined };
    if (onComplete) pending.onComplete = onComplete;
    pending.cancel = this.scheduler.after(
      durationOf(this.latency, 'instanceStopSeconds'),
      `delete ${record.name}`,
      () => {
        if (record.pending !== pending) return;
        record.pending = undefined;
        const error = failure?.();
        if (error) {
          record.provisioningState = 'Failed';
          pending.onComplete?.({ status: 'Failed', error });
          return;
        }
        if (this.instances.get(idKey(id)) === record) this.deleteInstance(id);
        pending.onComplete?.({ status: 'Succeeded' });
      },
    );
    record.pending = pending;
  }

  /**
   * Removes an instance and its OS disk at once (the world's "node deleted mid-run", a scale-in, the end
   * of a requested deletion). Data disks stay, detached (their `deleteOption` is `Detach`, ARM's default).
   * A requested deletion still under way ends with it, succeeded.
   */
  deleteInstance(id: string): void {
    const record = this.requireInstance(id);
    const requested = record.pending?.kind === 'delete' ? record.pending : undefined;
    if (requested) {
      requested.cancel();
      requested.onComplete?.({ status: 'Succeeded' });
    } else {
      this.preempt(record.pending, 'delete');
    }
    record.pending = undefined;
    this.preempt(record.diskPending, 'delete');
    record.diskPending = undefined;
    const info = this.instanceInfo(record);
    this.instances.delete(idKey(id));
    if (record.osDiskId) this.disks.delete(idKey(record.osDiskId));
    for (const dataDisk of record.dataDisks) {
      const disk = this.disks.get(idKey(dataDisk.diskId));
      if (disk) delete disk.managedBy;
    }
    const scaleSet = this.scaleSets.get(idKey(record.scaleSetId));
    if (scaleSet) {
      scaleSet.sku.capacity = Math.max(0, scaleSet.sku.capacity - 1);
      scaleSet.etag += 1;
    }
    this.emit({ type: 'instance-deleted', instance: info });
  }

  /** Builds an instance (and its OS disk) from the scale set model; the scale-set seeding uses it too. */
  createInstanceRecord(
    scaleSet: ScaleSetRecord,
    powerState: PowerState,
    seed: InstanceSeed | undefined,
  ): InstanceRecord {
    const number = scaleSet.nextInstanceNumber++;
    const profile = objectAt(scaleSet.properties, 'virtualMachineProfile');
    const prefix = stringAt(profile, ['osProfile'], 'computerNamePrefix') ?? scaleSet.name;
    const mode = scaleSet.properties.orchestrationMode === 'Flexible' ? 'Flexible' : 'Uniform';
    const suffixHex = createHash('sha256')
      .update(`${idKey(scaleSet.id)}#${number}`)
      .digest('hex');
    const name =
      seed?.name ??
      (mode === 'Uniform' ? `${scaleSet.name}_${number}` : `${scaleSet.name}_${suffixHex.slice(0, 8)}`);
    const id =
      mode === 'Uniform'
        ? `${scaleSet.id}/virtualMachines/${number}`
        : `/subscriptions/${scaleSet.subscriptionId}/resourceGroups/${scaleSet.resourceGroup}/providers/Microsoft.Compute/virtualMachines/${name}`;
    if (this.instances.has(idKey(id))) throw new Error(`creating instance ${name}: it exists already`);
    const computerName =
      mode === 'Uniform'
        ? `${prefix}${number.toString(36).padStart(6, '0')}`
        : `${prefix}${suffixHex.slice(8, 14)}`;
    const osDisk = objectAt(profile, 'storageProfile', 'osDisk');
    const ephemeral = optionalObjectAt(osDisk, 'diffDiskSettings');
    const hyperV = scaleSet.hyperVGeneration;
    const osType = osDisk.osType === 'Windows' ? 'Windows' : 'Linux';
    const zones = scaleSet.zones ?? [];
    const zone = seed?.zone ?? (zones.length > 0 ? zones[number % zones.length] : undefined);
    const record: InstanceRecord = {
      id,
      scaleSetId: scaleSet.id,
      mode,
      instanceId: mode === 'Uniform' ? String(number) : name,
      name,
      vmId: deterministicUuid(`vm:${idKey(id)}`),
      computerName,
      location: scaleSet.location,
      powerState,
      provisioningState: 'Succeeded',
      modelVersion: scaleSet.modelVersion,
      imageReference: deepCopy(objectAt(profile, 'storageProfile', 'imageReference')),
      bootModel: bootModelOf(profile),
      dataDisks: [],
      hyperVGeneration: hyperV,
      osType,
      vmSize: scaleSet.sku.name,
      adminUsername: stringAt(profile, ['osProfile'], 'adminUsername') ?? 'azureuser',
      timeCreated: this.nowIso(),
    };
    if (zone) record.zone = zone;
    if (ephemeral) {
      record.ephemeralPlacement = typeof ephemeral.placement === 'string' ? ephemeral.placement : 'CacheDisk';
    } else {
      const diskName = `${name}_OsDisk_1_${suffixHex.slice(14, 46)}`;
      const diskId = `/subscriptions/${scaleSet.subscriptionId}/resourceGroups/${scaleSet.resourceGroup}/providers/Microsoft.Compute/disks/${diskName}`;
      record.osDiskId = diskId;
      const disk: DiskRecord = {
        resourceKey: idKey(diskId),
        id: diskId,
        name: diskName,
        resourceGroup: scaleSet.resourceGroup,
        location: scaleSet.location,
        diskSizeGB: typeof osDisk.diskSizeGB === 'number' ? osDisk.diskSizeGB : 128,
        hyperVGeneration: hyperV,
        osType,
        managedBy: id,
        skuName: stringAt(osDisk, ['managedDisk'], 'storageAccountType') ?? 'Premium_LRS',
        uniqueId: deterministicUuid(`disk:${idKey(diskId)}`),
        timeCreated: this.nowIso(),
        createOption: 'FromImage',
        provisioningState: 'Succeeded',
        tags: {},
      };
      if (zone) disk.zone = zone;
      // An instance built from a gallery image starts with what the image captured.
      const imageId = objectAt(profile, 'storageProfile', 'imageReference').id;
      const version = typeof imageId === 'string' ? this.resolveGalleryVersion(imageId) : undefined;
      if (version?.content) disk.content = deepCopy(version.content);
      if (version) disk.galleryImageVersionId = version.id;
      this.disks.set(idKey(diskId), disk);
    }
    this.instances.set(idKey(id), record);
    scaleSet.sku.capacity += 1;
    return record;
  }

  // ---------------------------------------------------------------- data disks

  /**
   * Attaches and detaches managed data disks (`attachDetachDataDisks`, or an instance model update that
   * changes `storageProfile.dataDisks`): validated at once like ARM (the disk exists, is not attached
   * elsewhere, lives in the instance's zone, the LUN is free), then done after `dataDiskAttachSeconds` /
   * `dataDiskDetachSeconds`, when the guest sees the change (`instance-data-disks-changed`). An attached
   * disk is reserved for the instance from the request on. One change per instance at a time.
   */
  changeDataDisks(
    instanceId: string,
    change: {
      attach: readonly { diskId: string; lun?: number; caching?: string }[];
      detach: readonly { diskId: string }[];
    },
    options: { onComplete?: Completion; failure?: FailureCheck } = {},
  ): InstanceInfo {
    const record = this.requireInstance(instanceId);
    if (record.provisioningState === 'Deleting') throw refusedWhileDeleting(record, 'attachDetachDataDisks');
    if (record.diskPending) {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        `Operation 'attachDetachDataDisks' is not allowed on VM '${record.name}' while another update of its disks is in progress.`,
      );
    }
    const used = new Set(record.dataDisks.map((disk) => disk.lun));
    const attaching: DataDiskInfo[] = [];
    for (const wanted of change.attach) {
      const disk = this.disks.get(idKey(wanted.diskId));
      if (!disk) throw new ComputeError(404, 'NotFound', `Disk '${wanted.diskId}' was not found.`);
      if (disk.provisioningState !== 'Succeeded') {
        throw new ComputeError(
          409,
          'OperationNotAllowed',
          `Disk '${disk.name}' cannot be attached while it is ${disk.provisioningState}.`,
        );
      }
      if (disk.managedBy) {
        throw new ComputeError(
          409,
          'OperationNotAllowed',
          `Disk '${disk.name}' is already attached to VM '${disk.managedBy}'.`,
        );
      }
      if (record.zone && disk.zone !== record.zone) {
        throw new ComputeError(
          400,
          'InvalidParameter',
          `Disk '${disk.name}' in zone '${disk.zone ?? 'none'}' cannot be attached to VM '${record.name}' in zone '${record.zone}'.`,
        );
      }
      let lun = wanted.lun;
      if (lun === undefined) for (lun = 0; used.has(lun); lun++);
      if (used.has(lun) || lun < 0 || lun > 63) {
        throw new ComputeError(
          409,
          'InvalidParameter',
          `LUN ${lun} of VM '${record.name}' is already in use or out of range.`,
        );
      }
      used.add(lun);
      attaching.push({ lun, diskId: disk.id, name: disk.name, caching: wanted.caching ?? 'None' });
    }
    const detaching = change.detach.map((wanted) => {
      const found = record.dataDisks.find((disk) => idKey(disk.diskId) === idKey(wanted.diskId));
      if (!found) {
        throw new ComputeError(
          400,
          'InvalidParameter',
          `Disk '${wanted.diskId}' is not attached to VM '${record.name}'.`,
        );
      }
      return found;
    });
    for (const disk of attaching) {
      const reserved = this.disks.get(idKey(disk.diskId));
      if (reserved) reserved.managedBy = record.id;
    }
    for (const disk of detaching) disk.toBeDetached = true;
    record.provisioningState = 'Updating';
    const seconds = Math.max(
      attaching.length > 0 ? durationOf(this.latency, 'dataDiskAttachSeconds') : 0,
      detaching.length > 0 ? durationOf(this.latency, 'dataDiskDetachSeconds') : 0,
    );
    const pending: PendingTransition = { kind: 'attachDetachDataDisks', cancel: () => undefined };
    if (options.onComplete) pending.onComplete = options.onComplete;
    pending.cancel = this.scheduler.after(seconds, `data disks ${record.name}`, () => {
      if (record.diskPending !== pending) return;
      record.diskPending = undefined;
      record.provisioningState = 'Succeeded';
      const error = options.failure?.();
      if (error) {
        for (const disk of attaching) {
          const reserved = this.disks.get(idKey(disk.diskId));
          if (reserved?.managedBy === record.id) delete reserved.managedBy;
        }
        for (const disk of detaching) delete disk.toBeDetached;
        pending.onComplete?.({ status: 'Failed', error });
        return;
      }
      const gone = new Set(detaching.map((disk) => idKey(disk.diskId)));
      record.dataDisks = [...record.dataDisks.filter((disk) => !gone.has(idKey(disk.diskId))), ...attaching];
      record.dataDisks.sort((a, b) => a.lun - b.lun);
      for (const disk of detaching) {
        delete disk.toBeDetached;
        const released = this.disks.get(idKey(disk.diskId));
        if (released?.managedBy === record.id) delete released.managedBy;
      }
      this.emit({
        type: 'instance-data-disks-changed',
        instance: this.instanceInfo(record),
        attached: deepCopy(attaching),
        detached: deepCopy(detaching),
      });
      pending.onComplete?.({ status: 'Succeeded' });
    });
    record.diskPending = pending;
    return this.instanceInfo(record);
  }

  /** Flexible VMs in a resource group, for `virtualMachines.list`. */
  listVirtualMachineIds(subscriptionId: string, resourceGroup: string): string[] {
    const prefix = idKey(
      `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/`,
    );
    return [...this.instances.values()]
      .filter((instance) => idKey(instance.id).startsWith(prefix))
      .sort(compareInstances)
      .map((instance) => instance.id);
  }

  // ---------------------------------------------------------------- run command

  /**
   * Runs a RunShellScript on a running instance; completes after `runCommandSeconds` with the
   * handler's output. The script is recorded even when the command then fails.
   */
  runCommand(
    instanceId: string,
    input: { commandId: string; script: string[]; parameters: { name: string; value: string }[] },
    onComplete: (outcome: OperationOutcome, output?: RunCommandOutput) => void,
    failure?: FailureCheck,
  ): void {
    const record = this.requireInstance(instanceId);
    if (record.provisioningState === 'Deleting') throw refusedWhileDeleting(record, 'runCommand');
    if (record.powerState !== 'running') {
      throw new ComputeError(
        409,
        'OperationNotAllowed',
        'The operation requires the VM to be running (or set to run).',
      );
    }
    // One run command at a time per VM: the agent's extension runs them in sequence.
    if (this.executingRunCommands.has(idKey(record.id))) {
      throw new ComputeError(
        409,
        'Conflict',
        'Run command extension execution is in progress. Please wait for completion before invoking a run command.',
      );
    }
    const entry: RunCommandRecord = { instanceId: record.id, ...deepCopy(input), at: this.nowIso() };
    this.runCommands.push(entry);
    this.executingRunCommands.add(idKey(record.id));
    this.scheduler.after(durationOf(this.latency, 'runCommandSeconds'), `runCommand ${record.name}`, () => {
      this.executingRunCommands.delete(idKey(record.id));
      const current = this.instances.get(idKey(record.id));
      if (!current) {
        onComplete({
          status: 'Failed',
          error: { code: 'NotFound', message: `The VM '${record.name}' was deleted.` },
        });
        return;
      }
      // A failed run command never reached the guest: the world's handler does not run.
      const error = failure?.();
      if (error) {
        onComplete({ status: 'Failed', error });
        return;
      }
      const output = this.runCommandHandler(this.instanceInfo(current), deepCopy(entry));
      onComplete({ status: 'Succeeded' }, output);
    });
  }

  /** ARM JSON of an instance's model and (optionally) instance view, shared by Uniform and Flexible renderers. */
  instanceDetails(id: string):
    | {
        record: InstanceInfo;
        vmSize: string;
        osType: OsType;
        hyperVGeneration: HyperVGeneration;
        adminUsername: string;
        ephemeralPlacement?: string;
        diskSizeGB?: number;
        osDiskName?: string;
        statuses: JsonObject[];
        scaleSetName: string;
      }
    | undefined {
    const record = this.instances.get(idKey(id));
    if (!record) return undefined;
    const disk = record.osDiskId ? this.disks.get(idKey(record.osDiskId)) : undefined;
    const provisioningCode =
      record.provisioningState === 'Succeeded' ? 'succeeded' : record.provisioningState.toLowerCase();
    const statuses: JsonObject[] = [
      {
        code: `ProvisioningState/${provisioningCode}`,
        level: 'Info',
        displayStatus:
          record.provisioningState === 'Succeeded' ? 'Provisioning succeeded' : `${record.provisioningState}`,
        time: record.timeCreated,
      },
      {
        code: `PowerState/${record.powerState}`,
        level: 'Info',
        displayStatus: powerDisplay(record.powerState),
      },
    ];
    const scaleSet = this.scaleSets.get(idKey(record.scaleSetId));
    return {
      record: this.instanceInfo(record),
      vmSize: record.vmSize,
      osType: record.osType,
      hyperVGeneration: record.hyperVGeneration,
      adminUsername: record.adminUsername,
      ...(record.ephemeralPlacement ? { ephemeralPlacement: record.ephemeralPlacement } : {}),
      ...(disk ? { diskSizeGB: disk.diskSizeGB, osDiskName: disk.name } : {}),
      statuses,
      scaleSetName: scaleSet?.name ?? '',
    };
  }
}

function powerDisplay(state: PowerState): string {
  return `VM ${state}`;
}

/** What an instance built now keeps of the scale set's model: image, customData, extensions. */
function bootModelOf(profile: JsonObject): InstanceBootModel {
  const customData = stringAt(profile, ['osProfile'], 'customData');
  const extensions = optionalObjectAt(profile, 'extensionProfile')?.extensions;
  return {
    imageReference: deepCopy(objectAt(profile, 'storageProfile', 'imageReference')),
    ...(customData === undefined ? {} : { customData }),
    extensions: Array.isArray(extensions) ? deepCopy(extensions.filter(isObject)) : [],
  };
}

/** ARM's answer to an operation on a VM it is deleting: 409, only the delete may be asked again. */
function refusedWhileDeleting(record: InstanceRecord, operation: string): ComputeError {
  return new ComputeError(
    409,
    'OperationNotAllowed',
    `Operation '${operation}' is not allowed on VM '${record.name}' since the VM is marked for deletion. ` +
      'You can only retry the Delete operation (or wait for an ongoing one to complete).',
  );
}
