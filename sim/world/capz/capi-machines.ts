/**
 * Cluster API Machine objects for MachinePool machines and the order in which one goes, as CAPI and CAPZ
 * do it (https://github.com/kubernetes-sigs/cluster-api, https://github.com/kubernetes-sigs/cluster-api-provider-azure):
 *
 * - CAPI's MachinePool controller creates a Machine per infrastructure machine the AzureMachinePool lists
 *   (`internal/controllers/machinepool/machinepool_controller_phases.go` `reconcileMachines`), named like
 *   it, labelled `cluster.x-k8s.io/pool-name` and `cluster.x-k8s.io/cluster-name`, owned by the
 *   MachinePool, with `spec.infrastructureRef` naming the AzureMachinePoolMachine;
 * - a Machine's `cluster.x-k8s.io/delete-machine` annotation is copied onto its AzureMachinePoolMachine
 *   (CAPZ `azure/scope/machinepool.go` `applyAzureMachinePoolMachines`, `machinepoolmachine.go`
 *   `updateDeleteMachineAnnotation`), and CAPZ's `SelectMachinesToDelete` deletes annotated machines
 *   right after failed ones (strategy.ts);
 * - CAPZ deletes a machine by deleting its owner Machine (`MachinePoolScope.DeleteMachine`: "This ensures
 *   that the node cordon/drain happens before deleting the infrastructure"): the Machine gets its
 *   deletionTimestamp and CAPI drains the node (`internal/controllers/machine/machine_controller.go`
 *   `reconcileDelete`); only then does it delete the AzureMachinePoolMachine, whose deletion deletes the
 *   instance; the Machine goes once its infrastructure and Node are gone.
 */
import type { KubeObject, KubeStore } from '../../contracts.js';
import { statusOf, timestamp } from '../../kube/objects.js';
import {
  CLUSTER_API_VERSION,
  CLUSTER_NAME_LABEL,
  INFRASTRUCTURE_API_VERSION,
  MACHINE_POOL_NAME_LABEL,
} from './objects.js';

export const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
/** `clusterv1.MachinePoolNameLabel`. */
export const POOL_NAME_LABEL = 'cluster.x-k8s.io/pool-name';

export class CapiMachines {
  constructor(private readonly store: KubeStore) {}

  private ampmsOf(namespace: string, ampName: string): KubeObject[] {
    return this.store
      .list('azuremachinepoolmachines', namespace)
      .filter((machine) => machine.metadata.labels?.[MACHINE_POOL_NAME_LABEL] === ampName);
  }

  /** Copies the delete-machine annotation from each Machine onto its AzureMachinePoolMachine. */
  propagateDeleteAnnotations(namespace: string, ampName: string): void {
    for (const ampm of this.ampmsOf(namespace, ampName)) {
      const machine = this.store.get('machines', namespace, ampm.metadata.name);
      const value = machine?.metadata.annotations?.[DELETE_MACHINE_ANNOTATION];
      if (value === undefined || ampm.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined)
        continue;
      this.store.mutate('azuremachinepoolmachines', namespace, ampm.metadata.name, (object) => {
        object.metadata.annotations = { ...object.metadata.annotations, [DELETE_MACHINE_ANNOTATION]: 'true' };
      });
    }
  }

  /** The MachinePool (or its AzureMachinePool) is gone: so are its Machines. */
  removeAll(namespace: string, poolName: string): void {
    for (const machine of this.store.list('machines', namespace)) {
      if (machine.metadata.labels?.[POOL_NAME_LABEL] === poolName)
        this.store.remove('machines', namespace, machine.metadata.name);
    }
  }

  /** The pool's AzureMachinePoolMachines that carry the delete-machine annotation. */
  deleteAnnotated(namespace: string, ampName: string): Set<string> {
    return new Set(
      this.ampmsOf(namespace, ampName)
        .filter((machine) => machine.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined)
        .map((machine) => machine.metadata.name),
    );
  }

  /** CAPZ's DeleteMachine: the owner Machine is deleted first (its finalizer holds it while CAPI drains). */
  markDeleting(namespace: string, name: string, nowMs: number): void {
    const machine = this.store.get('machines', namespace, name);
    if (!machine || machine.metadata.deletionTimestamp !== undefined) return;
    this.store.mutate('machines', namespace, name, (object) => {
      object.metadata.deletionTimestamp = timestamp(nowMs);
      object.status = { ...(object.status as Record<string, unknown> | undefined), phase: 'Deleting' };
    });
  }

  /** The drain is done: CAPI deletes the infrastructure machine (its deletion deletes the instance). */
  deleteInfrastructure(namespace: string, name: string, nowMs: number): void {
    const ampm = this.store.get('azuremachinepoolmachines', namespace, name);
    if (!ampm || ampm.metadata.deletionTimestamp !== undefined) return;
    this.store.mutate('azuremachinepoolmachines', namespace, name, (object) => {
      object.metadata.deletionTimestamp = timestamp(nowMs);
      object.status = {
        ...(object.status as Record<string, unknown> | undefined),
        provisioningState: 'Deleting',
      };
    });
  }

  /** Creates a Machine per AzureMachinePoolMachine, keeps its status, removes those whose machine is gone. */
  sync(namespace: string, clusterName: string, machinePool: KubeObject, ampName: string): void {
    const ampms = new Map(this.ampmsOf(namespace, ampName).map((ampm) => [ampm.metadata.name, ampm]));
    for (const machine of this.store.list('machines', namespace)) {
      if (machine.metadata.labels?.[POOL_NAME_LABEL] !== machinePool.metadata.name) continue;
      if (!ampms.has(machine.metadata.name)) this.store.remove('machines', namespace, machine.metadata.name);
    }
    for (const [name, ampm] of ampms) {
      const ampmStatus = statusOf(ampm);
      const nodeRef = ampmStatus.nodeRef as Record<string, unknown> | undefined;
      const existing = this.store.get('machines', namespace, name);
      const deleting = existing?.metadata.deletionTimestamp !== undefined;
      const status = {
        phase: deleting ? 'Deleting' : nodeRef !== undefined ? 'Running' : 'Provisioning',
        bootstrapReady: true,
        infrastructureReady: ampmStatus.ready === true,
        ...(nodeRef === undefined ? {} : { nodeRef }),
      };
      if (!existing) {
        const created = this.store.create(
          'machines',
          machineFor(namespace, clusterName, machinePool, ampm, status),
        );
        // The Machine controller adds the Machine as an owner of its infrastructure machine.
        this.store.mutate('azuremachinepoolmachines', namespace, name, (object) => {
          object.metadata.ownerReferences = [
            ...(object.metadata.ownerReferences ?? []),
            { apiVersion: CLUSTER_API_VERSION, kind: 'Machine', name, uid: created.metadata.uid ?? '' },
          ];
        });
      } else if (JSON.stringify(existing.status) !== JSON.stringify(status)) {
        this.store.mutate('machines', namespace, name, (object) => {
          object.status = status;
        });
      }
    }
  }
}

function machineFor(
  namespace: string,
  clusterName: string,
  machinePool: KubeObject,
  ampm: KubeObject,
  status: Record<string, unknown>,
): KubeObject {
  const spec = (ampm.spec ?? {}) as { providerID?: string };
  const version = (
    (machinePool.spec as { template?: { spec?: { version?: unknown } } } | undefined)?.template?.spec ?? {}
  ).version;
  return {
    apiVersion: CLUSTER_API_VERSION,
    kind: 'Machine',
    metadata: {
      name: ampm.metadata.name,
      namespace,
      labels: { [CLUSTER_NAME_LABEL]: clusterName, [POOL_NAME_LABEL]: machinePool.metadata.name },
      ownerReferences: [
        {
          apiVersion: CLUSTER_API_VERSION,
          kind: 'MachinePool',
          name: machinePool.metadata.name,
          uid: machinePool.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      clusterName,
      // CAPI: the MachinePool's bootstrap data is managed outside the Machine.
      bootstrap: { dataSecretName: '' },
      infrastructureRef: {
        apiVersion: INFRASTRUCTURE_API_VERSION,
        kind: 'AzureMachinePoolMachine',
        name: ampm.metadata.name,
        namespace,
      },
      ...(spec.providerID === undefined ? {} : { providerID: spec.providerID }),
      ...(typeof version === 'string' ? { version } : {}),
    },
    status,
  };
}
