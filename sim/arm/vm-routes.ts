/**
 * ARM routes of virtual machines: Uniform scale-set VMs (`virtualMachineScaleSets/{vmss}/virtualMachines`)
 * and Flexible members (`virtualMachines`): list, get, instance view, power actions, Run Command, data
 * disk attach/detach (`attachDetachDataDisks`, or a PUT/PATCH of the VM's model changing
 * `storageProfile.dataDisks`); and the scale-set-level instance view and power actions.
 */
import { z } from 'zod';

import {
  expandIncludes,
  HttpError,
  invalidParameter,
  parseBody,
  type Reply,
  type RequestContext,
} from './arm-http.js';
import { renderInstanceView, renderScaleSetVm, renderVirtualMachine } from './arm-resources.js';
import { type AddRoute, ArmRoutes, VM, VMSS } from './arm-routes.js';
import {
  type ComputeState,
  idKey,
  type JsonObject,
  type OperationOutcome,
  type PowerOptions,
} from './compute-state.js';

type PowerVerb = 'powerOff' | 'deallocate' | 'start' | 'restart';

/** `VirtualMachineScaleSetVMInstanceIDs`: the instances a scale-set-level action applies to (all when absent). */
const InstanceIds = z.looseObject({ instanceIds: z.array(z.string()).optional() });

/** `AttachDetachDataDisksRequest`. */
const AttachDetachInput = z.looseObject({
  dataDisksToAttach: z
    .array(
      z.looseObject({
        diskId: z.string(),
        lun: z.number().int().optional(),
        caching: z.string().optional(),
      }),
    )
    .nullish(),
  dataDisksToDetach: z.array(z.looseObject({ diskId: z.string() })).nullish(),
});

/** The part of a VM (or scale-set VM) model update the simulator applies: `storageProfile.dataDisks`. */
const ModelUpdateInput = z.looseObject({
  properties: z
    .looseObject({
      storageProfile: z
        .looseObject({
          dataDisks: z
            .array(
              z.looseObject({
                lun: z.number().int(),
                createOption: z.string().optional(),
                caching: z.string().optional(),
                toBeDetached: z.boolean().optional(),
                managedDisk: z.looseObject({ id: z.string().optional() }).optional(),
              }),
            )
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

const RunCommandInput = z.looseObject({
  commandId: z.string(),
  script: z.array(z.string()).optional(),
  parameters: z.array(z.looseObject({ name: z.string(), value: z.string() })).optional(),
});

export class VirtualMachineRoutes extends ArmRoutes {
  register(add: AddRoute): void {
    const vmss = 'virtualMachineScaleSets';
    const vmssVm = `${vmss}/:vmss/virtualMachines/:instance`;
    add(
      'GET',
      `${vmss}/:vmss/virtualMachines`,
      'compute',
      `${VMSS}/virtualMachines/read`,
      `${vmss}/virtualMachines`,
      (c) => this.listScaleSetVms(c),
    );
    add('GET', vmssVm, 'compute', `${VMSS}/virtualMachines/read`, `${vmss}/virtualMachines`, (c) =>
      this.getScaleSetVm(c),
    );
    add(
      'GET',
      `${vmssVm}/instanceView`,
      'compute',
      `${VMSS}/virtualMachines/instanceView/read`,
      `${vmss}/virtualMachines`,
      (c) => this.instanceView(c, this.uniformInstanceId(c)),
    );
    add('GET', `${vmss}/:vmss/instanceView`, 'compute', `${VMSS}/instanceView/read`, vmss, (c) =>
      this.scaleSetInstanceView(c),
    );
    for (const verb of ['powerOff', 'deallocate', 'start', 'restart'] as const) {
      add(
        'POST',
        `${vmss}/:vmss/${verb}`,
        'compute',
        `${VMSS}/${verb}/action`,
        vmss,
        (c) => this.scaleSetPower(c, verb),
        { lro: true, verb: true },
      );
      add(
        'POST',
        `${vmssVm}/${verb}`,
        'compute',
        `${VMSS}/virtualMachines/${verb}/action`,
        `${vmss}/virtualMachines`,
        (c) => this.power(c, this.uniformInstanceId(c), verb),
        { lro: true, verb: true },
      );
      add(
        'POST',
        `virtualMachines/:vm/${verb}`,
        'compute',
        `${VM}/${verb}/action`,
        'virtualMachines',
        (c) => this.power(c, this.flexibleVmId(c), verb),
        { lro: true, verb: true },
      );
    }
    add(
      'POST',
      `${vmssVm}/runCommand`,
      'compute',
      `${VMSS}/virtualMachines/runCommand/action`,
      `${vmss}/virtualMachines`,
      (c) => this.runCommand(c, this.uniformInstanceId(c)),
      { lro: true, verb: true },
    );
    add(
      'POST',
      'virtualMachines/:vm/runCommand',
      'compute',
      `${VM}/runCommand/action`,
      'virtualMachines',
      (c) => this.runCommand(c, this.flexibleVmId(c)),
      { lro: true, verb: true },
    );
    add(
      'POST',
      `${vmssVm}/attachDetachDataDisks`,
      'compute',
      `${VMSS}/virtualMachines/attachDetachDataDisks/action`,
      `${vmss}/virtualMachines`,
      (c) => this.attachDetach(c, this.uniformInstanceId(c)),
      { lro: true, verb: true },
    );
    add(
      'POST',
      'virtualMachines/:vm/attachDetachDataDisks',
      'compute',
      `${VM}/attachDetachDataDisks/action`,
      'virtualMachines',
      (c) => this.attachDetach(c, this.flexibleVmId(c)),
      { lro: true, verb: true },
    );
    // Model updates of one VM: only `storageProfile.dataDisks` is applied (attach / detach).
    add(
      'PUT',
      vmssVm,
      'compute',
      `${VMSS}/virtualMachines/write`,
      `${vmss}/virtualMachines`,
      (c) => this.updateModel(c, this.uniformInstanceId(c)),
      { lro: true },
    );
    for (const method of ['PUT', 'PATCH']) {
      add(
        method,
        'virtualMachines/:vm',
        'compute',
        `${VM}/write`,
        'virtualMachines',
        (c) => this.updateModel(c, this.flexibleVmId(c)),
        { lro: true },
      );
    }
    add(
      'DELETE',
      vmssVm,
      'compute',
      `${VMSS}/virtualMachines/delete`,
      `${vmss}/virtualMachines`,
      (c) => this.deleteVm(c, this.uniformInstanceIdOrNull(c)),
      { lro: true },
    );
    add(
      'DELETE',
      'virtualMachines/:vm',
      'compute',
      `${VM}/delete`,
      'virtualMachines',
      (c) => this.deleteVm(c, this.flexibleVmIdOrNull(c)),
      { lro: true },
    );
    add('GET', 'virtualMachines', 'compute', `${VM}/read`, 'virtualMachines', (c) =>
      this.listVirtualMachines(c),
    );
    add('GET', 'virtualMachines/:vm', 'compute', `${VM}/read`, 'virtualMachines', (c) =>
      this.getVirtualMachine(c),
    );
    add(
      'GET',
      'virtualMachines/:vm/instanceView',
      'compute',
      `${VM}/instanceView/read`,
      'virtualMachines',
      (c) => this.instanceView(c, this.flexibleVmId(c)),
    );
  }

  /** Instance id of a Uniform VMSS VM route, checking the parent scale set and the orchestration mode. */
  private uniformInstanceId(context: RequestContext): string {
    const scaleSetId = this.requireScaleSet(context);
    this.requireUniform(scaleSetId);
    const id = `${scaleSetId}/virtualMachines/${context.params.instance ?? ''}`;
    if (!this.state.getInstance(id)) {
      throw new HttpError(404, {
        code: 'NotFound',
        message: 'The entity was not found in this Azure location.',
      });
    }
    return id;
  }

  /** A DELETE of what is already gone answers 204 (ARM's idempotent delete). */
  private uniformInstanceIdOrNull(context: RequestContext): string | undefined {
    const scaleSetId = this.requireScaleSet(context);
    this.requireUniform(scaleSetId);
    const id = `${scaleSetId}/virtualMachines/${context.params.instance ?? ''}`;
    return this.state.getInstance(id) ? id : undefined;
  }

  private flexibleVmIdOrNull(context: RequestContext): string | undefined {
    const id = this.resourceId(context, 'virtualMachines', context.params.vm ?? '');
    return this.state.getInstance(id) ? id : undefined;
  }

  /**
   * Deletes an instance (scale-in of that one machine): `Deleting` from the moment ARM accepts the
   * request, and after a shutdown's time the instance and its OS disk are gone and the scale set's
   * capacity is one less. A DELETE of an instance already `Deleting` is accepted again.
   */
  private deleteVm(context: RequestContext, id: string | undefined): Reply {
    if (id === undefined) return { status: 204 };
    const instance = this.state.getInstance(id);
    // ARM's hint is the usual time; the deletion itself takes what the timing model draws.
    const { operation, failure, done } = this.beginOperation(
      context,
      instance?.location ?? '',
      this.options.latency.instanceStopSeconds,
    );
    this.state.requestInstanceDelete(id, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  private flexibleVmId(context: RequestContext): string {
    const id = this.resourceId(context, 'virtualMachines', context.params.vm ?? '');
    if (!this.state.getInstance(id)) throw this.resourceNotFound(context, VM, context.params.vm ?? '');
    return id;
  }

  // ------------------------------------------------------------------ scale set VMs (Uniform) and VMs (Flexible)

  private listScaleSetVms(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    this.requireUniform(scaleSetId);
    const expand = expandIncludes(context.url, 'instanceView');
    const items = this.state
      .listInstances(scaleSetId)
      .map((instance) => renderScaleSetVm(this.state, instance.id, expand))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getScaleSetVm(context: RequestContext): Reply {
    const id = this.uniformInstanceId(context);
    return {
      status: 200,
      body: renderScaleSetVm(this.state, id, expandIncludes(context.url, 'instanceView')),
    };
  }

  private listVirtualMachines(context: RequestContext): Reply {
    const filter = context.url.searchParams.get('$filter');
    const expand = expandIncludes(context.url, 'instanceView');
    let ids = this.state.listVirtualMachineIds(context.subscriptionId, context.resourceGroup);
    if (filter) {
      const match = /^\s*'virtualMachineScaleSet\/id'\s+eq\s+'([^']+)'\s*$/i.exec(filter);
      if (!match?.[1]) {
        throw invalidParameter(
          `The value '${filter}' of parameter '$filter' is invalid. Only 'virtualMachineScaleSet/id' eq '<scale set id>' is supported.`,
          '$filter',
        );
      }
      const scaleSetKey = idKey(match[1]);
      ids = ids.filter((id) => idKey(this.state.getInstance(id)?.scaleSetId ?? '') === scaleSetKey);
    } else if (expand) {
      throw invalidParameter(
        "The $expand=instanceView option is only supported together with the 'virtualMachineScaleSet/id' $filter.",
        '$expand',
      );
    }
    const items = ids
      .map((id) => renderVirtualMachine(this.state, id, expand))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getVirtualMachine(context: RequestContext): Reply {
    const id = this.flexibleVmId(context);
    return {
      status: 200,
      body: renderVirtualMachine(this.state, id, expandIncludes(context.url, 'instanceView')),
    };
  }

  private instanceView(_context: RequestContext, id: string): Reply {
    return { status: 200, body: renderInstanceView(this.state, id) };
  }

  private power(context: RequestContext, id: string, verb: PowerVerb): Reply {
    const instance = this.state.getInstance(id);
    const { operation, failure, done } = this.beginOperation(
      context,
      instance?.location ?? '',
      this.powerSeconds(verb),
    );
    try {
      this.applyPower(context, id, verb, { onComplete: done, failure });
    } catch (error) {
      this.operations.complete(operation, {
        status: 'Failed',
        error: { code: 'Refused', message: String(error) },
      });
      throw error;
    }
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  private powerSeconds(verb: PowerVerb): number {
    const latency = this.options.latency;
    return {
      powerOff: latency.instanceStopSeconds,
      deallocate: latency.instanceDeallocateSeconds,
      start: latency.instanceStartSeconds,
      restart: latency.instanceStartSeconds,
    }[verb];
  }

  private applyPower(context: RequestContext, id: string, verb: PowerVerb, options: PowerOptions): void {
    if (verb === 'powerOff') {
      this.state.powerOffInstance(id, {
        ...options,
        skipShutdown: context.url.searchParams.get('skipShutdown') === 'true',
      });
    } else if (verb === 'deallocate') {
      this.state.deallocateInstance(id, options);
    } else if (verb === 'start') {
      this.state.startInstance(id, options);
    } else {
      this.state.restartInstance(id, options);
    }
  }

  /**
   * Scale-set-level power action over `instanceIds` (all instances when the body names none): one
   * operation that succeeds when every instance has, and fails with the first instance that failed.
   */
  private scaleSetPower(context: RequestContext, verb: PowerVerb): Reply {
    const scaleSetId = this.requireScaleSet(context);
    const scaleSet = this.state.getScaleSet(scaleSetId);
    const instances = this.state.listInstances(scaleSetId);
    const input = context.body === undefined ? {} : parseBody(InstanceIds, context.body);
    // Without instanceIds: every instance but those being deleted (named, one is refused like a VM's own).
    const wanted =
      input.instanceIds ??
      instances
        .filter((instance) => instance.provisioningState !== 'Deleting')
        .map((instance) => instance.instanceId);
    const targets = wanted.map((instanceId) => {
      const found = instances.find(
        (instance) => instance.instanceId.toLowerCase() === instanceId.toLowerCase(),
      );
      if (!found) {
        throw invalidParameter(
          `The provided instanceId ${instanceId} is not an active Virtual Machine Scale Set VM instanceId.`,
          'instanceIds',
        );
      }
      return found.id;
    });
    const { operation, failure, done } = this.beginOperation(
      context,
      scaleSet?.location ?? '',
      this.powerSeconds(verb),
    );
    let remaining = targets.length;
    let firstError: OperationOutcome | undefined;
    const settle = (outcome: OperationOutcome): void => {
      if (outcome.status !== 'Succeeded') firstError ??= outcome;
      remaining -= 1;
      if (remaining === 0) done(firstError ?? { status: 'Succeeded' });
    };
    if (targets.length === 0) done({ status: 'Succeeded' });
    for (const id of targets) {
      try {
        this.applyPower(context, id, verb, { onComplete: settle, failure });
      } catch (error) {
        settle({ status: 'Failed', error: { code: 'OperationNotAllowed', message: String(error) } });
      }
    }
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  /** Scale-set instance view: provisioning summary of the VMs and of each extension. */
  private scaleSetInstanceView(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    const scaleSet = this.state.getScaleSet(scaleSetId);
    const instances = this.state.listInstances(scaleSetId);
    const summary = (codes: string[]): JsonObject[] => {
      const counts = new Map<string, number>();
      for (const code of codes) counts.set(code, (counts.get(code) ?? 0) + 1);
      return [...counts].map(([code, count]) => ({ code, count }));
    };
    const provisioning = (state: string): string =>
      `ProvisioningState/${state === 'Succeeded' ? 'succeeded' : state.toLowerCase()}`;
    const state = scaleSet?.provisioningState ?? 'Succeeded';
    return {
      status: 200,
      body: {
        virtualMachine: {
          statusesSummary: summary(instances.map((instance) => provisioning(instance.provisioningState))),
        },
        extensions: (scaleSet?.extensions ?? []).map((extension) => ({
          name: extension.name,
          statusesSummary: summary(instances.map(() => provisioning(extension.provisioningState))),
        })),
        statuses: [
          {
            code: provisioning(state),
            level: 'Info',
            displayStatus: state === 'Succeeded' ? 'Provisioning succeeded' : state,
            time: this.options.clock.now().toISOString(),
          },
        ],
        orchestrationServices: [],
      },
    };
  }

  /** POST …/attachDetachDataDisks: the final result is the instance's storage profile. */
  private attachDetach(context: RequestContext, id: string): Reply {
    const input = parseBody(AttachDetachInput, context.body ?? {});
    const attach = input.dataDisksToAttach ?? [];
    const detach = input.dataDisksToDetach ?? [];
    if (attach.length === 0 && detach.length === 0) {
      throw invalidParameter(
        'At least one data disk to attach or detach must be given.',
        'dataDisksToAttach',
      );
    }
    return this.changeDisks(context, id, {
      attach: attach.map((disk) => ({
        diskId: disk.diskId,
        ...(disk.lun === undefined ? {} : { lun: disk.lun }),
        ...(disk.caching === undefined ? {} : { caching: disk.caching }),
      })),
      detach: detach.map((disk) => ({ diskId: disk.diskId })),
    });
  }

  /**
   * PUT (or PATCH) of one VM's model: the data disk list is compared with the current one; new managed
   * disks (`createOption: Attach`) are attached, missing or `toBeDetached` ones detached.
   */
  private updateModel(context: RequestContext, id: string): Reply {
    const input = parseBody(ModelUpdateInput, context.body ?? {});
    const wanted = input.properties?.storageProfile?.dataDisks;
    const current = this.state.getInstance(id)?.dataDisks ?? [];
    if (wanted === undefined) {
      return { status: 200, body: this.renderInstance(id) };
    }
    const keep = wanted.filter((disk) => disk.toBeDetached !== true);
    const attach = keep
      .filter((disk) => !current.some((attached) => attached.lun === disk.lun))
      .map((disk) => {
        if (disk.createOption !== 'Attach' || disk.managedDisk?.id === undefined) {
          throw invalidParameter(
            `Data disk at LUN ${disk.lun}: only managed disks with createOption 'Attach' are supported by this simulator.`,
            'storageProfile.dataDisks',
          );
        }
        return {
          diskId: disk.managedDisk.id,
          lun: disk.lun,
          ...(disk.caching ? { caching: disk.caching } : {}),
        };
      });
    const detach = current
      .filter((attached) => !keep.some((disk) => disk.lun === attached.lun))
      .map((attached) => ({ diskId: attached.diskId }));
    if (attach.length === 0 && detach.length === 0) {
      return { status: 200, body: this.renderInstance(id) };
    }
    const reply = this.changeDisks(context, id, { attach, detach });
    return { ...reply, status: 200, body: this.renderInstance(id) };
  }

  private changeDisks(
    context: RequestContext,
    id: string,
    change: Parameters<ComputeState['changeDataDisks']>[1],
  ): Reply {
    const instance = this.state.getInstance(id);
    const { operation, failure } = this.beginOperation(
      context,
      instance?.location ?? '',
      this.options.latency.dataDiskAttachSeconds,
    );
    try {
      this.state.changeDataDisks(id, change, {
        failure,
        onComplete: (outcome) => {
          const storage = this.renderInstance(id).properties;
          const result =
            typeof storage === 'object' && storage !== null && 'storageProfile' in storage
              ? storage.storageProfile
              : undefined;
          this.operations.complete(operation, outcome, result as JsonObject | undefined);
        },
      });
    } catch (error) {
      this.operations.complete(operation, {
        status: 'Failed',
        error: { code: 'Refused', message: String(error) },
      });
      throw error;
    }
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  private renderInstance(id: string): JsonObject {
    const instance = this.state.getInstance(id);
    const body =
      instance?.orchestrationMode === 'Flexible'
        ? renderVirtualMachine(this.state, id, false)
        : renderScaleSetVm(this.state, id, false);
    return body ?? {};
  }

  private runCommand(context: RequestContext, id: string): Reply {
    const input = parseBody(RunCommandInput, context.body);
    if (input.commandId !== 'RunShellScript') {
      throw invalidParameter(
        `The command '${input.commandId}' is not supported by this simulator; use 'RunShellScript'.`,
        'commandId',
      );
    }
    const instance = this.state.getInstance(id);
    const { operation, failure } = this.beginOperation(
      context,
      instance?.location ?? '',
      this.options.latency.runCommandSeconds,
    );
    this.state.runCommand(
      id,
      { commandId: input.commandId, script: input.script ?? [], parameters: input.parameters ?? [] },
      (outcome, output) => {
        const result = output
          ? {
              value: [
                {
                  code: 'ProvisioningState/succeeded',
                  level: 'Info',
                  displayStatus: 'Provisioning succeeded',
                  // run-command-extension-linux: `enable` always succeeds ("extension should not fail if
                  // script throws error", main/cmds.go), its message the last 4 KiB of each stream
                  // (`maxTailLen`), `statusMsg` puts "Enable succeeded: " before it (main/status.go).
                  message: `Enable succeeded: \n[stdout]\n${lastBytes(output.stdout, 4096)}\n[stderr]\n${lastBytes(output.stderr, 4096)}`,
                },
              ],
            }
          : undefined;
        this.operations.complete(operation, outcome, result);
      },
      failure,
    );
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }
}

function lastBytes(text: string, limit: number): string {
  const buffer = Buffer.from(text, 'utf8');
  return buffer.length <= limit ? text : buffer.subarray(buffer.length - limit).toString('utf8');
}
