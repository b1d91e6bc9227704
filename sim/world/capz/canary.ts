/**
 * Canary pools: a MachinePool whose AzureMachinePool has no scale set yet gets one, as CAPZ's scale set
 * service creates a missing scale set from the AzureMachinePool (azure/services/scalesets/scalesets.go,
 * https://github.com/kubernetes-sigs/cluster-api-provider-azure). The simulator clones the model of the
 * pool named by the `vmss-prototype.io/canary-of` label (size, extensions, tags with the owner tags),
 * with the AzureMachinePool's image and the KubeadmConfig's bootstrap data; a config without data gets
 * the source pool's (CABPK would generate it).
 */
import type { ComputeState, JsonObject } from '../../arm/compute-state.js';
import type { KubeObject, KubeStore } from '../../contracts.js';
import { specOf, statusOf } from '../../kube/objects.js';
import {
  bootstrapDataOf,
  bootstrapSecret,
  CANARY_OF_LABEL,
  CAPZ_ROLE_TAG,
  CLUSTER_NAME_LABEL,
  CUSTOM_DATA_HASH_TAG,
  customDataHash,
} from './objects.js';
import { capzOwnerTag } from './scenario.js';
import { type ManagedCluster, scaleSetIdOf } from './seed.js';

/**
 * The pool a canary is of: its `vmss-prototype.io/canary-of` label names a MachinePool (whose
 * AzureMachinePool names the scale set and whose KubeadmConfig holds the data), or else a scale set.
 */
export function canarySourceOf(
  store: KubeStore,
  namespace: string,
  amp: KubeObject,
): { scaleSet: string; config: string } | undefined {
  const label = amp.metadata.labels?.[CANARY_OF_LABEL];
  if (label === undefined) return undefined;
  const machinePool = store.get('machinepools', namespace, label);
  const template = (
    (machinePool ? specOf(machinePool).template : undefined) as
      | { spec?: { infrastructureRef?: { name?: string }; bootstrap?: { configRef?: { name?: string } } } }
      | undefined
  )?.spec;
  return {
    scaleSet: template?.infrastructureRef?.name ?? label,
    config: template?.bootstrap?.configRef?.name ?? label,
  };
}

/**
 * The bootstrap data of a MachinePool's KubeadmConfig. A config without data yet (a canary's) gets what
 * CABPK would generate: the source pool's data with a bootstrap token of its own (`issueToken` creates it
 * in the workload cluster and returns the data carrying it, and the token).
 */
export function bootstrapDataFor(
  store: KubeStore,
  namespace: string,
  configName: string | undefined,
  amp: KubeObject,
  issueToken: (sourceData: string) => { data: string; token?: string },
): string | undefined {
  if (configName === undefined) return undefined;
  const config = store.get('kubeadmconfigs', namespace, configName);
  if (!config) return undefined;
  const secretName = statusOf(config).dataSecretName;
  if (typeof secretName === 'string') return bootstrapDataOf(store.get('secrets', namespace, secretName));
  const source = canarySourceOf(store, namespace, amp);
  const sourceConfig =
    source === undefined ? undefined : store.get('kubeadmconfigs', namespace, source.config);
  const sourceSecret = sourceConfig ? statusOf(sourceConfig).dataSecretName : undefined;
  const sourceData =
    typeof sourceSecret === 'string'
      ? bootstrapDataOf(store.get('secrets', namespace, sourceSecret))
      : undefined;
  if (sourceData === undefined) return undefined;
  const { data, token } = issueToken(sourceData);
  const clusterName = amp.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';
  store.create('secrets', bootstrapSecret(namespace, configName, clusterName, data));
  store.mutate('kubeadmconfigs', namespace, configName, (object) => {
    if (token !== undefined) {
      const spec = specOf(object);
      const join = (spec.joinConfiguration ?? {}) as Record<string, unknown>;
      const discovery = (join.discovery ?? {}) as Record<string, unknown>;
      const bootstrapToken = (discovery.bootstrapToken ?? {}) as Record<string, unknown>;
      object.spec = {
        ...spec,
        joinConfiguration: {
          ...join,
          discovery: { ...discovery, bootstrapToken: { ...bootstrapToken, token } },
        },
      };
    }
    object.status = { ...statusOf(object), ready: true, dataSecretName: configName };
  });
  return data;
}

/** Creates a canary's scale set; returns what it did, or undefined when its source pool is unknown. */
export function createCanaryScaleSet(
  store: KubeStore,
  compute: ComputeState,
  managed: ManagedCluster,
  amp: KubeObject,
  image: JsonObject,
  bootstrapData: string,
  replicas: number,
): string | undefined {
  const scaleSetId = scaleSetIdOf(managed, amp.metadata.name);
  const name = amp.metadata.name;
  const sourceName = canarySourceOf(store, managed.namespace, amp)?.scaleSet;
  const sourceSpec = managed.world.spec.scaleSets.find((scaleSet) => scaleSet.name === sourceName);
  const sourceId = sourceName === undefined ? undefined : scaleSetIdOf(managed, sourceName);
  const source = sourceId === undefined ? undefined : compute.getScaleSet(sourceId);
  const model = sourceId === undefined ? undefined : compute.getScaleSetModel(sourceId);
  if (!sourceSpec || !source || !model) return undefined;
  const vmSize = (specOf(amp).template as { vmSize?: unknown } | undefined)?.vmSize;
  compute.addScaleSet({
    subscriptionId: managed.subscriptionId,
    resourceGroup: managed.world.resourceGroup,
    name,
    location: source.location,
    orchestrationMode: source.orchestrationMode,
    skuName: typeof vmSize === 'string' ? vmSize : sourceSpec.vmSize,
    instances: 0,
    computerNamePrefix: name,
    imageReference: image as { id: string },
    hyperVGeneration: source.hyperVGeneration,
    tags: source.tags,
  });
  managed.world.adoptScaleSet(
    { ...sourceSpec, name, computerNamePrefix: name, capacity: replicas, nodes: [] },
    scaleSetId,
  );
  const profile = model.virtualMachineProfile as { storageProfile: JsonObject; osProfile: JsonObject };
  profile.storageProfile.imageReference = image;
  profile.osProfile.customData = Buffer.from(bootstrapData).toString('base64');
  profile.osProfile.computerNamePrefix = name;
  const tags = {
    ...source.tags,
    [capzOwnerTag(managed.clusterName)]: 'owned',
    [CAPZ_ROLE_TAG]: 'node',
    Name: name,
    [CUSTOM_DATA_HASH_TAG]: customDataHash(bootstrapData),
  };
  compute.replaceScaleSet(scaleSetId, { properties: model, tags, capacity: replicas });
  return `created scale set ${name} (${replicas} instances) from ${sourceName ?? ''} with imageReference ${JSON.stringify(image)}`;
}
