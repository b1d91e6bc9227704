/**
 * A management cluster's MachinePools over @kubernetes/client-node's CustomObjectsApi (Cluster API's
 * objects are custom resources): the pool behind a scale set, its image write, its machines, and the
 * canary pool's objects. The connection (TLS, token, deadline, error mapping) is the workload cluster's
 * (shared/adapters/kubernetes/client-node-connection.ts). MachinePools are read and written at the
 * version discovery prefers, once per connection: v1beta2 where served, else v1beta1
 * (machine-pool-version.ts, docs/capz.md).
 */
import {
  ApiException,
  ApisApi,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

import type { MachinePoolMachine, MachinePoolView } from '../../domain/cluster-api.js';
import { AZURE_MACHINE_POOL_LABEL, CANARY_OF_LABEL } from '../../domain/cluster-api-labels.js';
import {
  ignoreNotFound,
  isNotFound,
  NotFoundError,
  TerminalError,
  TransientError,
} from '../../domain/errors.js';
import type { CanaryPoolSpec, MachinePoolsPort } from '../../ports/cluster-api/machine-pools.js';
import { type KubeConnection, PAGE_SIZE } from '../kubernetes/client-node-connection.js';
import { type KubeCallContext, parseStatusBody } from '../kubernetes/errors.js';
import { canaryAzureMachinePool, canaryKubeadmConfig, canaryMachinePool } from './canary-objects.js';
import { CLUSTER_API_GROUP, type MachinePoolVersion, machinePoolVersionOf } from './machine-pool-version.js';
import { AzureMachinePool, KubeadmConfig, MachinePool, ObjectList, ObjectMeta } from './schema.js';
import { parseObject, toMachinePoolMachine, toMachinePoolView } from './to-domain.js';

/** One Cluster API resource: where its objects live in the API. */
export interface ClusterApiResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

/** MachinePools at one version of cluster.x-k8s.io. */
export interface MachinePoolResource extends ClusterApiResource {
  readonly version: MachinePoolVersion;
}

export function machinePoolsAt(version: MachinePoolVersion): MachinePoolResource {
  return { group: CLUSTER_API_GROUP, version, plural: 'machinepools', kind: 'MachinePool' };
}
export const AZURE_MACHINE_POOLS: ClusterApiResource = {
  group: 'infrastructure.cluster.x-k8s.io',
  version: 'v1beta1',
  plural: 'azuremachinepools',
  kind: 'AzureMachinePool',
};
export const AZURE_MACHINE_POOL_MACHINES: ClusterApiResource = {
  group: 'infrastructure.cluster.x-k8s.io',
  version: 'v1beta1',
  plural: 'azuremachinepoolmachines',
  kind: 'AzureMachinePoolMachine',
};
export const KUBEADM_CONFIGS: ClusterApiResource = {
  group: 'bootstrap.cluster.x-k8s.io',
  version: 'v1beta1',
  plural: 'kubeadmconfigs',
  kind: 'KubeadmConfig',
};

/** A canary is deleted MachinePool first: Cluster API then stops reconciling the others. */
function canaryResources(machinePools: ClusterApiResource): readonly ClusterApiResource[] {
  return [machinePools, AZURE_MACHINE_POOLS, KUBEADM_CONFIGS];
}

function context(
  verb: string,
  resource: ClusterApiResource,
  namespace: string,
  name?: string,
): KubeCallContext {
  const what =
    name === undefined
      ? `${resource.plural} in namespace ${namespace}`
      : `${resource.kind} ${namespace}/${name}`;
  return { action: `${verb} ${what}`, kind: resource.kind };
}

/**
 * Whether a JSON patch failed its `test` operation (the API server answers 422 Invalid, "testing value
 * /metadata/resourceVersion failed"): the object changed since it was read.
 */
function isFailedTest(error: unknown): boolean {
  if (!(error instanceof ApiException) || (error.code !== 422 && error.code !== 400)) return false;
  const status = parseStatusBody(error.body);
  const texts = [status?.message, ...(status?.details?.causes ?? []).map((cause) => cause.message)];
  return texts.some((value) => value !== undefined && /test(ing value)?\b.*failed/i.test(value));
}

function selectorOf(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

export class ClientNodeMachinePools implements MachinePoolsPort {
  readonly #connection: KubeConnection;
  readonly #api: CustomObjectsApi;
  readonly #apis: ApisApi;
  /** The MachinePools' version, discovered on first use; a failed discovery is tried again. */
  #machinePools: Promise<MachinePoolResource> | undefined;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#api = new CustomObjectsApi(connection.configuration);
    this.#apis = new ApisApi(connection.configuration);
  }

  /** MachinePools at the version discovery prefers (`GET /apis`, once per connection). */
  machinePools(): Promise<MachinePoolResource> {
    this.#machinePools ??= this.#connection
      .call({ action: 'discovering the API groups', kind: 'APIGroupList' }, () => this.#apis.getAPIVersions())
      .then((groups) => machinePoolsAt(machinePoolVersionOf(groups)))
      .catch((error: unknown) => {
        this.#machinePools = undefined;
        throw error;
      });
    return this.#machinePools;
  }

  async findByScaleSet(namespace: string, scaleSetName: string): Promise<MachinePoolView> {
    const azureMachinePool = parseObject(
      AzureMachinePool,
      await this.#get(AZURE_MACHINE_POOLS, namespace, scaleSetName),
      `AzureMachinePool ${namespace}/${scaleSetName}`,
    );
    // Cluster API sets the owner reference on its first reconcile; before that the names are the same by
    // the convention of every CAPZ template (the MachinePool's infrastructureRef says so).
    const owner = (azureMachinePool.metadata.ownerReferences ?? []).find(
      (reference) =>
        reference.kind === 'MachinePool' && (reference.apiVersion ?? '').startsWith(`${CLUSTER_API_GROUP}/`),
    );
    const ownerName = owner?.name ?? scaleSetName;
    let machinePool: MachinePool;
    try {
      machinePool = parseObject(
        MachinePool,
        await this.#get(await this.machinePools(), namespace, ownerName),
        `MachinePool ${namespace}/${ownerName}`,
      );
    } catch (error) {
      if (!isNotFound(error) || owner !== undefined) throw error;
      throw new NotFoundError(
        'MachinePoolNotFound',
        `finding the MachinePool of AzureMachinePool ${namespace}/${scaleSetName}: it has no owner yet and no MachinePool has its name — wait for Cluster API to reconcile it`,
        { cause: error },
      );
    }
    if (machinePool.spec.template.spec.infrastructureRef.name !== scaleSetName) {
      throw new NotFoundError(
        'MachinePoolNotFound',
        `finding the MachinePool of AzureMachinePool ${namespace}/${scaleSetName}: MachinePool ${ownerName} points at ` +
          `${machinePool.spec.template.spec.infrastructureRef.name ?? 'no AzureMachinePool'}`,
      );
    }
    return toMachinePoolView(namespace, machinePool, azureMachinePool);
  }

  async setTemplateImage(
    namespace: string,
    azureMachinePool: string,
    image: Readonly<Record<string, unknown>>,
    resourceVersion: string,
  ): Promise<'set' | 'conflict'> {
    // A JSON patch replaces the whole image (a merge patch would merge computeGallery into an old `id`);
    // its `test` makes the write conditional on the version read, and the API server checks the same
    // resourceVersion again when it stores the object (409 if someone wrote in between).
    const body = [
      { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion },
      { op: 'add', path: '/spec/template/image', value: structuredClone(image) },
    ];
    try {
      return await this.#connection.call(
        context('setting the template image of', AZURE_MACHINE_POOLS, namespace, azureMachinePool),
        async () => {
          try {
            await this.#api.patchNamespacedCustomObject(
              { ...coordinates(AZURE_MACHINE_POOLS, namespace), name: azureMachinePool, body },
              setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
            );
            return 'set' as const;
          } catch (error) {
            if (isFailedTest(error)) return 'conflict' as const;
            throw error;
          }
        },
      );
    } catch (error) {
      if (error instanceof TransientError && error.code === 'KubeConflict') return 'conflict';
      throw error;
    }
  }

  async listMachines(namespace: string, azureMachinePool: string): Promise<MachinePoolMachine[]> {
    const items = await this.#list(AZURE_MACHINE_POOL_MACHINES, namespace, {
      [AZURE_MACHINE_POOL_LABEL]: azureMachinePool,
    });
    return items.map(toMachinePoolMachine);
  }

  async createCanaryPool(spec: CanaryPoolSpec): Promise<void> {
    const { namespace } = spec;
    const machinePools = await this.machinePools();
    const machinePool = parseObject(
      MachinePool,
      await this.#get(machinePools, namespace, spec.source.machinePool),
      `MachinePool ${namespace}/${spec.source.machinePool}`,
    );
    const azureMachinePool = parseObject(
      AzureMachinePool,
      await this.#get(AZURE_MACHINE_POOLS, namespace, spec.source.azureMachinePool),
      `AzureMachinePool ${namespace}/${spec.source.azureMachinePool}`,
    );
    const configRef = machinePool.spec.template.spec.bootstrap.configRef;
    if (configRef?.name === undefined || (configRef.kind ?? 'KubeadmConfig') !== 'KubeadmConfig') {
      throw new TerminalError(
        'CanaryBootstrapUnsupported',
        `creating canary pool ${spec.name}: MachinePool ${namespace}/${spec.source.machinePool} is bootstrapped ` +
          `${configRef?.kind === undefined ? 'from a data secret' : `by a ${configRef.kind}`}; only KubeadmConfig can be cloned`,
      );
    }
    const kubeadmConfig = parseObject(
      KubeadmConfig,
      await this.#get(KUBEADM_CONFIGS, namespace, configRef.name),
      `KubeadmConfig ${namespace}/${configRef.name}`,
    );
    const clusterName = machinePool.spec.clusterName;
    // The references first, the MachinePool last: Cluster API finds both when it first reconciles it.
    await this.#create(KUBEADM_CONFIGS, spec, canaryKubeadmConfig(spec, clusterName, kubeadmConfig));
    await this.#create(
      AZURE_MACHINE_POOLS,
      spec,
      canaryAzureMachinePool(spec, clusterName, azureMachinePool),
    );
    await this.#create(machinePools, spec, canaryMachinePool(spec, machinePool, machinePools.version));
  }

  async deleteCanaryPool(namespace: string, name: string): Promise<void> {
    // Every object is checked before any is deleted: a name that is not a canary's deletes nothing.
    const present: { resource: ClusterApiResource; metadata: ObjectMeta }[] = [];
    for (const resource of canaryResources(await this.machinePools())) {
      const metadata = await this.#metadataOf(resource, namespace, name);
      if (metadata === undefined) continue;
      if (metadata.labels?.[CANARY_OF_LABEL] === undefined) {
        throw new TerminalError(
          'NotACanaryPool',
          `deleting canary pool ${namespace}/${name}: ${resource.kind} ${name} has no ${CANARY_OF_LABEL} label, so it is ` +
            'not a canary the product created; nothing was deleted — check the name',
        );
      }
      present.push({ resource, metadata });
    }
    for (const { resource, metadata } of present) {
      try {
        await this.#connection.call(context('deleting', resource, namespace, name), () =>
          this.#api.deleteNamespacedCustomObject({
            ...coordinates(resource, namespace),
            name,
            // Only the object just checked: one re-created under the name since is left alone.
            ...(metadata.uid === undefined ? {} : { body: { preconditions: { uid: metadata.uid } } }),
          }),
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  async listCanaryPools(namespace: string, labels: Readonly<Record<string, string>>): Promise<string[]> {
    const items = await this.#list(await this.machinePools(), namespace, labels);
    return items
      .map((item) => parseObject(ObjectMeta, (item as { metadata?: unknown }).metadata, 'a MachinePool'))
      .filter((metadata) => metadata.labels?.[CANARY_OF_LABEL] !== undefined)
      .map((metadata) => metadata.name)
      .sort();
  }

  /** The object's metadata; undefined when it does not exist. */
  async #metadataOf(
    resource: ClusterApiResource,
    namespace: string,
    name: string,
  ): Promise<ObjectMeta | undefined> {
    const object = (await this.#get(resource, namespace, name).catch(ignoreNotFound)) as
      { metadata?: unknown } | undefined;
    if (object === undefined) return undefined;
    return parseObject(ObjectMeta, object.metadata, `${resource.kind} ${namespace}/${name}`);
  }

  async #get(resource: ClusterApiResource, namespace: string, name: string): Promise<unknown> {
    return this.#connection.call(context('reading', resource, namespace, name), () =>
      this.#api.getNamespacedCustomObject({ ...coordinates(resource, namespace), name }),
    );
  }

  async #create(resource: ClusterApiResource, spec: CanaryPoolSpec, body: object): Promise<void> {
    try {
      await this.#connection.call(context('creating', resource, spec.namespace, spec.name), () =>
        this.#api.createNamespacedCustomObject({ ...coordinates(resource, spec.namespace), body }),
      );
    } catch (error) {
      // A retried activity finds what its first attempt created.
      if (error instanceof TerminalError && error.code === 'KubeAlreadyExists') return;
      throw error;
    }
  }

  async #list(
    resource: ClusterApiResource,
    namespace: string,
    labels: Readonly<Record<string, string>>,
  ): Promise<unknown[]> {
    const labelSelector = selectorOf(labels);
    return this.#connection.paged(context('listing', resource, namespace), async (page) => {
      const answer = parseObject(
        ObjectList,
        await this.#api.listNamespacedCustomObject({
          ...coordinates(resource, namespace),
          ...(labelSelector === '' ? {} : { labelSelector }),
          limit: PAGE_SIZE,
          ...page,
        }),
        `the ${resource.plural} of namespace ${namespace}`,
      );
      // Custom objects come back as plain JSON: the token is `continue`, not client-node's `_continue`.
      const token = answer.metadata?.continue ?? undefined;
      return { items: answer.items ?? [], metadata: token === undefined ? {} : { _continue: token } };
    });
  }
}

function coordinates(
  resource: ClusterApiResource,
  namespace: string,
): { group: string; version: string; namespace: string; plural: string } {
  return { group: resource.group, version: resource.version, namespace, plural: resource.plural };
}
