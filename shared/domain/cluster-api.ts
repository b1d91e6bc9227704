/**
 * The domain's view of a Cluster API MachinePool backed by a CAPZ AzureMachinePool (docs/capz.md): only
 * what the product decides on. Adapters (shared/adapters/cluster-api) fill it from the management cluster's
 * `cluster.x-k8s.io/v1beta1` MachinePool and `infrastructure.cluster.x-k8s.io/v1beta1` AzureMachinePool and
 * AzureMachinePoolMachine objects.
 */
import { fnv1a32Hex } from './gallery-naming.js';
import { definedOnly } from './optional.js';

/** `AzureMachinePool.spec.strategy.rollingUpdate` (CAPZ defaults: maxSurge 1, maxUnavailable 0, Oldest). */
export interface RollingUpdateStrategy {
  /** An absolute count or a percentage of the desired replicas (`"25%"`), as written in the object. */
  readonly maxSurge: number | string;
  readonly maxUnavailable: number | string;
  readonly deletePolicy: 'Oldest' | 'Newest' | 'Random';
}

/**
 * `AzureMachinePool.spec.template.image`, interpreted. `computeGallery` and `id` may name one of our
 * versions; anything else (marketplace, shared or community gallery) is what the pool ran before us.
 */
export type CapzImage =
  | {
      readonly kind: 'compute-gallery';
      readonly gallery: string;
      readonly name: string;
      readonly version: string;
      readonly subscriptionId?: string;
      readonly resourceGroup?: string;
    }
  | { readonly kind: 'id'; readonly id: string }
  | { readonly kind: 'other'; readonly description: string };

/** One MachinePool as the product sees it: the pool object, its AzureMachinePool, and where they live. */
export interface MachinePoolView {
  readonly namespace: string;
  /** The MachinePool's name. */
  readonly name: string;
  /** The AzureMachinePool's name: CAPZ names the scale set after it. */
  readonly azureMachinePool: string;
  /** `spec.clusterName`: the Cluster API Cluster the pool belongs to. */
  readonly clusterName: string;
  /** `MachinePool.spec.replicas` (CAPI's default is 1). */
  readonly replicas: number;
  /** Whether the cluster-autoscaler's clusterapi provider owns `replicas` (its min/max size annotations). */
  readonly autoscaled: boolean;
  /** `AzureMachinePool.spec.template.image`, interpreted; undefined when the template names none (CAPZ's default image). */
  readonly image?: CapzImage;
  /** The same field exactly as the API returned it, so that a rollback puts back precisely what was there. */
  readonly imageFields?: Readonly<Record<string, unknown>>;
  /** `spec.strategy`: undefined for a type other than RollingUpdate (none is defined today). */
  readonly strategy?: RollingUpdateStrategy;
  /**
   * The MachinePool belongs to a ClusterClass topology (label `topology.cluster.x-k8s.io/owned`): Cluster
   * API's topology controller owns its templates, and would put its own image back.
   */
  readonly topologyOwned?: boolean;
  /** The AzureMachinePool's resourceVersion: a template write is conditional on it. */
  readonly resourceVersion: string;
}

/** One AzureMachinePoolMachine: a scale-set instance as CAPZ tracks it. */
export interface MachinePoolMachine {
  readonly name: string;
  /** The scale set instance id (`spec.instanceID`). */
  readonly instanceId: string;
  readonly providerId?: string;
  /** `status.nodeRef.name`: the workload cluster's node, once it joined. */
  readonly nodeName?: string;
  /** `status.ready`: the node joined and is Ready. */
  readonly ready: boolean;
  /** `status.latestModelApplied`: the instance runs the scale set's current model (the new image). */
  readonly latestModelApplied: boolean;
  /** `status.provisioningState` (`Succeeded`, `Failed`, `Deleting`…). */
  readonly provisioningState?: string;
  /** RFC 3339 `metadata.creationTimestamp`. */
  readonly createdAt: string;
  /** Set once Cluster API is deleting it (drained, then the instance deleted). */
  readonly deleting: boolean;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `spec.template.image` interpreted: a compute gallery version or an image id may be one of ours. */
export function interpretCapzImage(image: Readonly<Record<string, unknown>>): CapzImage {
  const gallery = image['computeGallery'];
  if (typeof gallery === 'object' && gallery !== null) {
    const fields = gallery as Record<string, unknown>;
    const galleryName = text(fields['gallery']);
    const name = text(fields['name']);
    const version = text(fields['version']);
    if (galleryName !== undefined && name !== undefined && version !== undefined) {
      return {
        kind: 'compute-gallery',
        gallery: galleryName,
        name,
        version,
        ...definedOnly({
          subscriptionId: text(fields['subscriptionID']),
          resourceGroup: text(fields['resourceGroup']),
        }),
      };
    }
  }
  const id = text(image['id']);
  if (id !== undefined) return { kind: 'id', id };
  return { kind: 'other', description: describeOtherImage(image) };
}

function describeOtherImage(image: Readonly<Record<string, unknown>>): string {
  for (const key of ['marketplace', 'sharedGallery', 'computeGallery']) {
    const value = image[key];
    if (typeof value !== 'object' || value === null) continue;
    const fields = value as Record<string, unknown>;
    const parts = [
      'publisher',
      'offer',
      'sku',
      'subscriptionID',
      'resourceGroup',
      'gallery',
      'name',
      'version',
    ]
      .map((field) => text(fields[field]))
      .filter((part): part is string => part !== undefined);
    return `${key} ${parts.join('/')}`.trim();
  }
  return `image with ${Object.keys(image).join(', ') || 'no fields'}`;
}

/** The canary pool's name (its scale set's too): the pool's, a marker and the run's hash (≤ 63 characters). */
export function capzCanaryNameOf(azureMachinePool: string, runId: string): string {
  const suffix = `-canary-${fnv1a32Hex(runId)}`;
  return `${azureMachinePool.slice(0, 63 - suffix.length)}${suffix}`.toLowerCase();
}

/** Whether a canary pool is the one `runId` made (its name ends with the run's hash). */
export function isCanaryPoolOfRun(name: string, runId: string): boolean {
  return name.endsWith(`-canary-${fnv1a32Hex(runId)}`);
}
