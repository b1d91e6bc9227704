/**
 * The Cluster API and CAPZ kinds a management cluster serves (the CRDs of cluster-api and
 * cluster-api-provider-azure, v1beta1): Cluster, MachinePool and Machine (cluster.x-k8s.io), AzureMachinePool and
 * AzureMachinePoolMachine (infrastructure.cluster.x-k8s.io), KubeadmConfig (bootstrap.cluster.x-k8s.io).
 * Every one is namespaced and has a `status` subresource, as its CRD declares. MachinePool and Machine are
 * also served at `v1beta2` (Cluster API v1.11+: `core/config/crd/bases/cluster.x-k8s.io_machinepools.yaml`
 * marks v1beta1 `deprecated` and v1beta2 the storage version), one stored object converted
 * (cluster-api-conversion.ts); a world may serve either version alone (`clusterApi.servedVersions`).
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

function crd(
  resource: KubeResource,
  group: string,
  kind: string,
  shortNames: string[],
  version = 'v1beta1',
): CrdInfo {
  return {
    resource,
    group,
    version,
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
  // After the v1beta1 entries: the store key's first entry (resources.ts `resourceInfo`) stays v1beta1.
  withScale(crd('machinepools', CLUSTER_API_GROUP, 'MachinePool', ['mp'], 'v1beta2')),
  crd('machines', CLUSTER_API_GROUP, 'Machine', ['ma'], 'v1beta2'),
  crd('azuremachinepools', INFRASTRUCTURE_GROUP, 'AzureMachinePool', ['amp']),
  crd('azuremachinepoolmachines', INFRASTRUCTURE_GROUP, 'AzureMachinePoolMachine', ['ampm']),
  crd('kubeadmconfigs', BOOTSTRAP_GROUP, 'KubeadmConfig', []),
];

/** The versions of cluster.x-k8s.io a management cluster may serve (its MachinePool and Machine). */
export type CoreVersion = 'v1beta1' | 'v1beta2';
/** Cluster API v1.11+: both, v1beta2 the storage version and v1beta1 deprecated. */
export const CURRENT_CORE_VERSIONS: readonly CoreVersion[] = ['v1beta1', 'v1beta2'];

/** Every group version a management cluster may serve, v1beta2 before v1beta1 (the preferred first). */
export const CLUSTER_API_GROUPS: readonly { group: string; version: string }[] = [
  { group: CLUSTER_API_GROUP, version: 'v1beta2' },
  { group: CLUSTER_API_GROUP, version: 'v1beta1' },
  { group: INFRASTRUCTURE_GROUP, version: 'v1beta1' },
  { group: BOOTSTRAP_GROUP, version: 'v1beta1' },
];

/** The kinds served at v1beta2 too, and converted between the versions. */
export const CONVERTED_RESOURCES: ReadonlySet<string> = new Set(['machinepools', 'machines']);

/**
 * Whether a cluster serving `coreVersions` of cluster.x-k8s.io serves a Cluster API resource at its
 * version: MachinePool and Machine at those versions; Cluster at v1beta1 only (sim/README.md).
 */
export function servesClusterApiResource(
  info: { resource: string; group: string; version: string },
  coreVersions: readonly CoreVersion[],
): boolean {
  if (info.group !== CLUSTER_API_GROUP) return true;
  if (!CONVERTED_RESOURCES.has(info.resource)) return info.version === 'v1beta1';
  return (coreVersions as readonly string[]).includes(info.version);
}

/** Whether a Cluster API group version is served: cluster.x-k8s.io/v1beta2 only with MachinePool's. */
export function servesClusterApiGroupVersion(
  group: string,
  version: string,
  coreVersions: readonly CoreVersion[],
): boolean {
  return group !== CLUSTER_API_GROUP || version === 'v1beta1' || coreVersions.includes('v1beta2');
}

/**
 * The deprecation warning the API server sends with every request to a version its CRD marks
 * `deprecated: true` without a `deprecationWarning` (apiextensions-apiserver
 * `pkg/apiserver/customresource_handler.go` `defaultDeprecationWarning`): v1beta1 MachinePool and Machine
 * once v1beta2 is served.
 */
export function deprecationWarning(
  resource: string,
  group: string,
  version: string,
  kind: string,
  coreVersions: readonly CoreVersion[],
): string | undefined {
  if (group !== CLUSTER_API_GROUP || version !== 'v1beta1' || !CONVERTED_RESOURCES.has(resource))
    return undefined;
  if (!coreVersions.includes('v1beta2')) return undefined;
  return `299 - "${group}/v1beta1 ${kind} is deprecated; use ${group}/v1beta2 ${kind}"`;
}
