/**
 * What a pool's runs hold or left behind, read from the cluster and Azure only (never from a runner's
 * local files): the pool's lease, the nodes carrying our marker with their VMs' power state, the VMs
 * recorded as stopped by a run on the scale set or, for a CAPZ pool, on the lease (found even when their
 * Node object is gone), our prep pods,
 * snapshots and image versions, and the image the model points at. The reaper decides on it
 * (domain/reaper.ts); `status` and `release --dry-run` show it.
 */
import { parseCanaryRecord } from '../domain/canary-record.js';
import { CANARY_SCALE_SET_TAGS, isCanaryScaleSetOf } from '../domain/canary-scale-set.js';
import { CANARY_OF_LABEL } from '../domain/cluster-api-labels.js';
import { CAPTURE_RUN_ANNOTATION, type ClusterNode } from '../domain/cluster-node.js';
import type { ImageDefinitionRef, ImageVersion, ManagedDisk, Snapshot } from '../domain/compute.js';
import { ignoreNotFound, isNotFound } from '../domain/errors.js';
import { IMAGE_VERSION_TAG_KEYS, parseImageVersionTags } from '../domain/image-version.js';
import {
  COPY_DISK_PURPOSE_TAG,
  LIVE_POD_COMPONENT_LABEL,
  LIVE_POD_GRACE_SECONDS,
} from '../domain/live-leftovers.js';
import { definedOnly } from '../domain/optional.js';
import type { PoolLease } from '../domain/ownership.js';
import {
  decodePriorState,
  LEASE_ANNOTATIONS,
  LEASE_LABEL,
  leaseNameFor,
  PREP_POD_APP_LABEL,
  PRIOR_STATE_ANNOTATION,
  REJECTED_TAG_KEYS,
  RUN_LABEL,
  SNAPSHOT_TAG_KEYS,
} from '../domain/ownership.js';
import type { HeldNode, PoolHoldings, VersionHolding } from '../domain/reaper.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { scaleSetResourceId } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';
import { parseLeaseStopRecords, parseStopRecords } from '../domain/stop-record.js';
import type { PodSummary } from '../ports/kubernetes/pods.js';
import { instanceOfNode } from './image-facts.js';
import { keptNodes, suggestedPoolLabel } from './node-scan.js';
import type { LeaseRef } from './pool-lease.js';
import { findPool, findPoolModelInGroup } from './pool-lookup.js';
import type { ClusterHandle, ConfiguredPool } from './refresh-dependencies.js';

/** Where a pool's runs live: its scale set, its lease, its prep namespace and its image definition. */
export interface PoolScope {
  readonly cluster: string;
  readonly pool: string;
  readonly scaleSet: ScaleSetRef;
  readonly lease: LeaseRef;
  readonly definition: ImageDefinitionRef;
}

export interface PoolHoldingsView {
  readonly scope: PoolScope;
  readonly lease?: PoolLease;
  readonly holdings: PoolHoldings;
  /**
   * The canary recorded on the scale set's tags, if any: the run that made it, or `damaged`.
   * Read with the rest, so that a run whose pool has no canary of a dead run reads the model once.
   */
  readonly canaryRecord?: { readonly run: string } | 'damaged';
  /** ARM said the image definition does not exist (its versions could not be listed): the first refresh. */
  readonly definitionAbsent?: true;
  /**
   * A CAPZ pool's canary pools in its management cluster (capz-canary.phase.ts), any run's: a dead run's
   * is given back like its canary record. Absent for a cluster without `capz`.
   */
  readonly capzCanaryPools?: { readonly namespace: string; readonly names: readonly string[] };
  /**
   * Canary scale sets made from the pool's model (canary-scale-set.phase.ts), any run's, found by their
   * tags in the pool's resource group: a dead run's is given back like its canary record.
   */
  readonly canaryScaleSets?: readonly CanaryScaleSetHolding[];
  /** The scale set's tags, etag and image as read: the run's stop record is written from them, unread. */
  readonly scaleSetTags?: {
    readonly tags: Readonly<Record<string, string>>;
    readonly etag: string;
    readonly image?: Readonly<Record<string, string>>;
  };
}

/** A canary scale set of the pool: its name and the run that made it. */
export interface CanaryScaleSetHolding {
  readonly name: string;
  readonly run: string;
}

/** The canary scale sets among a resource group's scale sets whose source is `pool` (its scale set's name). */
export function canaryScaleSetsOf(
  scaleSets: readonly ScaleSet[],
  pool: ScaleSetRef,
): CanaryScaleSetHolding[] {
  return scaleSets.flatMap((scaleSet) => {
    const source = tagOf(scaleSet.tags, CANARY_SCALE_SET_TAGS.source);
    const run = tagOf(scaleSet.tags, CANARY_SCALE_SET_TAGS.run);
    if (
      !isCanaryScaleSetOf(scaleSet.tags) ||
      run === undefined ||
      source?.toLowerCase() !== pool.name.toLowerCase()
    )
      return [];
    return [{ name: scaleSet.name, run }];
  });
}

/** The canary pools of the pool's MachinePool, when the cluster has a management cluster and the pool is CAPZ's. */
async function capzCanaryPoolsOf(
  handle: ClusterHandle,
  scope: PoolScope,
): Promise<PoolHoldingsView['capzCanaryPools']> {
  const namespace = handle.configuration.capz?.namespace;
  const pools = handle.clusterApi?.machinePools;
  if (namespace === undefined || pools === undefined) return undefined;
  // Not a CAPZ pool (or not one in this namespace): no canary pool of it can exist.
  const source = await pools.findByScaleSet(namespace, scope.scaleSet.name).catch(ignoreNotFound);
  if (source === undefined) return undefined;
  return { namespace, names: await pools.listCanaryPools(namespace, { [CANARY_OF_LABEL]: source.name }) };
}

/**
 * The listings that several pools' holdings share: a resource group's snapshots and disks, a namespace's
 * prep pods. Reading many pools at once (the reaper's survey, `status`) lists each once, not once per pool.
 */
export interface SharedListings {
  snapshots(subscriptionId: string, resourceGroup: string): Promise<Snapshot[]>;
  disks(subscriptionId: string, resourceGroup: string): Promise<ManagedDisk[]>;
  /** Every prep pod of the namespace, of any pool's lease. */
  prepPods(namespace: string): Promise<PodSummary[]>;
  /** A resource group's scale sets (to find canary scale sets by their tags). */
  scaleSets(subscriptionId: string, resourceGroup: string): Promise<ScaleSet[]>;
  /**
   * The pool's definition's versions as the caller listed them moments ago (`absent`: no definition):
   * not listed again. Absent: listed.
   */
  readonly definitionVersions?: readonly ImageVersion[] | 'absent';
}

/** Listings read on first use and shared after (a failed one fails every pool that asks for it). */
export function sharedListings(handle: ClusterHandle): SharedListings {
  const { kube, compute } = handle;
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let found = memo.get(key) as Promise<T> | undefined;
    if (found === undefined) {
      found = read();
      memo.set(key, found);
    }
    return found;
  };
  // Azure compares resource groups case-insensitively.
  const group = (subscriptionId: string, resourceGroup: string): string =>
    `${subscriptionId}/${resourceGroup}`.toLowerCase();
  return {
    snapshots: (subscriptionId, resourceGroup) =>
      once(`snapshots ${group(subscriptionId, resourceGroup)}`, () =>
        compute.snapshots.list(subscriptionId, resourceGroup),
      ),
    disks: (subscriptionId, resourceGroup) =>
      once(`disks ${group(subscriptionId, resourceGroup)}`, () =>
        compute.disks.list(subscriptionId, resourceGroup),
      ),
    scaleSets: (subscriptionId, resourceGroup) =>
      once(`scale sets ${group(subscriptionId, resourceGroup)}`, () =>
        compute.scaleSets.list(subscriptionId, resourceGroup),
      ),
    prepPods: (namespace) =>
      once(`pods ${namespace}`, () =>
        kube.pods.list(namespace, { [PREP_POD_APP_LABEL.key]: PREP_POD_APP_LABEL.value }),
      ),
  };
}

/** The pool's own listings, read for it alone. */
function ownListings(handle: ClusterHandle, lease: string): SharedListings {
  const { kube, compute } = handle;
  return {
    snapshots: (subscriptionId, resourceGroup) => compute.snapshots.list(subscriptionId, resourceGroup),
    disks: (subscriptionId, resourceGroup) => compute.disks.list(subscriptionId, resourceGroup),
    scaleSets: (subscriptionId, resourceGroup) => compute.scaleSets.list(subscriptionId, resourceGroup),
    prepPods: (namespace) =>
      kube.pods.list(namespace, { [PREP_POD_APP_LABEL.key]: PREP_POD_APP_LABEL.value, [LEASE_LABEL]: lease }),
  };
}

/** The lease of a scale set, in the product's namespace (the prep pod's, `capture.prepNamespace`). */
export function leaseRefOf(scaleSet: ScaleSetRef, namespace: string): LeaseRef {
  return { namespace, name: leaseNameFor(scaleSetResourceId(scaleSet)) };
}

export async function poolScope(handle: ClusterHandle, poolName: string): Promise<PoolScope> {
  return scopeOfPool(handle, await findPool(handle, poolName));
}

/**
 * The pool's scope, its scale set's model and the listings to read its holdings with, the model read once
 * (findPoolModelInGroup: from the listing of its resource group's scale sets, which the holdings then
 * reuse to find canary scale sets, instead of a read of the model and a listing beside it).
 */
export async function poolScopeAndModel(
  handle: ClusterHandle,
  poolName: string,
): Promise<{ readonly scope: PoolScope; readonly model: ScaleSet; readonly listings: SharedListings }> {
  const { pool, model, groupScaleSets } = await findPoolModelInGroup(handle, poolName);
  const scope = scopeOfPool(handle, pool);
  const own = ownListings(handle, scope.lease.name);
  const group = `${pool.scaleSet.subscriptionId}/${pool.scaleSet.resourceGroup}`.toLowerCase();
  const listings: SharedListings =
    groupScaleSets === undefined
      ? own
      : {
          ...own,
          // Azure compares resource groups case-insensitively; another group is listed as before.
          scaleSets: (subscriptionId, resourceGroup) =>
            `${subscriptionId}/${resourceGroup}`.toLowerCase() === group
              ? Promise.resolve([...groupScaleSets])
              : own.scaleSets(subscriptionId, resourceGroup),
        };
  return { scope, model, listings };
}

/** The scope of a pool the caller has found already (findPoolModel). */
export function scopeOfPool(handle: ClusterHandle, pool: ConfiguredPool): PoolScope {
  const configuration = handle.configuration.poolConfiguration(pool);
  const g = configuration.gallery;
  return {
    cluster: handle.configuration.name,
    pool: pool.name,
    scaleSet: pool.scaleSet,
    lease: leaseRefOf(pool.scaleSet, configuration.run.prepNamespace),
    definition: {
      subscriptionId: g.subscriptionId,
      resourceGroup: g.resourceGroup,
      galleryName: g.galleryName,
      imageName: g.imageDefinitionName,
    },
  };
}

/**
 * `model`: the scale set's model when the caller has just read it (poolScopeAndModel); else it is read.
 * `poolLabels`: the pool's label (node-scan.ts poolLabelOf) when the caller has read it: the marked nodes
 * are then looked for among the nodes carrying it (one selected list, a page or two) instead of every
 * node of the cluster. Only the pool's own nodes count as held (by providerID) either way; a node of the
 * pool that lost the label would be missed, as poolMemberNodes trusts the label when members carry it.
 * `marked`: those nodes as the caller has just read them (status lists the pool's nodes once for its
 * members and these, poolMembersAndKept); they are then not looked for again.
 * `listings`: the listings the caller shares between pools (sharedListings); else the pool's own.
 */
export async function readPoolHoldings(
  handle: ClusterHandle,
  scope: PoolScope,
  model?: ScaleSet,
  poolLabels?: Readonly<Record<string, string>>,
  marked?: readonly ClusterNode[],
  listings: SharedListings = ownListings(handle, scope.lease.name),
): Promise<PoolHoldingsView> {
  const { kube, compute } = handle;
  let definitionAbsent = false;
  const listVersions = async (): Promise<ImageVersion[]> => {
    const known = listings.definitionVersions;
    if (known === 'absent') {
      definitionAbsent = true;
      return [];
    }
    if (known !== undefined) return [...known];
    return compute.imageVersions.list(scope.definition).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
      definitionAbsent = true;
      return [];
    });
  };
  const [lease, nodes, prepPods, snapshots, disks, versions, scaleSet, groupScaleSets] = await Promise.all([
    kube.leases.get(scope.lease.namespace, scope.lease.name),
    // Only the nodes carrying a run's marker matter here: kept page by page, never the whole list.
    marked ?? markedNodes(kube, scope.scaleSet, model, poolLabels),
    listings
      .prepPods(scope.lease.namespace)
      .then((pods) => pods.filter((pod) => pod.labels[LEASE_LABEL] === scope.lease.name)),
    listings.snapshots(scope.scaleSet.subscriptionId, scope.scaleSet.resourceGroup),
    // Live capture makes its copy disk in the scale set's resource group, tagged like its snapshot.
    listings.disks(scope.scaleSet.subscriptionId, scope.scaleSet.resourceGroup),
    listVersions(),
    model ?? compute.scaleSets.get(scope.scaleSet),
    // Canary scale sets are made beside the pool's, in its resource group.
    listings.scaleSets(scope.scaleSet.subscriptionId, scope.scaleSet.resourceGroup),
  ]);
  const canaryScaleSets = canaryScaleSetsOf(groupScaleSets, scope.scaleSet);
  const capzCanaryPools = await capzCanaryPoolsOf(handle, scope);

  const held: HeldNode[] = [];
  for (const node of nodes) {
    const runId = node.annotations[CAPTURE_RUN_ANNOTATION];
    if (runId === undefined) continue;
    const instanceId = instanceOfNode(node.providerId, scope.scaleSet);
    // A node of another pool, or one whose providerID names no VM of ours: not this pool's to give back.
    if (instanceId === undefined) continue;
    const prior = decodePriorState(node.annotations[PRIOR_STATE_ANNOTATION]);
    held.push({
      name: node.name,
      runId,
      ...definedOnly({ prior }),
      unschedulable: node.unschedulable,
      instance: await instanceOf(handle, scope.scaleSet, instanceId),
    });
  }

  // The VMs a run recorded as stopped (on the scale set's tags, a CAPZ pool's on the lease): found with
  // or without their node.
  const records = [
    ...parseStopRecords(scaleSet.tags),
    ...parseLeaseStopRecords(lease?.annotations[LEASE_ANNOTATIONS.stoppedVms]).map((record) => ({
      ...record,
      place: 'pool-lease' as const,
    })),
  ];
  const stoppedVms = await Promise.all(
    records.map(async (record) => ({
      ...record,
      instance: await instanceOf(handle, scope.scaleSet, record.instanceId),
    })),
  );

  const reference = scaleSet.imageReference;
  const canary = parseCanaryRecord(scaleSet.tags);
  return {
    scope,
    ...definedOnly({ lease }),
    ...(definitionAbsent ? { definitionAbsent } : {}),
    ...definedOnly({ capzCanaryPools }),
    ...(canaryScaleSets.length === 0 ? {} : { canaryScaleSets }),
    ...(scaleSet.etag === undefined
      ? {}
      : {
          scaleSetTags: {
            tags: scaleSet.tags,
            etag: scaleSet.etag,
            ...definedOnly({ image: scaleSet.imageReferenceFields }),
          },
        }),
    ...(canary.kind === 'none'
      ? {}
      : { canaryRecord: canary.kind === 'damaged' ? 'damaged' : { run: canary.record.run } }),
    holdings: {
      nodes: held,
      ...(stoppedVms.length === 0 ? {} : { stoppedVms }),
      prepPods: prepPods.map((pod) => {
        const runId = pod.labels[RUN_LABEL];
        const component = pod.labels[LIVE_POD_COMPONENT_LABEL];
        return {
          namespace: pod.namespace,
          name: pod.name,
          phase: pod.phase,
          ...definedOnly({ runId }),
          // Live capture's pods get TERM first: their trap thaws the filesystem or unmounts the copy.
          ...(component === 'freeze' || component === 'scrub'
            ? { gracePeriodSeconds: LIVE_POD_GRACE_SECONDS }
            : {}),
        };
      }),
      copyDisks: disks
        .filter(
          (disk) =>
            tagOf(disk.tags, COPY_DISK_PURPOSE_TAG.key) === COPY_DISK_PURPOSE_TAG.value &&
            tagOf(disk.tags, SNAPSHOT_TAG_KEYS.lease) === scope.lease.name,
        )
        .map((disk) => {
          const runId = tagOf(disk.tags, SNAPSHOT_TAG_KEYS.runId);
          return {
            id: disk.id,
            name: disk.name,
            provisioningState: disk.provisioningState,
            ...definedOnly({ runId, attachedTo: disk.managedBy }),
          };
        }),
      snapshots: snapshots
        .filter((snapshot) => tagOf(snapshot.tags, SNAPSHOT_TAG_KEYS.lease) === scope.lease.name)
        .map((snapshot) => {
          const runId = tagOf(snapshot.tags, SNAPSHOT_TAG_KEYS.runId);
          return {
            subscriptionId: scope.scaleSet.subscriptionId,
            resourceGroup: snapshot.resourceGroup,
            name: snapshot.name,
            provisioningState: snapshot.provisioningState,
            ...definedOnly({ runId }),
          };
        }),
      versions: versions.map((version): VersionHolding => {
        const parsed = parseImageVersionTags(version.tags);
        // A damaged tag set still names its run when that tag survived.
        const runId =
          parsed.kind === 'ours'
            ? parsed.provenance.runId
            : parsed.kind === 'damaged'
              ? tagOf(version.tags, IMAGE_VERSION_TAG_KEYS.runId)
              : undefined;
        return {
          versionName: version.ref.versionName,
          ...(runId === undefined || runId === '' ? {} : { runId }),
          provisioningState: version.provisioningState,
          excludeFromLatest: version.excludeFromLatest,
          rejected: REJECTED_TAG_KEYS.some((key) => tagOf(version.tags, key) !== undefined),
        };
      }),
      ...(reference !== undefined && reference.kind !== 'marketplace' ? { modelImageId: reference.id } : {}),
    },
  };
}

/**
 * The nodes carrying a run's marker, looked for among the pool's nodes by its label when it is known: the
 * label a member carries (`poolLabels`), else the one the model's tags suggest (suggestedPoolLabel),
 * trusted only when it selects a member of the pool. Otherwise every node is scanned (one listing of
 * the cluster, page by page).
 */
async function markedNodes(
  kube: ClusterHandle['kube'],
  scaleSet: ScaleSetRef,
  model: ScaleSet | undefined,
  poolLabels: Readonly<Record<string, string>> | undefined,
): Promise<ClusterNode[]> {
  const labels = poolLabels ?? (model === undefined ? undefined : suggestedPoolLabel(model.tags));
  if (labels !== undefined) {
    let member = poolLabels !== undefined;
    const found = await keptNodes(
      kube,
      (node) => {
        if (!member && instanceOfNode(node.providerId, scaleSet) !== undefined) member = true;
        return markedByRun(node);
      },
      { labels },
    );
    if (member) return found;
  }
  return keptNodes(kube, markedByRun);
}

/** A node a run marked (CAPTURE_RUN_ANNOTATION): held, or left behind by a run. */
export function markedByRun(node: ClusterNode): boolean {
  return node.annotations[CAPTURE_RUN_ANNOTATION] !== undefined;
}

async function instanceOf(
  handle: ClusterHandle,
  scaleSet: ScaleSetRef,
  instanceId: string,
): Promise<HeldNode['instance']> {
  try {
    const instance = await handle.compute.instances.get(scaleSet, instanceId);
    return { kind: 'present', instanceId, powerState: instance.powerState };
  } catch (error) {
    if (isNotFound(error)) return { kind: 'gone' };
    throw error;
  }
}

/** Azure treats tag names case-insensitively. */
function tagOf(tags: Readonly<Record<string, string>>, key: string): string | undefined {
  const wanted = key.toLowerCase();
  for (const [name, value] of Object.entries(tags)) if (name.toLowerCase() === wanted) return value;
  return undefined;
}
