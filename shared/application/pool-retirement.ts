/**
 * Planning a pool's retirement (docs/retirement.md): read the pool's nodes with their
 * generations, the definition's versions, the scale set's capacity, the open window and what it already
 * retired (the pool lease's lasting record), then ask the domain (planRetirement) which nodes go now.
 * Every node of the pool gets a line: what happens to it and why. Reads only; the orchestration acts.
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import type { ImageVersion, ScaleSetInstance } from '../domain/compute.js';
import { isBeingDeleted } from '../domain/compute.js';
import { IMAGE_VERSION_LABEL, instanceGeneration, UNKNOWN_GENERATION } from '../domain/generations.js';
import { compareImageVersions } from '../domain/image-version.js';
import { definedOnly } from '../domain/optional.js';
import { LEASE_ANNOTATIONS } from '../domain/ownership.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { galleryImageResourceId, sameResourceId } from '../domain/resource-id.js';
import { retiredInWindow } from '../domain/retired-in-window.js';
import type { RetirementDecision, RetirementNode, RetirementPolicy } from '../domain/retirement.js';
import { budgetNodes, planRetirement } from '../domain/retirement.js';
import { findCapzCluster } from '../domain/scale-set.js';
import { nextWindowAt, openWindowAt } from '../domain/schedule-window.js';
import { versionVerdictOf } from '../domain/version-verdict.js';
import { instanceOfNode, newestUsableVersion } from './image-facts.js';
import { poolMemberNodes } from './node-scan.js';
import { leaseRefOf } from './pool-holdings.js';
import type { LeaseRef } from './pool-lease.js';
import { findPoolModel, listPoolsOfCluster } from './pool-lookup.js';
import { policyAwareHandle, policyAwareHandleFor, policyRefusalOf } from './pool-policies.js';
import type { ClusterHandle } from './refresh-dependencies.js';
import { listDefinitionVersions } from './rejected-builds.js';
import type { RetirementNodeLine } from './retirement-contracts.js';

/** What retirement reads of the pool's model: handed over by a caller that has just read it. */
export interface RetirementModelFacts {
  readonly scaleSet: ScaleSetRef;
  readonly capacity?: number;
  readonly tags: Readonly<Record<string, string>>;
}

/** What a retirement run needs to act on one node. */
export interface PlannedRetiree {
  readonly node: string;
  readonly instanceId: string;
  readonly generation: string;
  readonly why: string;
  /**
   * False for an instance no node registered for (one an outside scale-out built from a rejected version,
   * as broken as its canary): `node` is its computer name, and it goes without a drain once its replacement
   * is Ready, unless a node registered for it meanwhile (then it is drained like any).
   */
  readonly joined?: false;
}

export interface PoolRetirementPlan {
  /** Set when nothing may be done: why, and what to do about it. */
  readonly refused?: string;
  readonly scaleSet: ScaleSetRef;
  readonly lease: LeaseRef;
  readonly capacity: number;
  readonly newest?: string;
  readonly decision: RetirementDecision['kind'];
  readonly closedReason?: string;
  /** Retire now, in this order. */
  readonly retire: readonly PlannedRetiree[];
  /**
   * Due nodes past the budget, in order: taken in turn when a planned node is given back (its drain
   * refused), since a node given back uses none of the budget.
   */
  readonly next: readonly PlannedRetiree[];
  /** Every node of the pool, in the order retirement takes them. */
  readonly lines: readonly RetirementNodeLine[];
  readonly budget: { readonly allowed: number; readonly usedInWindow: number };
  readonly window?: { readonly openedAt: string; readonly closesAt: string };
  readonly nextWindowAt?: string;
  readonly surge: boolean;
  readonly drainTimeoutSeconds: number;
  readonly drainGracePeriodSeconds: number;
  readonly deleteEmptyDirData: boolean;
  /** Instance ids of the scale set when planned: a surge's new instance is the one not among them. */
  readonly instanceIds: readonly string[];
  /**
   * A refresh's keep-size plan (inPlaceOfCanaries): the definition's versions as listed for it, which the
   * refresh's pruning takes instead of listing them again moments later.
   */
  readonly versions?: readonly ImageVersion[];
}

/**
 * The cluster-autoscaler's Azure auto-discovery tag (its README's
 * `--node-group-auto-discovery=label:cluster-autoscaler-enabled=true,…`, kubernetes/autoscaler
 * cluster-autoscaler/cloudprovider/azure/README.md): a scale set carrying it is sized by the autoscaler.
 */
export const AUTOSCALER_DISCOVERY_TAG = 'cluster-autoscaler-enabled';

/**
 * Plans the pool's retirement at `now`: the pool's policy (scheduled), or every node of `generation`
 * (on demand: no windows, no age or keep rule; still one node at a time and surge first).
 */
export async function planPoolRetirement(
  clusterHandle: ClusterHandle,
  poolName: string,
  options: {
    readonly generation?: string;
    /**
     * `canary.afterPass: keep-size`: this many passed canaries stay, so as many nodes of the oldest
     * generations go in their place (whatever the policy and windows; the canaries are the surge).
     */
    readonly inPlaceOfCanaries?: number;
    /** Nodes the caller keeps, with why (keep-size keeps the donor of the version it just published). */
    readonly keep?: readonly { readonly node: string; readonly why: string }[];
    /**
     * `generation` is a version whose canary just failed, and its nodes are what an outside scale-out built
     * from it meanwhile (`canary.othersAfterFail: replace`): they go even when the pool has no published
     * version of ours yet (the replacement boots the model as it is back).
     */
    readonly afterRejectedCanary?: boolean;
    /**
     * The pool's scale set and its model's capacity and tags as the caller's read just before saw them
     * (keep-size: the read that saw the model point at the new version): the model is not read again.
     */
    readonly model?: RetirementModelFacts;
  },
  now: Date,
): Promise<PoolRetirementPlan> {
  const handle = await policyAwareHandleFor(clusterHandle, poolName);
  const { pool, model: scaleSet } =
    options.model === undefined
      ? await findPoolModel(handle, poolName)
      : { pool: { name: poolName, scaleSet: options.model.scaleSet }, model: options.model };
  const configuration = handle.configuration.poolConfiguration(pool);
  const settings = configuration.run.retirement;
  const lease = leaseRefOf(pool.scaleSet, configuration.run.prepNamespace);
  const instances = await handle.compute.instances.list(pool.scaleSet);
  const capacity = scaleSet.capacity ?? instances.length;
  const base = {
    scaleSet: pool.scaleSet,
    lease,
    capacity,
    surge: settings.policy.surge,
    drainTimeoutSeconds: settings.drainTimeoutSeconds,
    drainGracePeriodSeconds: configuration.run.drainGracePeriodSeconds,
    deleteEmptyDirData: configuration.run.deleteEmptyDirData,
    instanceIds: instances.map((instance) => instance.instanceId),
  };
  const refuse = (reason: string): PoolRetirementPlan => ({
    ...base,
    refused: reason,
    decision: 'plan',
    retire: [],
    next: [],
    lines: [],
    budget: { allowed: 0, usedInWindow: 0 },
  });
  const policyRefusal = policyRefusalOf(configuration);
  if (policyRefusal !== undefined) return refuse(policyRefusal);
  const scheduled = options.generation === undefined && options.inPlaceOfCanaries === undefined;
  if (scheduled && !configuration.enabled) {
    return refuse(configuration.disabledReason ?? `pool ${pool.name} is disabled in configuration`);
  }
  // The model's tags say it (checkScaleSetEligibility's capz-managed).
  if (findCapzCluster(scaleSet.tags) !== undefined) {
    return refuse(
      `scale set ${pool.scaleSet.name} belongs to a CAPZ MachinePool: Cluster API decides which machines ` +
        'go (its MachinePool replicas and the cluster.x-k8s.io/delete-machine annotation); retirement does not ' +
        'act on CAPZ pools (docs/retirement.md)',
    );
  }
  const inPlace = options.inPlaceOfCanaries;
  if (inPlace !== undefined && scaleSet.tags[AUTOSCALER_DISCOVERY_TAG] === 'true') {
    return refuse(
      `scale set ${pool.scaleSet.name} carries ${AUTOSCALER_DISCOVERY_TAG}=true: the cluster-autoscaler sizes ` +
        'this pool, so the canary stays as a normal node (canary.afterPass keep-size, docs/retirement.md)',
    );
  }
  if (options.generation === undefined && inPlace === undefined && !settings.enabled) {
    return refuse(
      `scheduled retirement is off for pool ${pool.name}: set promotion.retirement.enabled with olderThan or ` +
        'keepGenerations (docs/retirement.md), or retire one generation with `vmss-prototype retire --generation <version>`',
    );
  }

  const definitionVersions = await listDefinitionVersions(handle, configuration);
  const versions = definitionVersions === 'absent' ? [] : definitionVersions;
  const newestVersion = newestUsableVersion(versions);
  const usable = versions
    .filter((version) => version.provisioningState === 'Succeeded')
    .filter((version) => versionVerdictOf(version.tags).kind === 'none')
    .sort((a, b) => compareImageVersions(b.ref.versionName, a.ref.versionName));
  const generations = [
    ...(newestVersion === undefined ? [] : [newestVersion]),
    ...usable.filter((version) => version !== newestVersion),
  ].map((version) => ({
    name: version.ref.versionName,
    ...definedOnly({ publishedAt: version.publishedAt }),
  }));
  const rejected = new Set(
    versions
      .filter((version) => versionVerdictOf(version.tags).kind !== 'none')
      .map((version) => version.ref.versionName),
  );
  const newest = generations[0]?.name;
  if (newest === undefined && !(options.afterRejectedCanary === true && options.generation !== undefined)) {
    return refuse(
      `pool ${pool.name} has no published version of ours yet: there is no newer generation to retire nodes for; ` +
        'refresh it first (`vmss-prototype refresh --pool ' +
        `${pool.name}\`)`,
    );
  }
  if (options.generation !== undefined && options.generation === newest) {
    return refuse(
      `${options.generation} is the generation new nodes get: retiring its nodes would replace them with the same ` +
        'image; roll the pool back first (`vmss-prototype rollback`) to retire it',
    );
  }

  const instanceOf = new Map<string, string>();
  // The node of an instance ARM is deleting is leaving already: not retired (deleted) again.
  const deleting = new Set(instances.filter(isBeingDeleted).map((instance) => instance.instanceId));
  const members = (await poolMemberNodes(handle.kube, instances)).filter((node) => {
    const instanceId = instanceOfNode(node.providerId, pool.scaleSet);
    if (instanceId === undefined || !base.instanceIds.includes(instanceId)) return false;
    if (deleting.has(instanceId)) return false;
    instanceOf.set(node.name, instanceId);
    return true;
  });
  const retirementNodes: RetirementNode[] = [];
  const g = configuration.gallery;
  const definitionId = galleryImageResourceId({ ...g, imageName: g.imageDefinitionName });
  for (const node of members) {
    const instance = instances.find((entry) => entry.instanceId === instanceOf.get(node.name));
    const generation =
      node.labels[IMAGE_VERSION_LABEL] ?? (await unlabelledGeneration(handle, instance, definitionId));
    // Pods are read only on nodes that could be due: never on the newest generation.
    const pods = generation === newest ? [] : await handle.kube.pods.listOnNode(node.name);
    retirementNodes.push({
      name: node.name,
      generation,
      createdAt: node.createdAt ?? '',
      ready: isReady(node),
      unschedulable: node.unschedulable,
      annotations: node.annotations,
      podsNotToDisrupt: pods
        .filter((pod) => pod.doNotDisrupt === true)
        .map((pod) => `${pod.namespace}/${pod.name}`),
      ...definedOnly({ keptFor: options.keep?.find((kept) => kept.node === node.name)?.why }),
    });
  }

  const onDemand = options.generation !== undefined;
  const policy: RetirementPolicy =
    inPlace !== undefined
      ? { keepGenerations: 1, budget: { nodes: inPlace }, windows: [], surge: true }
      : onDemand
        ? // On demand every node of the generation goes, one after another (each replaced before the next
          // is drained): never more than one node out at once, within any budget.
          { ...settings.policy, budget: { nodes: Math.max(1, retirementNodes.length) } }
        : settings.policy;
  const open = onDemand || inPlace !== undefined ? undefined : openWindowAt(policy.windows, now);
  const window =
    open === undefined
      ? undefined
      : {
          openedAt: new Date(open.closesAt.getTime() - open.window.durationSeconds * 1000).toISOString(),
          closesAt: open.closesAt.toISOString(),
        };
  const lasting = (await handle.kube.leases.get(lease.namespace, lease.name))?.annotations[
    LEASE_ANNOTATIONS.retiredInWindow
  ];
  const usedInWindow = window === undefined ? 0 : retiredInWindow(lasting, window.openedAt);
  const decision = planRetirement({
    policy,
    nodes: retirementNodes,
    generations,
    rejected: [...rejected],
    capacity,
    retiring: usedInWindow,
    ...definedOnly({ onlyGeneration: options.generation }),
    now,
  });
  const next = onDemand || inPlace !== undefined ? undefined : nextWindowAt(policy.windows, now);
  const budget = { allowed: budgetNodes(settings.policy.budget, capacity), usedInWindow };
  const common = {
    ...base,
    newest,
    budget,
    ...(inPlace === undefined ? {} : { versions }),
    ...definedOnly({ window, nextWindowAt: next?.toISOString() }),
  };
  if (decision.kind === 'closed') {
    return {
      ...common,
      decision: 'closed',
      closedReason: decision.reason,
      retire: [],
      next: [],
      lines: retirementNodes.map((node) => ({
        node: node.name,
        generation: node.generation,
        outcome: 'stays',
        detail: 'no retirement window is open',
      })),
    };
  }
  const withInstance = (retiree: (typeof decision.retire)[number]): PlannedRetiree => ({
    ...retiree,
    instanceId: instanceOf.get(retiree.node) ?? '',
  });
  const listed = new Set<string>();
  const lines: RetirementNodeLine[] = [];
  const add = (line: RetirementNodeLine): void => {
    listed.add(line.node);
    lines.push(line);
  };
  for (const retiree of decision.retire) {
    add({ node: retiree.node, generation: retiree.generation, outcome: 'would-retire', detail: retiree.why });
  }
  const waitingWhy = policy.surge
    ? `past this window's budget of ${budget.allowed} node(s)`
    : `surge is off: only Ready nodes above the pool's capacity (${capacity}) may go`;
  for (const retiree of decision.waiting) {
    add({
      node: retiree.node,
      generation: retiree.generation,
      outcome: 'waiting',
      detail: `${retiree.why}; waiting: ${waitingWhy}`,
    });
  }
  for (const kept of decision.kept) {
    add({
      node: kept.node,
      generation: generationOf(retirementNodes, kept.node),
      outcome: 'kept',
      detail: kept.why,
    });
  }
  for (const node of retirementNodes) {
    if (listed.has(node.name)) continue;
    add({
      node: node.name,
      generation: node.generation,
      outcome: 'stays',
      detail: node.generation === newest ? 'the newest generation' : 'not due under the policy',
    });
  }
  return {
    ...common,
    decision: 'plan',
    retire: decision.retire.map(withInstance),
    next: decision.waiting.map(withInstance),
    lines,
  };
}

function generationOf(nodes: readonly RetirementNode[], name: string): string {
  return nodes.find((node) => node.name === name)?.generation ?? UNKNOWN_GENERATION;
}

function isReady(node: ClusterNode): boolean {
  return node.conditions.some((condition) => condition.type === 'Ready' && condition.status === 'True');
}

/**
 * The pools of the cluster whose scheduled retirement may act at `now`: enabled, and inside a window (or
 * with none). Settings only, apart from listing the pools: the timer asks every quarter hour.
 */
export async function poolsDueForRetirement(clusterHandle: ClusterHandle, now: Date): Promise<string[]> {
  // A pool's PoolImagePolicy may enable, pace or pause it (docs/pool-policy.md); an invalid one starts nothing.
  const handle = await policyAwareHandle(clusterHandle);
  const pools = await listPoolsOfCluster(handle);
  return pools
    .filter((pool) => {
      const configuration = handle.configuration.poolConfiguration(pool);
      if (!configuration.enabled || policyRefusalOf(configuration) !== undefined) return false;
      const { enabled, policy } = configuration.run.retirement;
      return enabled && (policy.windows.length === 0 || openWindowAt(policy.windows, now) !== undefined);
    })
    .map((pool) => pool.name);
}

/**
 * The generation of a node the run's labelling has not reached yet (a canary that just joined, a surge
 * node): the one its instance was built from, as the labelling would find it (shared/application/
 * generations.ts). Read as `unknown`, a canary would count as the oldest generation, and keep-size would
 * retire the canary in its own place.
 */
async function unlabelledGeneration(
  handle: ClusterHandle,
  instance: ScaleSetInstance | undefined,
  definitionId: string,
): Promise<string> {
  if (instance === undefined) return UNKNOWN_GENERATION;
  const generation = instanceGeneration({
    ...definedOnly({ imageId: instance.imageId, exactVersion: instance.exactVersion }),
    definitionId,
  });
  if (generation !== UNKNOWN_GENERATION || instance.osDiskId === undefined) return generation;
  if (!sameResourceId(instance.imageId, definitionId)) return generation;
  const diskVersion = await handle.compute.disks.getImageVersionId(instance.osDiskId);
  return instanceGeneration({ ...definedOnly({ diskImageVersionId: diskVersion }), definitionId });
}
