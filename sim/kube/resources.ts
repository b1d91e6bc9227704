/**
 * The resources the simulated API server serves, with what discovery advertises for each (group,
 * version, kind, scope, verbs, subresources) and which fields their `fieldSelector` may use.
 */
import type { KubeResource } from '../contracts.js';
import {
  CLUSTER_API_GROUPS,
  CLUSTER_API_RESOURCES,
  type CoreVersion,
  servesClusterApiGroupVersion,
  servesClusterApiResource,
} from './cluster-api-resources.js';
import type { CustomResourceVersion } from './crd-types.js';
import type { Schema } from './openapi-schemas.js';

export interface ResourceInfo {
  resource: KubeResource;
  group: string;
  version: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  /** Subresource name → kind, for discovery (`pods/eviction` → `Eviction` in policy/v1). */
  subresources?: Record<string, { kind: string; group?: string; version?: string; verbs: string[] }>;
  fieldSelectors: string[];
  /** Categories discovery lists (`kubectl get all`, `api-extensions`). */
  categories?: string[];
  /** The REST name where it differs from the store key: a custom resource is stored as `<plural>.<group>`. */
  plural?: string;
  /** What its CustomResourceDefinition declares for this version (custom resources only). */
  custom?: CustomResourceVersion;
}

/** The resource's name in URLs, RBAC and messages (`nodes`, `poolimagepolicies`). */
export function restNameOf(info: ResourceInfo): string {
  return info.plural ?? info.resource;
}

/** What the OpenAPI documents add for custom resources (openapi.ts). */
export interface OpenApiExtension {
  /** Changes whenever what is served changes: part of the documents' cache key. */
  revision: string;
  groupVersions: readonly { group: string; version: string }[];
  resources: readonly ResourceInfo[];
  definitions: Readonly<Record<string, Schema>>;
  /** The same in the Swagger 2.0 form (`/openapi/v2`). */
  definitionsV2: Readonly<Record<string, Schema>>;
}

/** The custom resources an API server serves, from its established CRDs (crd-registry.ts). */
export interface ServedCustomResources {
  find(group: string, version: string, plural: string): ResourceInfo | undefined;
  /** Served groups, each with its versions in preference order (the first is preferred). */
  groups(): readonly { group: string; versions: readonly string[] }[];
  resources(group: string, version: string): readonly ResourceInfo[];
  openApi(): OpenApiExtension;
  /** The store keys of every namespaced custom resource (a namespace deletion removes their objects). */
  namespacedKeys(): readonly KubeResource[];
}

const READ_WRITE = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const METADATA_FIELDS = ['metadata.name', 'metadata.namespace'];

export const RESOURCES: readonly ResourceInfo[] = [
  {
    resource: 'namespaces',
    group: '',
    version: 'v1',
    kind: 'Namespace',
    singular: 'namespace',
    namespaced: false,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['ns'],
    fieldSelectors: ['metadata.name', 'status.phase'],
  },
  {
    resource: 'nodes',
    group: '',
    version: 'v1',
    kind: 'Node',
    singular: 'node',
    namespaced: false,
    verbs: READ_WRITE,
    shortNames: ['no'],
    subresources: { status: { kind: 'Node', verbs: ['get', 'patch', 'update'] } },
    fieldSelectors: ['metadata.name', 'spec.unschedulable'],
  },
  {
    resource: 'pods',
    group: '',
    version: 'v1',
    kind: 'Pod',
    singular: 'pod',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['po'],
    subresources: {
      eviction: { kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
      status: { kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    },
    fieldSelectors: [
      ...METADATA_FIELDS,
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
  },
  {
    resource: 'serviceaccounts',
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    singular: 'serviceaccount',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['sa'],
    fieldSelectors: METADATA_FIELDS,
  },
  {
    resource: 'secrets',
    group: '',
    version: 'v1',
    kind: 'Secret',
    singular: 'secret',
    namespaced: true,
    verbs: READ_WRITE,
    fieldSelectors: [...METADATA_FIELDS, 'type'],
  },
  {
    resource: 'events',
    group: '',
    version: 'v1',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['ev'],
    fieldSelectors: [
      ...METADATA_FIELDS,
      'involvedObject.kind',
      'involvedObject.name',
      'involvedObject.namespace',
      'involvedObject.uid',
      'reason',
      'type',
    ],
  },
  {
    resource: 'daemonsets',
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    singular: 'daemonset',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['ds'],
    fieldSelectors: METADATA_FIELDS,
  },
  {
    resource: 'replicasets',
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    singular: 'replicaset',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['rs'],
    fieldSelectors: METADATA_FIELDS,
  },
  {
    resource: 'deployments',
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    singular: 'deployment',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['deploy'],
    fieldSelectors: METADATA_FIELDS,
  },
  {
    resource: 'poddisruptionbudgets',
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    singular: 'poddisruptionbudget',
    namespaced: true,
    verbs: READ_WRITE,
    shortNames: ['pdb'],
    fieldSelectors: METADATA_FIELDS,
  },
  {
    resource: 'leases',
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    singular: 'lease',
    namespaced: true,
    verbs: READ_WRITE,
    fieldSelectors: METADATA_FIELDS,
  },
  {
    resource: 'customresourcedefinitions',
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    singular: 'customresourcedefinition',
    namespaced: false,
    verbs: READ_WRITE,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: { status: { kind: 'CustomResourceDefinition', verbs: ['get', 'patch', 'update'] } },
    fieldSelectors: ['metadata.name'],
  },
  ...CLUSTER_API_RESOURCES,
];

export function apiVersionOf(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

export function findResource(group: string, version: string, plural: string): ResourceInfo | undefined {
  return RESOURCES.find(
    (info) => info.group === group && info.version === version && info.resource === plural,
  );
}

export function resourceInfo(resource: KubeResource): ResourceInfo {
  const info = RESOURCES.find((candidate) => candidate.resource === resource);
  if (!info) throw new Error(`looking up resource ${resource}: not served`);
  return info;
}

export type ReviewKind = 'SelfSubjectAccessReview' | 'SelfSubjectRulesReview' | 'SelfSubjectReview';

/** The review resources, by group: what discovery lists and what the router accepts (POST only). */
export const REVIEW_RESOURCES: readonly {
  group: string;
  version: string;
  resource: string;
  kind: ReviewKind;
}[] = [
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: 'selfsubjectaccessreviews',
    kind: 'SelfSubjectAccessReview',
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: 'selfsubjectrulesreviews',
    kind: 'SelfSubjectRulesReview',
  },
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
  },
];

/** Group versions served under `/apis`, besides the legacy core group under `/api/v1`. */
export const API_GROUPS: readonly { group: string; version: string }[] = [
  { group: 'apps', version: 'v1' },
  { group: 'policy', version: 'v1' },
  { group: 'coordination.k8s.io', version: 'v1' },
  { group: 'authorization.k8s.io', version: 'v1' },
  { group: 'authentication.k8s.io', version: 'v1' },
  { group: 'apiextensions.k8s.io', version: 'v1' },
  ...CLUSTER_API_GROUPS,
];

/** `/version` of an API server running `gitVersion` (e.g. `v1.30.6`, the scenario's cluster version). */
export function serverVersion(gitVersion = 'v1.32.4'): Record<string, string> {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(gitVersion);
  return {
    major: match?.[1] ?? '1',
    minor: match?.[2] ?? '32',
    gitVersion: gitVersion.startsWith('v') ? gitVersion : `v${gitVersion}`,
    gitCommit: '59526cd4867447956156ae3a602fcbac10a2c335',
    gitTreeState: 'clean',
    buildDate: '2025-04-22T16:02:27Z',
    goVersion: 'go1.23.6',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/**
 * The `APIResourceList` of a group version; `clusterApi`, the cluster.x-k8s.io versions a management
 * cluster serves, leaves out what it does not serve there.
 */
export function apiResourceList(
  group: string,
  version: string,
  custom?: ServedCustomResources,
  clusterApi?: readonly CoreVersion[],
): object {
  const resources: object[] = [];
  for (const info of [
    ...RESOURCES.filter(
      (candidate) =>
        candidate.group === group &&
        candidate.version === version &&
        (clusterApi === undefined || servesClusterApiResource(candidate, clusterApi)),
    ),
    ...(custom?.resources(group, version) ?? []),
  ]) {
    resources.push({
      name: restNameOf(info),
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: info.verbs,
      ...(info.shortNames ? { shortNames: info.shortNames } : {}),
      ...(info.categories ? { categories: info.categories } : {}),
    });
    for (const [sub, subInfo] of Object.entries(info.subresources ?? {})) {
      resources.push({
        name: `${restNameOf(info)}/${sub}`,
        singularName: '',
        namespaced: info.namespaced,
        ...(subInfo.group !== undefined ? { group: subInfo.group, version: subInfo.version } : {}),
        kind: subInfo.kind,
        verbs: subInfo.verbs,
      });
    }
  }
  for (const review of REVIEW_RESOURCES.filter(
    (candidate) => candidate.group === group && candidate.version === version,
  )) {
    resources.push({
      name: review.resource,
      singularName: '',
      namespaced: false,
      kind: review.kind,
      verbs: ['create'],
    });
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources,
  };
}

/** Whether a group is one only a Cluster API management cluster serves (its CRDs are installed there). */
export function isClusterApiGroup(group: string): boolean {
  return CLUSTER_API_GROUPS.some((entry) => entry.group === group);
}

/**
 * The group versions an API server serves: the Cluster API ones only on a management cluster
 * (`clusterApi`, the versions of cluster.x-k8s.io it serves).
 */
export function servedGroups(
  clusterApi: readonly CoreVersion[] | undefined,
): readonly { group: string; version: string }[] {
  return API_GROUPS.filter(
    (entry) =>
      !isClusterApiGroup(entry.group) ||
      (clusterApi !== undefined && servesClusterApiGroupVersion(entry.group, entry.version, clusterApi)),
  );
}

/** The served groups, each with its versions in preference order (API_GROUPS lists the preferred first). */
export function servedGroupVersions(
  clusterApi: readonly CoreVersion[] | undefined,
): { group: string; versions: string[] }[] {
  const groups: { group: string; versions: string[] }[] = [];
  for (const { group, version } of servedGroups(clusterApi)) {
    const found = groups.find((entry) => entry.group === group);
    if (found) found.versions.push(version);
    else groups.push({ group, versions: [version] });
  }
  return groups;
}

export function apiGroupList(clusterApi?: readonly CoreVersion[], custom?: ServedCustomResources): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [
      ...servedGroupVersions(clusterApi).map(({ group, versions }) => apiGroup(group, versions)),
      ...(custom?.groups() ?? []).map(({ group, versions }) => apiGroup(group, versions)),
    ],
  };
}

/** An `APIGroup` (`/apis/<group>` and an entry of `/apis`): versions in preference order. */
export function apiGroup(group: string, versions: readonly string[]): Record<string, unknown> {
  const entries = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions: entries, preferredVersion: entries[0] };
}

export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}
