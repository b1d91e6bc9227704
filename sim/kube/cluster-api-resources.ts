/**
 * The Cluster API and CAPZ kinds a management cluster serves (the CRDs of cluster-api and
 * cluster-api-provider-azure, v1beta1): Cluster, MachinePool and Machine (cluster.x-k8s.io), AzureMachinePool and
 * AzureMachinePoolMachine (infrastructure.cluster.x-k8s.io), KubeadmConfig (bootstrap.cluster.x-k8s.io).
 * Every one is namespaced and has a `status` subresource, as its CRD declares.
 */
import type { KubeResource } from '../contracts.js';

/** The shape of resources.ts's `ResourceInfo` (kept here structurally: resources.ts imports this file). */
interface CrdInfo {
  resource: KubeResource;
  group: string;
  version: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  subresources: Record<string, { kind: string; group?: string; version?: string; verbs: string[] }>;
  fieldSelectors: string[];
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const FIELDS = ['metadata.name', 'metadata.namespace'];

function crd(resource: KubeResource, group: string, kind: string, shortNames: string[]): CrdInfo {
  return {
    resource,
    group,
    version: 'v1beta1',
    kind,
    singular: kind.toLowerCase(),
    namespaced: true,
    verbs: VERBS,
    shortNames,
    subresources: { status: { kind, verbs: ['get', 'patch', 'update'] } },
    fieldSelectors: FIELDS,
  };
}

/** MachinePool's CRD also serves `/scale` (an autoscaling/v1 Scale, sim/kube/scale-subresource.ts). */
function withScale(info: CrdInfo): CrdInfo {
  return {
    ...info,
    subresources: {
      ...info.subresources,
      scale: { kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] },
    },
  };
}

export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';
export const INFRASTRUCTURE_GROUP = 'infrastructure.cluster.x-k8s.io';
export const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';

/** Short names as the CRDs declare them (`kubectl get mp`, `ampm`). */
export const CLUSTER_API_RESOURCES: readonly CrdInfo[] = [
  crd('clusters', CLUSTER_API_GROUP, 'Cluster', ['cl']),
  withScale(crd('machinepools', CLUSTER_API_GROUP, 'MachinePool', ['mp'])),
  crd('machines', CLUSTER_API_GROUP, 'Machine', ['ma']),
  crd('azuremachinepools', INFRASTRUCTURE_GROUP, 'AzureMachinePool', ['amp']),
  crd('azuremachinepoolmachines', INFRASTRUCTURE_GROUP, 'AzureMachinePoolMachine', ['ampm']),
  crd('kubeadmconfigs', BOOTSTRAP_GROUP, 'KubeadmConfig', []),
];

export const CLUSTER_API_GROUPS: readonly { group: string; version: string }[] = [
  { group: CLUSTER_API_GROUP, version: 'v1beta1' },
  { group: INFRASTRUCTURE_GROUP, version: 'v1beta1' },
  { group: BOOTSTRAP_GROUP, version: 'v1beta1' },
];
