/**
 * AzureMachinePoolMachines and the MachinePool/AzureMachinePool status, kept in step with the scale
 * set's instances and the workload cluster's nodes, as CAPZ's AzureMachinePoolMachine controller and
 * MachinePool scope do (exp/controllers/azuremachinepoolmachine_controller.go, azure/scope/machinepool.go
 * `updateReplicasAndProviderIDs`, https://github.com/kubernetes-sigs/cluster-api-provider-azure) and
 * Cluster API's MachinePool controller (core/reconcilers/machinepool/machinepool_controller_phases.go,
 * https://github.com/kubernetes-sigs/cluster-api). Status is written only when it changes.
 */
import type { ComputeState, InstanceInfo, ScaleSetInfo } from '../../arm/compute-state.js';
import type { KubeObject, KubeStore } from '../../contracts.js';
import { statusOf } from '../../kube/objects.js';
import { nodeNameOf } from '../nodes.js';
import { MACHINE_POOL_NAME_LABEL, machineObject, randomRank } from './objects.js';
import type { ManagedCluster } from './seed.js';
import { scaleSetIdOf } from './seed.js';
import type { MachineView } from './strategy.js';

export class CapzMachines {
  constructor(
    private readonly store: KubeStore,
    private readonly compute: ComputeState,
  ) {}

  private machinesOf(namespace: string, ampName: string): KubeObject[] {
    return this.store
      .list('azuremachinepoolmachines', namespace)
      .filter((machine) => machine.metadata.labels?.[MACHINE_POOL_NAME_LABEL] === ampName);
  }

  removeAll(namespace: string, ampName: string): void {
    for (const machine of this.machinesOf(namespace, ampName)) {
      this.store.remove('azuremachinepoolmachines', namespace, machine.metadata.name);
    }
  }

  /** Creates, updates and deletes the pool's machines; returns what the strategy needs of each. */
  sync(
    managed: ManagedCluster,
    amp: KubeObject,
    ready: (instance: InstanceInfo) => boolean,
    latest: (instance: InstanceInfo) => boolean,
    draining: ReadonlySet<string>,
    deleteAnnotated: ReadonlySet<string> = new Set(),
  ): MachineView[] {
    const namespace = managed.namespace;
    const ampName = amp.metadata.name;
    const instances = this.compute.listInstances(scaleSetIdOf(managed, ampName));
    const byName = new Map(instances.map((instance) => [`${ampName}-${instance.instanceId}`, instance]));
    for (const machine of this.machinesOf(namespace, ampName)) {
      if (!byName.has(machine.metadata.name))
        this.store.remove('azuremachinepoolmachines', namespace, machine.metadata.name);
    }
    const views: MachineView[] = [];
    for (const [name, instance] of byName) {
      if (!this.store.get('azuremachinepoolmachines', namespace, name)) {
        this.store.create(
          'azuremachinepoolmachines',
          machineObject(namespace, managed.clusterName, amp, instance),
        );
      }
      const isReady = ready(instance);
      // CAPZ's latestModelApplied: the instance runs the template's image (not Azure's model version).
      const isLatest = latest(instance);
      const deleting = draining.has(instance.id.toLowerCase());
      const node = managed.world.store.get('nodes', undefined, nodeNameOf(instance));
      // While CAPI drains the node the AzureMachinePoolMachine is untouched (capi-machines.ts); it is
      // marked deleted only once the drain is done, just before its instance goes.
      const stored = this.store.get('azuremachinepoolmachines', namespace, name);
      const infraDeleting = stored?.metadata.deletionTimestamp !== undefined;
      const status = {
        ready: isReady,
        latestModelApplied: isLatest,
        provisioningState: infraDeleting ? 'Deleting' : instance.provisioningState,
        version: managed.world.spec.kubernetesVersion,
        ...(node
          ? {
              nodeRef: {
                apiVersion: 'v1',
                kind: 'Node',
                name: node.metadata.name,
                uid: node.metadata.uid ?? '',
              },
            }
          : {}),
      };
      const current = this.store.get('azuremachinepoolmachines', namespace, name);
      if (current && JSON.stringify(current.status) !== JSON.stringify(status)) {
        this.store.mutate('azuremachinepoolmachines', namespace, name, (machine) => {
          machine.status = status;
        });
      }
      views.push({
        name,
        ready: isReady,
        latestModelApplied: isLatest,
        provisioningState: instance.provisioningState,
        deleting: deleting || infraDeleting,
        deleteAnnotated: deleteAnnotated.has(name),
        createdMs: Date.parse(instance.timeCreated),
        randomRank: randomRank(name),
      });
    }
    return views;
  }

  /** MachinePool and AzureMachinePool status from the machines. */
  writeStatus(
    managed: ManagedCluster,
    machinePool: KubeObject,
    amp: KubeObject,
    replicas: number,
    scaleSet: ScaleSetInfo | undefined,
  ): void {
    const machines = this.machinesOf(managed.namespace, amp.metadata.name);
    const readyMachines = machines.filter((machine) => statusOf(machine).ready === true);
    const nodeRefs = machines
      .map((machine) => statusOf(machine).nodeRef)
      .filter((ref): ref is Record<string, unknown> => typeof ref === 'object' && ref !== null);
    const phase =
      machines.length < replicas
        ? 'ScalingUp'
        : machines.length > replicas
          ? 'ScalingDown'
          : readyMachines.length === replicas
            ? 'Running'
            : 'Provisioned';
    const poolStatus = {
      replicas: machines.length,
      readyReplicas: readyMachines.length,
      availableReplicas: readyMachines.length,
      unavailableReplicas: Math.max(0, replicas - readyMachines.length),
      phase,
      nodeRefs,
      infrastructureReady: true,
      bootstrapReady: true,
      observedGeneration: machinePool.metadata.generation ?? 1,
      // Cluster API v1.9+ counts these too (v1beta1 `status.v1beta2`, the top level at v1beta2;
      // api/core/v1beta1/conversion.go `Convert_v1beta1_MachinePoolStatus_To_v1beta2_MachinePoolStatus`).
      v1beta2: {
        readyReplicas: readyMachines.length,
        availableReplicas: readyMachines.length,
        upToDateReplicas: machines.filter((machine) => statusOf(machine).latestModelApplied === true).length,
      },
    };
    this.writeIfChanged('machinepools', machinePool, poolStatus);
    // updateReplicasAndProviderIDs: the AzureMachinePool's sorted providerIDList and ready count; CAPI's
    // MachinePool controller copies the list into the MachinePool (reconcileInfrastructure).
    const providerIDs = machines
      .map((machine) => (machine.spec as { providerID?: unknown } | undefined)?.providerID)
      .filter((id): id is string => typeof id === 'string')
      .sort();
    for (const [resource, object] of [
      ['machinepools', machinePool],
      ['azuremachinepools', amp],
    ] as const) {
      const current = this.store.get(resource, object.metadata.namespace, object.metadata.name);
      const spec = (current?.spec ?? {}) as Record<string, unknown>;
      if (!current || JSON.stringify(spec.providerIDList) === JSON.stringify(providerIDs)) continue;
      this.store.mutate(resource, object.metadata.namespace, object.metadata.name, (stored) => {
        stored.spec = { ...(stored.spec as Record<string, unknown>), providerIDList: providerIDs };
      });
    }
    const ampStatus = {
      ready: scaleSet?.provisioningState === 'Succeeded',
      replicas: readyMachines.length,
      provisioningState: scaleSet?.provisioningState ?? 'Creating',
      image: (amp.spec as { template?: { image?: unknown } } | undefined)?.template?.image ?? {},
      infrastructureMachineKind: 'AzureMachinePoolMachine',
    };
    const conditions = statusOf(
      this.store.get('azuremachinepools', amp.metadata.namespace, amp.metadata.name) ?? amp,
    ).conditions;
    this.writeIfChanged(
      'azuremachinepools',
      amp,
      conditions === undefined ? ampStatus : { ...ampStatus, conditions },
    );
  }

  /**
   * The condition CAPZ's scale set service sets after its PUT (azure/services/scalesets/scalesets.go
   * `Reconcile` → `UpdatePutStatus(BootstrapSucceededCondition, "scalesets", err)`, azure/scope/
   * machinepool.go): True, or False with reason `Failed`, severity `Error` and the ARM error. Written
   * only when it changes (its transition time is when it did).
   */
  writePutCondition(amp: KubeObject, error: string | undefined, nowIso: string): void {
    const current = this.store.get('azuremachinepools', amp.metadata.namespace, amp.metadata.name);
    if (!current) return;
    const condition =
      error === undefined
        ? { type: 'BootstrapSucceeded', status: 'True' }
        : {
            type: 'BootstrapSucceeded',
            status: 'False',
            severity: 'Error',
            reason: 'Failed',
            message: `scalesets failed to create or update. err: ${error}`,
          };
    const others = ((statusOf(current).conditions as Record<string, unknown>[] | undefined) ?? []).filter(
      (entry) => entry.type !== 'BootstrapSucceeded',
    );
    const existing = ((statusOf(current).conditions as Record<string, unknown>[] | undefined) ?? []).find(
      (entry) => entry.type === 'BootstrapSucceeded',
    );
    if (
      existing !== undefined &&
      existing.status === condition.status &&
      existing.message === condition.message
    )
      return;
    if (existing === undefined && error === undefined) return;
    this.store.mutate('azuremachinepools', amp.metadata.namespace, amp.metadata.name, (stored) => {
      stored.status = {
        ...(stored.status as Record<string, unknown> | undefined),
        conditions: [...others, { ...condition, lastTransitionTime: nowIso }],
      };
    });
  }

  private writeIfChanged(
    resource: 'machinepools' | 'azuremachinepools',
    object: KubeObject,
    status: Record<string, unknown>,
  ): void {
    const current = this.store.get(resource, object.metadata.namespace, object.metadata.name);
    if (!current || JSON.stringify(current.status) === JSON.stringify(status)) return;
    this.store.mutate(resource, object.metadata.namespace, object.metadata.name, (stored) => {
      stored.status = status;
    });
  }
}
