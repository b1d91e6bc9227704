/**
 * The status of one pool's image: which image new instances get, whether it is ours, who built it and
 * how old it is. Read-only; used by the status orchestration, the CLI and the HTTP API.
 */
import type { NewNodeBootstrap } from '../domain/bootstrap-flavour.js';
import { parseCanaryRecord } from '../domain/canary-record.js';
import type { ClusterNode } from '../domain/cluster-node.js';
import type { ImageVersion } from '../domain/compute.js';
import type { PoolConvergence } from '../domain/convergence.js';
import { retirementPaceOf } from '../domain/convergence.js';
import { isNotFound } from '../domain/errors.js';
import type { Freshness } from '../domain/freshness.js';
import { freshnessOf } from '../domain/freshness.js';
import {
  countGenerations,
  parseGenerationSamples,
  UNLABELLED_GENERATION,
} from '../domain/generation-samples.js';
import type { GenerationState } from '../domain/generation-state.js';
import { generationStateOf } from '../domain/generation-state.js';
import { IMAGE_VERSION_LABEL, OLDER_GENERATION_TAINT, UNKNOWN_GENERATION } from '../domain/generations.js';
import { runTimelineTagsOf } from '../domain/image-version.js';
import { definedOnly } from '../domain/optional.js';
import type { PoolLease } from '../domain/ownership.js';
import { describeHolder, LEASE_ANNOTATIONS, leaseState } from '../domain/ownership.js';
import type { PoolHistory } from '../domain/pool-history.js';
import { poolHistoryOf } from '../domain/pool-history.js';
import type { HeldNode, Kept } from '../domain/reaper.js';
import { describeReapAction, planReaping } from '../domain/reaper.js';
import type { RetirementSettings } from '../domain/retirement.js';
import { parseRfc3339 } from '../domain/rfc3339.js';
import type { RunState } from '../domain/run-state.js';
import { runStateOf } from '../domain/run-state.js';
import { checkScaleSetEligibility, type ScaleSet } from '../domain/scale-set.js';
import { versionVerdictOf } from '../domain/version-verdict.js';
import { weighCapzOwnership } from './capz-pool.js';
import { provenanceOf } from './image-facts.js';
import { poolLabelOf, poolMembersAndKept } from './node-scan.js';
import { currentImageFacts } from './plan-pool.js';
import { markedByRun, type PoolScope, poolScope, readPoolHoldings, scopeOfPool } from './pool-holdings.js';
import { findPoolModel } from './pool-lookup.js';
import type { PoolPlanSummary } from './pool-plan.js';
import { applyPolicyToConfiguration, policyViewOf, type PoolPolicyView } from './pool-policies.js';
import type { ClusterHandle, ConfiguredPool, PoolConfiguration } from './refresh-dependencies.js';

/**
 * Who holds the pool and what its runs left, from the cluster and Azure (not from any runner's files): the
 * lease, the nodes carrying our marker, and what `release` would give back now.
 */
export interface PoolOwnership {
  readonly lease:
    | { readonly state: 'free'; readonly lastHolder?: string; readonly releasedAt?: string }
    | {
        readonly state: 'held' | 'expired';
        readonly holder: string;
        readonly runId: string;
        readonly runner: string;
        readonly host: string;
        readonly since?: string;
        readonly expiresAt: string;
        readonly instanceId?: string;
        readonly purpose?: string;
        readonly cancelRequested?: string;
        /** In words: who, since when, until when. */
        readonly description: string;
      };
  readonly heldNodes: readonly {
    readonly node: string;
    readonly runId: string;
    /** The run holding it holds the pool's live lease. */
    readonly byLiveRun: boolean;
    /** When its run took the pool, when that run holds the lease (held or interrupted). */
    readonly since?: string;
    readonly cordoned: boolean;
    readonly vm: string;
  }[];
  /** What `vmss-prototype release` would give back now, in words. */
  readonly leftovers: readonly string[];
  readonly kept: readonly Kept[];
}

export interface PoolStatus {
  readonly cluster: string;
  readonly pool: string;
  readonly scaleSet: string;
  /** What the model's image reference says, in words. */
  readonly modelImage: string;
  /** The model points at our image definition (latest) or one of its versions (pinned). */
  readonly pointsAtOurImage: boolean;
  readonly pinned: boolean;
  readonly currentVersion?: {
    readonly name: string;
    readonly id: string;
    readonly sourceNode?: string;
    readonly patchedAt?: string;
    readonly builtAt?: string;
    readonly ageSeconds?: number;
    readonly storageAccountType?: string;
    /** How new nodes from it join (its tag; absent on a version built before the tag existed). */
    readonly newNodes?: NewNodeBootstrap;
  };
  readonly versionCount: number;
  /** The scale set itself can be refreshed (scale-set rules only; `plan` judges the nodes too). */
  readonly eligible: boolean;
  readonly refusal?: string;
  /**
   * What `plan` decides for the pool now (its nodes judged too), added by the status orchestration from
   * the same planning a dry run does; absent where the status was read without it.
   */
  readonly plan?: PoolPlanSummary;
  /** What the pool's run is doing (shared/domain/run-state.ts): the same rule everywhere. */
  readonly run: RunState;
  /** A CAPZ pool: its MachinePool and what CAPZ does with a new image (docs/capz.md). */
  readonly capz?: { readonly machinePool: string; readonly rollout: string };
  /** How old the patches are that a node created now would boot with. */
  readonly freshness: Freshness;
  readonly ownership?: PoolOwnership;
  /** The last versions, the runs that built them (with their timelines) and freshness over time. */
  readonly history: PoolHistory;
  /** The pool's nodes and the generation (image version) each was built from (our label). */
  readonly nodes: readonly PoolNodeView[];
  /**
   * Nodes per generation over time (the pool lease's record, written by each holding run's labelling
   * step) and now, and where retirement stands: the status page's convergence chart.
   */
  readonly convergence: PoolConvergence;
  /** A canary judging a version now, from the scale set's canary tags. */
  readonly canary?:
    | {
        readonly state: 'running';
        readonly version: string;
        readonly runId: string;
        readonly startedAt: string;
        readonly count: number;
        readonly instances: readonly string[];
      }
    | { readonly state: 'damaged'; readonly problem: string };
  /** The pool's PoolImagePolicy (docs/pool-policy.md); absent: it runs with its settings. */
  readonly imagePolicy?: PoolPolicyView;
}

/**
 * A pool the cluster's nodes name whose status could not be read (its scale set deleted, or in a group
 * the app's role does not reach): a cluster's status reports it with the reason and goes on.
 */
export interface UnreadablePool {
  readonly pool: string;
  /** The failure, in words (it names the scale set and what Azure answered). */
  readonly reason: string;
}

/** A cluster's status: every pool that could be read, and the ones that could not. */
export interface ClusterStatusRead {
  readonly pools: readonly PoolStatus[];
  readonly unreadable: readonly UnreadablePool[];
}

export interface PoolNodeView {
  readonly name: string;
  /** The `vmss-prototype.io/image-version` label; absent when the node carries none yet. */
  readonly generation?: string;
  readonly ready: boolean;
  readonly cordoned: boolean;
  /** The node carries our older-generation taint. */
  readonly olderGeneration: boolean;
  /** What its generation is: current, older, rejected… (shared/domain/generation-state.ts). */
  readonly generationState?: GenerationState;
}

/**
 * The versions whose verdicts the nodes' generations are judged by: those the image facts listed, or —
 * when the model is not on our definition (a pool whose first refresh was rejected) and a node carries a
 * version of ours nonetheless (an outside scale-out built it while the canary had the model pinned) — the
 * definition's versions, listed for that: such a node is "rejected v…", never just "older".
 */
async function versionsForVerdicts(
  handle: ClusterHandle,
  configuration: Pick<PoolConfiguration, 'gallery'>,
  image: { readonly versions: readonly ImageVersion[]; readonly pointsAtOurs: boolean },
  nodes: readonly PoolNodeView[],
): Promise<readonly ImageVersion[]> {
  if (image.pointsAtOurs) return image.versions;
  const ours = nodes.some(
    (node) =>
      node.generation !== undefined &&
      node.generation !== UNKNOWN_GENERATION &&
      node.generation !== UNLABELLED_GENERATION,
  );
  if (!ours) return image.versions;
  const g = configuration.gallery;
  return handle.compute.imageVersions
    .list({
      subscriptionId: g.subscriptionId,
      resourceGroup: g.resourceGroup,
      galleryName: g.galleryName,
      imageName: g.imageDefinitionName,
    })
    .catch((error: unknown) => {
      if (isNotFound(error)) return [];
      throw error;
    });
}

/** The pool's nodes (matched to the scale set's instances by providerID) with their generation labels. */
function nodeViewsOf(nodes: readonly ClusterNode[]): PoolNodeView[] {
  return nodes
    .map((node) => {
      const generation = node.labels[IMAGE_VERSION_LABEL];
      return {
        name: node.name,
        ...definedOnly({ generation }),
        ready: node.conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
        cordoned: node.unschedulable,
        olderGeneration: node.taints.some((taint) => taint.key === OLDER_GENERATION_TAINT),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

function canaryOf(tags: Readonly<Record<string, string>>): PoolStatus['canary'] {
  const parsed = parseCanaryRecord(tags);
  if (parsed.kind === 'none') return undefined;
  if (parsed.kind === 'damaged') return { state: 'damaged', problem: parsed.problem };
  const record = parsed.record;
  return {
    state: 'running',
    version: record.version,
    runId: record.run,
    startedAt: record.startedAt,
    count: record.count,
    instances: record.instances ?? [],
  };
}

/** The pool's ownership as `status` shows it. */
export async function readPoolOwnership(
  handle: ClusterHandle,
  poolName: string,
  now: Date,
): Promise<PoolOwnership> {
  return (await readOwnershipAndLease(handle, poolName, now)).ownership;
}

/**
 * `read`: what the caller has read already (readPoolStatus): the pool's scope, its model and its label,
 * so that the holdings read neither discovers the pools again nor lists every node.
 */
async function readOwnershipAndLease(
  handle: ClusterHandle,
  poolName: string,
  now: Date,
  read?: {
    readonly scope: PoolScope;
    readonly model: ScaleSet;
    readonly poolLabels: Readonly<Record<string, string>> | undefined;
    readonly marked: readonly ClusterNode[];
  },
): Promise<{ readonly ownership: PoolOwnership; readonly lease?: PoolLease; readonly run: RunState }> {
  const view =
    read === undefined
      ? await readPoolHoldings(handle, await poolScope(handle, poolName))
      : await readPoolHoldings(handle, read.scope, read.model, read.poolLabels, read.marked);
  const state = leaseState(view.lease, now);
  // Whether the holding process is alive is not known here (only its own host can tell): the lease decides.
  const run = runStateOf({ pool: poolName, lease: view.lease, holder: 'unknown', now });
  const alive = run.kind === 'running' ? run.runId : undefined;
  const holderSince = state.kind === 'held' ? { runId: state.holder.runId, since: state.since } : undefined;
  const plan = planReaping(view.holdings, alive);
  const annotations = view.lease?.annotations ?? {};
  const instanceId = annotations[LEASE_ANNOTATIONS.instanceId];
  const purpose = annotations[LEASE_ANNOTATIONS.purpose];
  const ownership: PoolOwnership = {
    lease:
      state.kind === 'free'
        ? {
            state: 'free',
            ...definedOnly({ lastHolder: state.lastHolder, releasedAt: state.releasedAt }),
          }
        : {
            state: state.live ? 'held' : 'expired',
            holder: state.identity,
            runId: state.holder.runId,
            runner: state.holder.kind,
            host: state.holder.host,
            ...definedOnly({ since: state.since }),
            expiresAt: state.expiresAt,
            ...definedOnly({ instanceId, purpose, cancelRequested: state.cancelRequested }),
            description: describeHolder(state, instanceId),
          },
    heldNodes: view.holdings.nodes.map((node) => ({
      node: node.name,
      runId: node.runId,
      byLiveRun: node.runId === alive,
      ...(holderSince?.runId === node.runId ? definedOnly({ since: holderSince.since }) : {}),
      cordoned: node.unschedulable,
      vm: vmOf(node),
    })),
    leftovers: plan.actions.map(describeReapAction),
    kept: plan.kept,
  };
  return { ownership, run, ...(view.lease === undefined ? {} : { lease: view.lease }) };
}

function lastHolderOf(lease: PoolLease | undefined): string | undefined {
  return lease?.annotations[LEASE_ANNOTATIONS.lastHolder];
}

function vmOf(node: HeldNode): string {
  switch (node.instance.kind) {
    case 'present':
      return node.instance.powerState;
    case 'gone':
      return 'deleted';
    case 'unknown':
      return 'unknown';
  }
}

/** The pool's convergence from the lease's lasting records, the nodes just read and the settings. */
function convergenceOf(input: {
  readonly newest?: string;
  readonly lasting: Readonly<Record<string, string>>;
  readonly nodes: readonly PoolNodeView[];
  readonly retirement: RetirementSettings;
  readonly capacity: number;
  readonly now: Date;
}): PoolConvergence {
  const { lasting, now } = input;
  const record = lasting[LEASE_ANNOTATIONS.retiredInWindow];
  return {
    ...definedOnly({ newest: input.newest }),
    samples: parseGenerationSamples(lasting[LEASE_ANNOTATIONS.generationSamples]),
    now: {
      at: now.toISOString(),
      counts: countGenerations(input.nodes.map((node) => node.generation ?? UNLABELLED_GENERATION)),
    },
    retirement: retirementPaceOf({
      settings: input.retirement,
      capacity: input.capacity,
      ...definedOnly({ record }),
      now,
    }),
  };
}

/**
 * One pool's status. `listed`: the pool as the caller's listing of the cluster's pools found it (a
 * cluster's status): its scale set is read where it is, with no second discovery; a pool whose scale set
 * is gone then fails on that one read instead of after another listing of every node.
 */
export async function readPoolStatus(
  handle: ClusterHandle,
  poolName: string,
  now: Date,
  listed?: ConfiguredPool,
): Promise<PoolStatus> {
  const { pool, model: scaleSet } =
    listed === undefined
      ? await findPoolModel(handle, poolName)
      : { pool: listed, model: await handle.compute.scaleSets.get(listed.scaleSet) };
  // The pool's PoolImagePolicy, applied as a run would (docs/pool-policy.md).
  const configuration = applyPolicyToConfiguration(
    handle.configuration.poolConfiguration(pool),
    await handle.kube.poolPolicies.get(pool.name),
  );
  // A CAPZ pool is judged as the plan judges it: against its MachinePool and the rollout setting.
  const { eligibility, capz } = await weighCapzOwnership(
    handle,
    configuration,
    scaleSet,
    checkScaleSetEligibility(scaleSet),
  );
  const image = await currentImageFacts(handle, scaleSet, configuration);
  const reference = scaleSet.imageReference;
  const modelImage =
    reference === undefined
      ? 'none'
      : reference.kind === 'marketplace'
        ? `marketplace ${reference.publisher}:${reference.offer}:${reference.sku}:${reference.version}`
        : reference.id;
  const version = image.version;
  const provenance = version === undefined ? undefined : provenanceOf(version);
  const builtAt = version?.publishedAt ?? version?.tags['vmss-prototype.built-at'];
  // The pool's label is read once (a GET of a member) and selects, in one listing of the pool's pages
  // (not the cluster's), both its members and the nodes its runs marked.
  const instances = await handle.compute.instances.list(pool.scaleSet);
  const poolLabels = await poolLabelOf(handle.kube, instances);
  const listing = await poolMembersAndKept(handle.kube, instances, poolLabels, markedByRun);
  const { ownership, lease, run } = await readOwnershipAndLease(handle, poolName, now, {
    scope: scopeOfPool(handle, pool),
    model: scaleSet,
    poolLabels,
    marked: listing.kept,
  });
  const read = nodeViewsOf(listing.members);
  const verdicts = new Map(
    (await versionsForVerdicts(handle, configuration, image, read)).map((v) => [
      v.ref.versionName,
      versionVerdictOf(v.tags),
    ]),
  );
  const current = version === undefined || !image.pointsAtOurs ? undefined : version.ref.versionName;
  const nodes = read.map((node) => ({
    ...node,
    generationState: generationStateOf({ generation: node.generation, current, verdicts }),
  }));
  const canary = canaryOf(scaleSet.tags);
  return {
    cluster: handle.configuration.name,
    pool: pool.name,
    scaleSet: scaleSet.name,
    modelImage,
    pointsAtOurImage: image.pointsAtOurs,
    pinned: image.pinned,
    ...(version === undefined
      ? {}
      : {
          currentVersion: {
            name: version.ref.versionName,
            id: version.id,
            ...(provenance === undefined
              ? {}
              : { sourceNode: provenance.sourceNode, patchedAt: provenance.patchedAt }),
            ...(builtAt === undefined
              ? {}
              : {
                  builtAt,
                  ageSeconds: Math.max(
                    0,
                    Math.round((now.getTime() - (parseRfc3339(builtAt) ?? now.getTime())) / 1000),
                  ),
                }),
            ...definedOnly({
              storageAccountType: version.storageAccountType,
              newNodes: runTimelineTagsOf(version.tags).newNodes,
            }),
          },
        }),
    versionCount: image.versions.length,
    freshness: freshnessOf({
      now,
      ...(provenance === undefined ? {} : { patchedAt: provenance.patchedAt }),
      ...(version === undefined ? {} : { version: version.ref.versionName }),
      ...(reference?.kind === 'marketplace' ? { marketplaceVersion: reference.version } : {}),
    }),
    eligible: eligibility.eligible,
    ...(eligibility.eligible ? {} : { refusal: eligibility.reasons.map((r) => r.reason).join('; ') }),
    ...(capz === undefined
      ? {}
      : { capz: { machinePool: `${capz.namespace}/${capz.machinePool}`, rollout: capz.description } }),
    run,
    ownership,
    history: poolHistoryOf({
      now,
      versions: image.versions.map((v) => ({
        name: v.ref.versionName,
        provisioningState: v.provisioningState,
        excludeFromLatest: v.excludeFromLatest,
        ...definedOnly({ publishedAt: v.publishedAt }),
        tags: v.tags,
      })),
      ...(version === undefined || !image.pointsAtOurs ? {} : { currentVersion: version.ref.versionName }),
      lease:
        run.kind === 'idle'
          ? { state: 'free', ...definedOnly({ lastHolder: lastHolderOf(lease), releasedAt: run.releasedAt }) }
          : run.kind === 'running'
            ? { state: 'held', runId: run.runId, ...definedOnly({ since: run.since }) }
            : {
                state: 'interrupted',
                runId: run.runId,
                ...definedOnly({ since: run.since, lastSeenAt: lease?.renewedAt ?? lease?.acquiredAt }),
              },
    }),
    nodes,
    convergence: convergenceOf({
      ...(version === undefined || !image.pointsAtOurs ? {} : { newest: version.ref.versionName }),
      lasting: lease?.annotations ?? {},
      nodes,
      retirement: configuration.run.retirement,
      capacity: scaleSet.capacity ?? nodes.length,
      now,
    }),
    ...definedOnly({ canary, imagePolicy: policyViewOf(configuration) }),
  };
}
