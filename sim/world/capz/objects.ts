/**
 * The Cluster API and CAPZ objects the management cluster holds for a CAPZ MachinePool pool, in the
 * v1beta1 shapes of cluster-api (exp/api/v1beta1/machinepool_types.go, bootstrap/kubeadm/api) and
 * cluster-api-provider-azure (exp/api/v1beta1/azuremachinepool_types.go,
 * azuremachinepoolmachine_types.go), https://github.com/kubernetes-sigs/cluster-api and
 * https://github.com/kubernetes-sigs/cluster-api-provider-azure. Builders and readers only; the
 * reconciler (reconciler.ts) decides what to write.
 */
import { createHash } from 'node:crypto';

import type { JsonObject } from '../../arm/compute-state.js';
import type { KubeObject } from '../../contracts.js';
import type { MachinePoolSpec } from './scenario.js';

export const CLUSTER_API_VERSION = 'cluster.x-k8s.io/v1beta1';
export const INFRASTRUCTURE_API_VERSION = 'infrastructure.cluster.x-k8s.io/v1beta1';
export const BOOTSTRAP_API_VERSION = 'bootstrap.cluster.x-k8s.io/v1beta1';

/** `clusterv1.ClusterNameLabel`: every CAPI object of a cluster carries it. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** `infrav1exp.MachinePoolNameLabel` (exp/api/v1beta1/azuremachinepool_types.go): an AzureMachinePoolMachine's AzureMachinePool. */
export const MACHINE_POOL_NAME_LABEL = 'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool';
/** The tag CAPZ keeps the bootstrap data's SHA-256 in, since ARM never returns customData (azure/services/scalesets/spec.go). */
export const CUSTOM_DATA_HASH_TAG = 'capz-custom-data-hash';
/** `infrav1.NameAzureClusterAPIRole` (api/v1beta1/tags.go), `node` for MachinePool scale sets. */
export const CAPZ_ROLE_TAG = 'sigs.k8s.io_cluster-api-provider-azure_role';
/** The label the product puts on the three objects of a canary pool: the scale set it is a canary of. */
export const CANARY_OF_LABEL = 'vmss-prototype.io/canary-of';
export const AUTOSCALER_MIN_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
export const AUTOSCALER_MAX_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';

/** `calculateBootstrapDataHash` (azure/services/scalesets/spec.go): hex SHA-256 of the bootstrap data. */
export function customDataHash(bootstrapData: string): string {
  return createHash('sha256').update(bootstrapData).digest('hex');
}

export interface PoolObjectsInput {
  namespace: string;
  clusterName: string;
  name: string;
  kubernetesVersion: string;
  replicas: number;
  location: string;
  vmSize: string;
  image: JsonObject;
  osDisk: JsonObject;
  strategy: MachinePoolSpec['strategy'];
  autoscaler?: MachinePoolSpec['autoscaler'];
  /** The pool's bootstrap data (cloud-init, plain text). */
  bootstrapData: string;
  /** The bootstrap token the data joins with, if any. */
  token?: string;
}

export function clusterObject(namespace: string, clusterName: string): KubeObject {
  return {
    apiVersion: CLUSTER_API_VERSION,
    kind: 'Cluster',
    metadata: { name: clusterName, namespace, labels: { [CLUSTER_NAME_LABEL]: clusterName } },
    spec: {
      controlPlaneRef: {
        apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
        kind: 'KubeadmControlPlane',
        name: `${clusterName}-control-plane`,
      },
      infrastructureRef: { apiVersion: INFRASTRUCTURE_API_VERSION, kind: 'AzureCluster', name: clusterName },
    },
    status: { phase: 'Provisioned', infrastructureReady: true, controlPlaneReady: true },
  };
}

/** MachinePool, AzureMachinePool, KubeadmConfig and the bootstrap data Secret of one pool, all named `name`. */
export function poolObjects(input: PoolObjectsInput): {
  machinePool: KubeObject;
  azureMachinePool: KubeObject;
  kubeadmConfig: KubeObject;
  secret: KubeObject;
} {
  const labels = { [CLUSTER_NAME_LABEL]: input.clusterName };
  const meta = { name: input.name, namespace: input.namespace, labels };
  const autoscaler = input.autoscaler
    ? {
        annotations: {
          [AUTOSCALER_MIN_ANNOTATION]: String(input.autoscaler.min),
          [AUTOSCALER_MAX_ANNOTATION]: String(input.autoscaler.max),
        },
      }
    : {};
  const machinePool: KubeObject = {
    apiVersion: CLUSTER_API_VERSION,
    kind: 'MachinePool',
    metadata: { ...meta, ...autoscaler },
    spec: {
      clusterName: input.clusterName,
      replicas: input.replicas,
      template: {
        spec: {
          clusterName: input.clusterName,
          version: input.kubernetesVersion,
          bootstrap: {
            configRef: { apiVersion: BOOTSTRAP_API_VERSION, kind: 'KubeadmConfig', name: input.name },
            // CAPI's MachinePool controller copies the config's data Secret name here once it is ready.
            dataSecretName: input.name,
          },
          infrastructureRef: {
            apiVersion: INFRASTRUCTURE_API_VERSION,
            kind: 'AzureMachinePool',
            name: input.name,
          },
        },
      },
    },
    status: {},
  };
  const azureMachinePool: KubeObject = {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: 'AzureMachinePool',
    metadata: { ...meta },
    spec: {
      location: input.location,
      template: { vmSize: input.vmSize, image: input.image, osDisk: input.osDisk },
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          maxSurge: input.strategy.maxSurge,
          maxUnavailable: input.strategy.maxUnavailable,
          deletePolicy: input.strategy.deletePolicy,
        },
      },
    },
    status: {},
  };
  const kubeadmConfig: KubeObject = {
    apiVersion: BOOTSTRAP_API_VERSION,
    kind: 'KubeadmConfig',
    metadata: { ...meta },
    spec: {
      joinConfiguration: {
        nodeRegistration: {
          name: '{{ ds.meta_data["local_hostname"] }}',
          kubeletExtraArgs: { 'cloud-provider': 'external' },
        },
        ...(input.token === undefined ? {} : { discovery: { bootstrapToken: { token: input.token } } }),
      },
    },
    status: { ready: true, dataSecretName: input.name },
  };
  return {
    machinePool,
    azureMachinePool,
    kubeadmConfig,
    secret: bootstrapSecret(input.namespace, input.name, input.clusterName, input.bootstrapData),
  };
}

/** CABPK's bootstrap data Secret: `data.value` is the cloud-init, `data.format` says so. */
export function bootstrapSecret(
  namespace: string,
  name: string,
  clusterName: string,
  bootstrapData: string,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { [CLUSTER_NAME_LABEL]: clusterName } },
    type: 'cluster.x-k8s.io/secret',
    data: {
      value: Buffer.from(bootstrapData).toString('base64'),
      format: Buffer.from('cloud-config').toString('base64'),
    },
  };
}

/** The plain bootstrap data a Secret holds, if any. */
export function bootstrapDataOf(secret: KubeObject | undefined): string | undefined {
  const value = (secret?.data as Record<string, unknown> | undefined)?.value;
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

/**
 * The scale set's imageReference for an AzureMachinePool's `template.image`, as CAPZ converts it
 * (azure/converters/image.go `ImageToSDK`): `id` as it is; `marketplace` as publisher/offer/sku/version;
 * `sharedGallery` → the version's ARM id from its fields; `computeGallery` with both `subscriptionID` and
 * `resourceGroup` → the version's ARM id, without them → a community gallery reference
 * (`communityGalleryImageId: /CommunityGalleries/<gallery>/Images/<name>/Versions/<version>`), never the
 * cluster's own subscription.
 */
export function imageReferenceOf(image: unknown): JsonObject | undefined {
  if (typeof image !== 'object' || image === null) return undefined;
  const spec = image as Record<string, Record<string, unknown> | string | undefined>;
  if (typeof spec.id === 'string') return { id: spec.id };
  const market = spec.marketplace;
  if (typeof market === 'object') {
    return { publisher: market.publisher, offer: market.offer, sku: market.sku, version: market.version };
  }
  const galleryId = (fields: Record<string, unknown>, subscription: unknown, group: unknown): string =>
    `/subscriptions/${String(subscription)}/resourceGroups/${String(group)}/providers/Microsoft.Compute/galleries/${String(fields.gallery)}/images/${String(fields.name)}/versions/${String(fields.version)}`;
  const shared = spec.sharedGallery;
  if (typeof shared === 'object')
    return { id: galleryId(shared, shared.subscriptionID, shared.resourceGroup) };
  const gallery = spec.computeGallery;
  if (typeof gallery === 'object') {
    if (typeof gallery.subscriptionID === 'string' && typeof gallery.resourceGroup === 'string') {
      return { id: galleryId(gallery, gallery.subscriptionID, gallery.resourceGroup) };
    }
    return {
      communityGalleryImageId: `/CommunityGalleries/${String(gallery.gallery)}/Images/${String(gallery.name)}/Versions/${String(gallery.version)}`,
    };
  }
  return undefined;
}

/** The AzureMachinePool `template.image` for a scale set's imageReference (the inverse, for the objects made at load). */
export function templateImageOf(imageReference: JsonObject): JsonObject {
  const id = imageReference.id;
  if (typeof id === 'string') {
    const match =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/galleries\/([^/]+)\/images\/([^/]+)\/versions\/([^/]+)$/i.exec(
        id,
      );
    if (match) {
      const [, subscriptionID = '', resourceGroup = '', gallery = '', name = '', version = ''] = match;
      return { computeGallery: { gallery, name, version, subscriptionID, resourceGroup } };
    }
    return { id };
  }
  return {
    marketplace: {
      publisher: imageReference.publisher,
      offer: imageReference.offer,
      sku: imageReference.sku,
      version: imageReference.version,
    },
  };
}

/** An AzureMachinePoolMachine for an instance: `<amp>-<instanceId>`, labelled with its pool and cluster. */
export function machineObject(
  namespace: string,
  clusterName: string,
  amp: KubeObject,
  instance: { instanceId: string; providerId: string },
): KubeObject {
  return {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: 'AzureMachinePoolMachine',
    metadata: {
      name: `${amp.metadata.name}-${instance.instanceId}`,
      namespace,
      labels: { [CLUSTER_NAME_LABEL]: clusterName, [MACHINE_POOL_NAME_LABEL]: amp.metadata.name },
      ownerReferences: [
        {
          apiVersion: INFRASTRUCTURE_API_VERSION,
          kind: 'AzureMachinePool',
          name: amp.metadata.name,
          uid: amp.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: { providerID: instance.providerId, instanceID: instance.instanceId },
    status: {},
  };
}

/**
 * Whether two imageReferences name the same image, as CAPZ compares them (`VMSS.HasLatestModelApplied`,
 * azure/types.go, and `hasLatestModelApplied`, azure/scope/machinepoolmachine.go): by their fields, ids
 * case-insensitively, whatever the key order.
 */
export function sameImage(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): string => {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value);
    const record = value as Record<string, unknown>;
    return JSON.stringify(
      Object.keys(record)
        .sort()
        .map((key) => [
          key,
          key === 'id' && typeof record[key] === 'string' ? record[key].toLowerCase() : record[key],
        ]),
    );
  };
  return canonical(a) === canonical(b);
}

/** A stable order for `deletePolicy: Random` that does not depend on the run: the machines' names hashed. */
export function randomRank(name: string): string {
  return createHash('sha256').update(`random:${name}`).digest('hex');
}
