/**
 * What a management cluster holds at the start: for each workload cluster it manages, the Cluster
 * object, and for each scale set carrying that cluster's CAPZ owner tag, a MachinePool, its
 * AzureMachinePool (named like the scale set: CAPZ names the scale set after it), KubeadmConfig and
 * bootstrap data Secret, and an AzureMachinePoolMachine per instance — as CAPZ would have left them.
 */
import type { ComputeState } from '../../arm/compute-state.js';
import type { KubeStore } from '../../contracts.js';
import type { ClusterWorld } from '../cluster.js';
import { kubeadmJoinOf } from '../kubeadm.js';
import type { ScaleSet } from '../scenario.js';
import { clusterObject, machineObject, poolObjects, templateImageOf } from './objects.js';
import { capzOwnerTag } from './scenario.js';

/** A workload cluster a management cluster manages. */
export interface ManagedCluster {
  clusterName: string;
  namespace: string;
  world: ClusterWorld;
  subscriptionId: string;
}

const DEFAULT_STRATEGY = { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' } as const;

function ensureNamespace(store: KubeStore, namespace: string): void {
  if (store.get('namespaces', undefined, namespace)) return;
  store.create('namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: { 'kubernetes.io/metadata.name': namespace } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
}

/** The CAPZ pools of a managed cluster: its scale sets with the cluster's owner tag `owned`. */
export function capzScaleSets(managed: ManagedCluster): ScaleSet[] {
  const tag = capzOwnerTag(managed.clusterName);
  return managed.world.spec.scaleSets.filter((scaleSet) => scaleSet.tags[tag] === 'owned');
}

export function scaleSetIdOf(managed: ManagedCluster, name: string): string {
  return `/subscriptions/${managed.subscriptionId}/resourceGroups/${managed.world.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
}

export function seedManagementObjects(
  store: KubeStore,
  compute: ComputeState,
  managed: ManagedCluster,
  location: string,
): void {
  ensureNamespace(store, managed.namespace);
  store.create('clusters', clusterObject(managed.namespace, managed.clusterName));
  for (const scaleSet of capzScaleSets(managed)) {
    const id = scaleSetIdOf(managed, scaleSet.name);
    const info = compute.getScaleSet(id);
    const model = compute.getScaleSetModel(id);
    if (!info || !model) continue;
    const bootstrapData = scaleSet.customData ?? '';
    const token = kubeadmJoinOf(bootstrapData)?.token;
    const storageProfile = (
      model.virtualMachineProfile as { storageProfile?: { osDisk?: Record<string, unknown> } }
    ).storageProfile;
    const osDisk = storageProfile?.osDisk ?? {};
    const objects = poolObjects({
      namespace: managed.namespace,
      clusterName: managed.clusterName,
      name: scaleSet.name,
      kubernetesVersion: managed.world.spec.kubernetesVersion,
      replicas: info.capacity,
      location,
      vmSize: scaleSet.vmSize,
      image: templateImageOf(info.imageReference),
      osDisk: {
        osType: scaleSet.osType,
        diskSizeGB: osDisk.diskSizeGB ?? 128,
        managedDisk: osDisk.managedDisk ?? { storageAccountType: 'Premium_LRS' },
        cachingType: osDisk.caching ?? 'ReadWrite',
      },
      strategy: scaleSet.machinePool?.strategy ?? DEFAULT_STRATEGY,
      ...(scaleSet.machinePool?.autoscaler ? { autoscaler: scaleSet.machinePool.autoscaler } : {}),
      bootstrapData,
      ...(token ? { token } : {}),
    });
    const machinePool = store.create('machinepools', objects.machinePool);
    const owner = {
      apiVersion: machinePool.apiVersion,
      kind: 'MachinePool',
      name: machinePool.metadata.name,
      uid: machinePool.metadata.uid ?? '',
    };
    const amp = store.create('azuremachinepools', {
      ...objects.azureMachinePool,
      metadata: { ...objects.azureMachinePool.metadata, ownerReferences: [{ ...owner, controller: true }] },
    });
    store.create('kubeadmconfigs', {
      ...objects.kubeadmConfig,
      metadata: { ...objects.kubeadmConfig.metadata, ownerReferences: [{ ...owner, controller: true }] },
    });
    store.create('secrets', objects.secret);
    for (const instance of compute.listInstances(id)) {
      store.create(
        'azuremachinepoolmachines',
        machineObject(managed.namespace, managed.clusterName, amp, instance),
      );
    }
  }
}
