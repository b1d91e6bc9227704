/**
 * The objects of a canary pool, cloned from the pool's own (pure): its KubeadmConfig, AzureMachinePool
 * and MachinePool with fresh metadata (name, namespace, the caller's labels, the cluster name and the
 * canary-of label), no status, and the fields the controllers own left out, so that Cluster API and
 * CAPZ build a new scale set from them.
 */
import { CANARY_OF_LABEL, CLUSTER_NAME_LABEL } from '../../domain/cluster-api-labels.js';
import type { CanaryPoolSpec } from '../../ports/cluster-api/machine-pools.js';
import { CLUSTER_API_GROUP, type MachinePoolVersion, templateReference } from './machine-pool-version.js';
import type { AzureMachinePool, KubeadmConfig, MachinePool } from './schema.js';

export const INFRASTRUCTURE_API_VERSION = 'infrastructure.cluster.x-k8s.io/v1beta1';
export const BOOTSTRAP_API_VERSION = 'bootstrap.cluster.x-k8s.io/v1beta1';

type Json = Record<string, unknown>;

function metadataOf(spec: CanaryPoolSpec, clusterName: string): Json {
  return {
    name: spec.name,
    namespace: spec.namespace,
    labels: {
      ...spec.labels,
      [CLUSTER_NAME_LABEL]: clusterName,
      [CANARY_OF_LABEL]: spec.source.machinePool,
    },
  };
}

function specOf(object: { spec?: unknown }): Json {
  const spec = object.spec;
  return typeof spec === 'object' && spec !== null ? (structuredClone(spec) as Json) : {};
}

/** The bootstrap configuration of the canary's machines: the pool's, under the canary's name. */
export function canaryKubeadmConfig(spec: CanaryPoolSpec, clusterName: string, source: KubeadmConfig): Json {
  return {
    apiVersion: BOOTSTRAP_API_VERSION,
    kind: 'KubeadmConfig',
    metadata: metadataOf(spec, clusterName),
    spec: withoutBootstrapToken(specOf(source)),
  };
}

/** CABPK issues the canary's machines their own bootstrap token: the pool's is not copied (docs/capz.md). */
function withoutBootstrapToken(spec: Json): Json {
  const join = spec['joinConfiguration'];
  if (typeof join !== 'object' || join === null) return spec;
  const discovery = (join as Json)['discovery'];
  if (typeof discovery !== 'object' || discovery === null) return spec;
  const token = (discovery as Json)['bootstrapToken'];
  if (typeof token === 'object' && token !== null) delete (token as Json)['token'];
  return spec;
}

/**
 * The pool's AzureMachinePool with the image under test. `providerIDList` lists the pool's own instances
 * (CAPZ fills it for the new scale set).
 */
export function canaryAzureMachinePool(
  spec: CanaryPoolSpec,
  clusterName: string,
  source: AzureMachinePool,
): Json {
  const cloned = specOf(source);
  delete cloned['providerIDList'];
  // CAPZ's defaulting webhook gives the canary's system-assigned identity its own role assignment name:
  // the pool's would clash (docs/capz.md).
  const identityRole = cloned['systemAssignedIdentityRole'];
  if (typeof identityRole === 'object' && identityRole !== null) delete (identityRole as Json)['name'];
  delete cloned['roleAssignmentName'];
  const template = (
    typeof cloned['template'] === 'object' && cloned['template'] !== null ? cloned['template'] : {}
  ) as Json;
  cloned['template'] = { ...template, image: structuredClone(spec.image) };
  return {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: 'AzureMachinePool',
    metadata: metadataOf(spec, clusterName),
    spec: cloned,
  };
}

/**
 * The pool's MachinePool with `replicas`, pointing at the clones, in the `version` it was read at. Its
 * annotations are not copied: the cluster-autoscaler must not scale the canary. `providerIDList` and
 * `bootstrap.dataSecretName` belong to the source's machines and bootstrap data (Cluster API sets the
 * canary's).
 */
export function canaryMachinePool(
  spec: CanaryPoolSpec,
  source: MachinePool,
  version: MachinePoolVersion,
): Json {
  const cloned = specOf(source);
  delete cloned['providerIDList'];
  cloned['replicas'] = spec.replicas;
  const template = structuredClone(source.spec.template) as Json;
  const templateSpec = structuredClone(source.spec.template.spec) as Json;
  const configRef = source.spec.template.spec.bootstrap.configRef;
  templateSpec['bootstrap'] = {
    configRef: templateReference(
      version,
      configRef,
      BOOTSTRAP_API_VERSION,
      configRef?.kind ?? 'KubeadmConfig',
      spec.name,
    ),
  };
  templateSpec['infrastructureRef'] = templateReference(
    version,
    source.spec.template.spec.infrastructureRef,
    INFRASTRUCTURE_API_VERSION,
    'AzureMachinePool',
    spec.name,
  );
  cloned['template'] = { ...template, spec: templateSpec };
  return {
    apiVersion: `${CLUSTER_API_GROUP}/${version}`,
    kind: 'MachinePool',
    metadata: metadataOf(spec, source.spec.clusterName),
    spec: cloned,
  };
}
