/**
 * Keeps the generation labels (and the optional older-generation taint) of one pool's nodes current
 *, and says how fresh the pool is. Runs at the end of every refresh and rollback, so every
 * timer tick too. Touches nothing but our label and our taint — and, for a run that holds the pool, the
 * pool lease's record of nodes per generation over time (shared/domain/generation-samples.ts).
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import type { ImageVersion, ScaleSetInstance } from '../domain/compute.js';
import { ignoreNotFound } from '../domain/errors.js';
import type { Freshness } from '../domain/freshness.js';
import { freshnessOf } from '../domain/freshness.js';
import { countGenerations, recordGenerationSample } from '../domain/generation-samples.js';
import type { GenerationChange, GenerationNode } from '../domain/generations.js';
import {
  IMAGE_VERSION_LABEL,
  instanceGeneration,
  OLDER_GENERATION_TAINT,
  planGenerations,
  UNKNOWN_GENERATION,
} from '../domain/generations.js';
import { parseImageVersion } from '../domain/image-version.js';
import { definedOnly } from '../domain/optional.js';
import { LEASE_ANNOTATIONS } from '../domain/ownership.js';
import { galleryImageResourceId, sameResourceId } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';
import { versionVerdictOf } from '../domain/version-verdict.js';
import { provenanceOf } from './image-facts.js';
import { poolMemberNodes, resourceIdOfNode } from './node-scan.js';
import { currentImageFacts } from './plan-pool.js';
import type { Fence } from './pool-lease.js';
import { writeLeaseRecord } from './pool-lease.js';
import { findPool, ownGroupPool } from './pool-lookup.js';
import { policyAwareHandleFor } from './pool-policies.js';
import type { GenerationsReport } from './refresh-contracts.js';
import type { ClusterHandle, ConfiguredPool } from './refresh-dependencies.js';

export interface GenerationsResult {
  /** Nodes of the pool. */
  readonly nodes: number;
  /** The version new nodes get (ours), if any. */
  readonly currentVersion?: string;
  /** Node → the generation label it carries now. */
  readonly labels: Readonly<Record<string, string>>;
  readonly changes: readonly GenerationChange[];
  readonly freshness: Freshness;
}

/**
 * `known.modelImageId`: the gallery image the caller has just seen the model on (a refresh's model
 * step); the scale set is then not read again. `known.versions`: the definition's versions the caller
 * has just listed (a refresh's pruning); they are not listed again. Stale ones only mislabel until the
 * next run.
 */
export async function applyNodeGenerations(
  handle: ClusterHandle,
  poolName: string,
  now: Date,
  known: { readonly modelImageId?: string; readonly versions?: readonly ImageVersion[] } = {},
): Promise<GenerationsResult> {
  const { pool, instances } = await poolWithInstances(handle, poolName);
  // The pool's PoolImagePolicy may set the generation taint (docs/pool-policy.md).
  const configuration = (await policyAwareHandleFor(handle, pool.name)).configuration.poolConfiguration(pool);
  const policy = configuration.run.generations;
  const scaleSet: Pick<ScaleSet, 'imageReference'> =
    known.modelImageId === undefined
      ? await handle.compute.scaleSets.get(pool.scaleSet)
      : { imageReference: { kind: 'gallery', id: known.modelImageId } };
  const image = await currentImageFacts(handle, scaleSet, configuration, known.versions);
  const g = configuration.gallery;
  const definitionId = galleryImageResourceId({ ...g, imageName: g.imageDefinitionName });
  const instanceOf = (node: ClusterNode): ScaleSetInstance | undefined => {
    const resourceId = resourceIdOfNode(node);
    return instances.find((candidate) => sameResourceId(candidate.resourceId, resourceId));
  };
  const members: { node: ClusterNode; instance: ScaleSetInstance }[] = [];
  for (const node of await poolMemberNodes(handle.kube, instances)) {
    const instance = instanceOf(node);
    if (instance !== undefined) members.push({ node, instance });
  }

  const generationNodes: GenerationNode[] = [];
  for (const { node, instance } of members) {
    let generation = instanceGeneration({
      ...definedOnly({ imageId: instance.imageId, exactVersion: instance.exactVersion }),
      definitionId,
    });
    const label = node.labels[IMAGE_VERSION_LABEL];
    const onLatest = sameResourceId(instance.imageId, definitionId);
    if (generation === UNKNOWN_GENERATION && onLatest) {
      // Built from the definition's `latest`: the model does not say which version that was. A label we
      // wrote before is kept (a machine's image never changes but by a reimage); otherwise the OS disk
      // says, from the gallery image version it was created from.
      if (label !== undefined && parseImageVersion(label) !== undefined) {
        generation = label;
      } else if (instance.osDiskId !== undefined) {
        const diskVersion = await handle.compute.disks.getImageVersionId(instance.osDiskId);
        generation = instanceGeneration({
          ...definedOnly({ diskImageVersionId: diskVersion }),
          definitionId,
        });
      }
    }
    const taint = node.taints.find((entry) => entry.key === OLDER_GENERATION_TAINT);
    generationNodes.push({
      name: node.name,
      ...definedOnly({ label }),
      ...(taint === undefined ? {} : { taint: taint.effect }),
      generation,
    });
  }

  const usable = image.versions
    .filter(
      (version) =>
        version.provisioningState === 'Succeeded' && versionVerdictOf(version.tags).kind === 'none',
    )
    .map((version) => version.ref.versionName);
  const currentVersion = image.pointsAtOurs ? image.version?.ref.versionName : undefined;
  const changes = planGenerations({
    nodes: generationNodes,
    ...definedOnly({ currentVersion }),
    retainedVersions: usable,
    policy,
  });
  for (const change of changes) {
    if (change.label !== undefined) {
      await handle.kube.nodes.patchLabels(change.node, { [IMAGE_VERSION_LABEL]: change.label });
    }
    if (change.taint?.action === 'add') {
      await handle.kube.nodes.setTaint(change.node, OLDER_GENERATION_TAINT, {
        key: OLDER_GENERATION_TAINT,
        effect: change.taint.effect,
      });
    } else if (change.taint?.action === 'remove') {
      await handle.kube.nodes.setTaint(change.node, OLDER_GENERATION_TAINT, null);
    }
  }

  const reference = scaleSet.imageReference;
  const provenance = image.version === undefined ? undefined : provenanceOf(image.version);
  const freshness = freshnessOf({
    now,
    ...(provenance === undefined ? {} : { patchedAt: provenance.patchedAt }),
    ...definedOnly({ version: currentVersion }),
    ...(reference?.kind === 'marketplace' ? { marketplaceVersion: reference.version } : {}),
  });
  return {
    nodes: members.length,
    ...definedOnly({ currentVersion }),
    labels: Object.fromEntries(generationNodes.map((node) => [node.name, node.generation])),
    changes,
    freshness,
  };
}

/**
 * The pool and its instances: with `all`, the scale set of that name in the cluster's own resource group
 * when ARM lists its instances (the read the step makes anyway), else the pool discovery finds.
 */
async function poolWithInstances(
  handle: ClusterHandle,
  poolName: string,
): Promise<{ readonly pool: ConfiguredPool; readonly instances: readonly ScaleSetInstance[] }> {
  const own = ownGroupPool(handle, poolName);
  const listed =
    own === undefined ? undefined : await handle.compute.instances.list(own.scaleSet).catch(ignoreNotFound);
  if (own !== undefined && listed !== undefined) return { pool: own, instances: listed };
  const pool = await findPool(handle, poolName);
  return { pool, instances: await handle.compute.instances.list(pool.scaleSet) };
}

/**
 * Adds what the labelling found (nodes per generation, `now`) to the pool lease's record of it
 * (LEASE_ANNOTATIONS.generationSamples), while `fence.runId` holds the lease: refused (terminal
 * `LeaseLost`) otherwise. Idempotent: a repeat of the same reading soon after adds nothing.
 */
export async function recordPoolGenerations(
  handle: ClusterHandle,
  fence: Fence,
  result: Pick<GenerationsResult, 'labels'>,
  now: Date,
): Promise<void> {
  const sample = { at: now.toISOString(), counts: countGenerations(Object.values(result.labels)) };
  await writeLeaseRecord(
    handle.kube,
    fence,
    LEASE_ANNOTATIONS.generationSamples,
    (current) => recordGenerationSample(current, sample),
    now,
  );
}

/** What a run reports of the generations step: counts and the nodes whose taint changed. */
export function generationsReportOf(result: GenerationsResult): {
  readonly generations: GenerationsReport;
  readonly freshness: Freshness;
} {
  return {
    generations: {
      nodes: result.nodes,
      labelled: Object.keys(result.labels).length,
      tainted: result.changes.filter((change) => change.taint?.action === 'add').map((change) => change.node),
      untainted: result.changes
        .filter((change) => change.taint?.action === 'remove')
        .map((change) => change.node),
    },
    freshness: result.freshness,
  };
}
