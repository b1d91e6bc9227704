/**
 * The bodies of the refresh activities (DESIGN.md §2), one per pipeline step. Each parses its input,
 * does one short, idempotent thing through the ports, and returns a small JSON result. Registrations
 * (functions/) and the local runner (cli/) call exactly these.
 */
import { z } from 'zod';

import { SCALE_DOWN_DISABLED_ANNOTATION } from '../domain/cluster-node.js';
import type { ImageVersion } from '../domain/compute.js';
import { NO_OP_CLOUD_CONFIG } from '../domain/compute.js';
import { planDrain } from '../domain/drain.js';
import { isNotFound, isRefreshError, TerminalError } from '../domain/errors.js';
import type { PrunableImageVersion } from '../domain/pruning.js';
import { selectVersionsToPrune } from '../domain/pruning.js';
import type { ClusterGateway } from '../ports/cluster-gateway.js';
import { listPoolsOfCluster, planPoolForCluster } from './plan-pool.js';
import type { PoolStatus } from './pool-status.js';
import { readPoolStatus } from './pool-status.js';
import type {
  ActivityName,
  DrainStepResult,
  ImageVersionRequestResult,
  ImageVersionView,
  InstanceView,
  NodePriorState,
  PoolPlan,
  RemovableExtension,
  ScaleSetImageView,
  SnapshotView,
} from './refresh-contracts.js';
import { ACTIVITY } from './refresh-contracts.js';
import type { ClusterHandle, RefreshDependencies } from './refresh-dependencies.js';

/** Marks the node we hold: which run cordoned it (visible to operators, and the proof we own the cordon). */
export const CAPTURE_RUN_ANNOTATION = 'vmss-prototype.io/capture-run';

const Name = z.string().min(1).max(253);
const ScaleSetRefInput = z.object({
  subscriptionId: z.string().min(1),
  resourceGroup: z.string().min(1),
  name: z.string().min(1),
});
const DefinitionRefInput = z.object({
  subscriptionId: z.string().min(1),
  resourceGroup: z.string().min(1),
  galleryName: z.string().min(1),
  imageName: z.string().min(1),
});
const VersionRefInput = DefinitionRefInput.extend({ versionName: z.string().min(1) });
const Tags = z.record(z.string(), z.string());
const StorageAccountTypeInput = z.enum(['Standard_ZRS', 'Standard_LRS', 'Premium_LRS']);

function parseInput<T extends z.ZodType>(activity: string, schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const issues = result.error.issues.map(
      (issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`,
    );
    throw new TerminalError(
      'InvalidActivityInput',
      `parsing input of activity ${activity}: ${issues.join('; ')}`,
    );
  }
  return result.data;
}

export type ActivityHandler = (input: unknown) => Promise<unknown>;

/** The activity table: name → handler bound to its dependencies. */
export function createRefreshActivities(deps: RefreshDependencies): Record<ActivityName, ActivityHandler> {
  const clusterOf = (name: string): Promise<ClusterHandle> => deps.cluster(name);

  return {
    [ACTIVITY.listPools]: async (input) => {
      const { cluster } = parseInput(ACTIVITY.listPools, z.object({ cluster: Name }), input);
      const handle = await clusterOf(cluster);
      const pools = await listPoolsOfCluster(handle);
      return {
        pools: pools.map((pool) => pool.name),
        maxParallelPools: handle.configuration.maxParallelPools,
      };
    },

    [ACTIVITY.planPool]: async (input): Promise<PoolPlan> => {
      const args = parseInput(
        ACTIVITY.planPool,
        z.object({ cluster: Name, pool: Name, node: Name.optional() }),
        input,
      );
      const handle = await clusterOf(args.cluster);
      return planPoolForCluster(handle, args.pool, args.node, deps.now());
    },

    [ACTIVITY.readPoolStatus]: async (input): Promise<PoolStatus> => {
      const args = parseInput(ACTIVITY.readPoolStatus, z.object({ cluster: Name, pool: Name }), input);
      const handle = await clusterOf(args.cluster);
      return readPoolStatus(handle, args.pool, deps.now());
    },

    [ACTIVITY.ensureImageDefinition]: async (input): Promise<string[]> => {
      const args = parseInput(
        ACTIVITY.ensureImageDefinition,
        z.object({
          cluster: Name,
          definition: DefinitionRefInput,
          location: z.string().min(1),
          spec: z.object({
            osType: z.enum(['Linux', 'Windows']),
            osState: z.enum(['Generalized', 'Specialized']),
            hyperVGeneration: z.enum(['V1', 'V2']),
            architecture: z.enum(['x64', 'Arm64']),
            securityType: z.string().optional(),
            identifier: z.object({ publisher: z.string(), offer: z.string(), sku: z.string() }),
            description: z.string().optional(),
            tags: Tags,
          }),
          galleryTags: Tags,
        }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.ensureGallery(args.definition, args.location, args.galleryTags);
      const definition = await compute.ensureImageDefinition(args.definition, args.location, args.spec);
      if (
        definition.spec.osType !== args.spec.osType ||
        definition.spec.hyperVGeneration !== args.spec.hyperVGeneration ||
        definition.spec.osState !== args.spec.osState
      ) {
        throw new TerminalError(
          'ImageDefinitionMismatch',
          `ensuring image definition ${args.definition.imageName}: it exists with osType ${definition.spec.osType}, ` +
            `hyperVGeneration ${definition.spec.hyperVGeneration}, osState ${definition.spec.osState}, but the scale ` +
            `set needs ${args.spec.osType}/${args.spec.hyperVGeneration}/${args.spec.osState}; these are immutable: ` +
            `delete the definition or configure another image definition name`,
        );
      }
      const versions = await compute.listImageVersions(args.definition);
      return versions.map((version) => version.ref.versionName);
    },

    [ACTIVITY.readNodeState]: async (input): Promise<NodePriorState> => {
      const args = parseInput(ACTIVITY.readNodeState, z.object({ cluster: Name, node: Name }), input);
      const { kube } = await clusterOf(args.cluster);
      const node = await kube.getNode(args.node);
      const marker = node.annotations[CAPTURE_RUN_ANNOTATION];
      if (marker !== undefined) {
        // Another run holds this node (or crashed holding it): its prior state is not ours to record.
        throw new TerminalError(
          'NodeHeldByAnotherRun',
          `reading node ${args.node}: it carries ${CAPTURE_RUN_ANNOTATION}=${marker} from another run; wait for that ` +
            `run to finish, or, if it is gone, uncordon the node and remove the annotation by hand`,
        );
      }
      return {
        unschedulable: node.unschedulable,
        scaleDownDisabled: node.annotations[SCALE_DOWN_DISABLED_ANNOTATION] ?? null,
      };
    },

    [ACTIVITY.protectNode]: async (input) => {
      const args = parseInput(
        ACTIVITY.protectNode,
        z.object({ cluster: Name, node: Name, runTag: Name }),
        input,
      );
      const { kube } = await clusterOf(args.cluster);
      // The autoscaler must not remove the node while it is drained and stopped: cordoning alone
      // does not protect it (research/kube.md §4). Annotate first, then cordon.
      await kube.patchNodeAnnotations(args.node, {
        [CAPTURE_RUN_ANNOTATION]: args.runTag,
        [SCALE_DOWN_DISABLED_ANNOTATION]: 'true',
      });
      await kube.setNodeUnschedulable(args.node, true);
      return null;
    },

    [ACTIVITY.drainNodeStep]: async (input): Promise<DrainStepResult> => {
      const args = parseInput(
        ACTIVITY.drainNodeStep,
        z.object({
          cluster: Name,
          node: Name,
          gracePeriodSeconds: z.number().int().min(0).optional(),
          deleteEmptyDirData: z.boolean(),
          force: z.boolean(),
        }),
        input,
      );
      const { kube } = await clusterOf(args.cluster);
      return drainStep(kube, args.node, {
        gracePeriodSeconds: args.gracePeriodSeconds,
        deleteEmptyDirData: args.deleteEmptyDirData,
        force: args.force,
      });
    },

    [ACTIVITY.startDiskPrep]: async (input) => {
      const args = parseInput(
        ACTIVITY.startDiskPrep,
        z.object({
          cluster: Name,
          node: Name,
          namespace: Name,
          podName: Name,
          image: z.string().min(1),
          script: z.string().min(1),
        }),
        input,
      );
      const { kube } = await clusterOf(args.cluster);
      await kube.createPrepPod({
        namespace: args.namespace,
        name: args.podName,
        nodeName: args.node,
        image: args.image,
        script: args.script,
        labels: {
          'app.kubernetes.io/name': 'vmss-prototype-prep',
          'app.kubernetes.io/managed-by': 'vmss-prototype',
        },
      });
      return null;
    },

    [ACTIVITY.readPrepPod]: async (input) => {
      const args = parseInput(
        ACTIVITY.readPrepPod,
        z.object({ cluster: Name, namespace: Name, name: Name }),
        input,
      );
      const { kube } = await clusterOf(args.cluster);
      return (await kube.getPodPhase(args.namespace, args.name)) ?? 'Absent';
    },

    [ACTIVITY.deletePrepPod]: async (input) => {
      const args = parseInput(
        ACTIVITY.deletePrepPod,
        z.object({ cluster: Name, namespace: Name, name: Name }),
        input,
      );
      const { kube } = await clusterOf(args.cluster);
      await kube.deletePod(args.namespace, args.name);
      return null;
    },

    [ACTIVITY.readInstance]: async (input): Promise<InstanceView> => {
      const args = parseInput(
        ACTIVITY.readInstance,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput, instanceId: Name }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      let instance;
      try {
        instance = await compute.getInstance(args.scaleSet, args.instanceId);
      } catch (error) {
        if (isNotFound(error)) {
          return { exists: false, powerState: 'unknown', provisioningState: 'Deleted', location: '' };
        }
        throw error;
      }
      return {
        exists: true,
        powerState: instance.powerState,
        provisioningState: instance.provisioningState,
        osDiskId: instance.osDiskId,
        vmId: instance.vmId,
        location: instance.location,
      };
    },

    [ACTIVITY.requestInstancePowerOff]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestInstancePowerOff,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput, instanceId: Name }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestPowerOff(await compute.getInstance(args.scaleSet, args.instanceId));
      return null;
    },

    [ACTIVITY.requestInstanceStart]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestInstanceStart,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput, instanceId: Name }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestStart(await compute.getInstance(args.scaleSet, args.instanceId));
      return null;
    },

    [ACTIVITY.requestSnapshot]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestSnapshot,
        z.object({
          cluster: Name,
          subscriptionId: Name,
          resourceGroup: Name,
          name: Name,
          location: Name,
          sourceDiskId: z.string().min(1),
          tags: Tags,
        }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      // A full snapshot: the image version copies it once and we delete it right after, so
      // incremental snapshots would save nothing and add the 7-per-5-minutes limit.
      await compute.requestSnapshot({
        subscriptionId: args.subscriptionId,
        resourceGroup: args.resourceGroup,
        name: args.name,
        location: args.location,
        sourceDiskId: args.sourceDiskId,
        incremental: false,
        tags: args.tags,
      });
      return null;
    },

    [ACTIVITY.readSnapshot]: async (input): Promise<SnapshotView> => {
      const args = parseInput(
        ACTIVITY.readSnapshot,
        z.object({ cluster: Name, subscriptionId: Name, resourceGroup: Name, name: Name }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      try {
        const snapshot = await compute.getSnapshot(args.subscriptionId, args.resourceGroup, args.name);
        return { exists: true, provisioningState: snapshot.provisioningState, id: snapshot.id };
      } catch (error) {
        if (isNotFound(error)) return { exists: false };
        throw error;
      }
    },

    [ACTIVITY.requestSnapshotDeletion]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestSnapshotDeletion,
        z.object({ cluster: Name, subscriptionId: Name, resourceGroup: Name, name: Name }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestSnapshotDeletion(args.subscriptionId, args.resourceGroup, args.name);
      return null;
    },

    [ACTIVITY.requestImageVersion]: async (input): Promise<ImageVersionRequestResult> => {
      const args = parseInput(
        ACTIVITY.requestImageVersion,
        z.object({
          cluster: Name,
          ref: VersionRefInput,
          location: Name,
          snapshotId: z.string().min(1),
          storageAccountType: StorageAccountTypeInput,
          extraRegions: z.array(Name),
          tags: Tags,
        }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      try {
        await compute.requestImageVersion({
          ref: args.ref,
          location: args.location,
          snapshotId: args.snapshotId,
          storageAccountType: args.storageAccountType,
          extraRegions: args.extraRegions,
          excludeFromLatest: true,
          tags: args.tags,
        });
        return { kind: 'accepted' };
      } catch (error) {
        if (isRefreshError(error) && error.code === 'ZrsUnsupported') {
          return { kind: 'zrs-unsupported', message: error.message };
        }
        throw error;
      }
    },

    [ACTIVITY.readImageVersion]: async (input): Promise<ImageVersionView> => {
      const args = parseInput(
        ACTIVITY.readImageVersion,
        z.object({ cluster: Name, ref: VersionRefInput }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      try {
        const version = await compute.getImageVersion(args.ref);
        return {
          exists: true,
          id: version.id,
          provisioningState: version.provisioningState,
          excludeFromLatest: version.excludeFromLatest,
          replicationState: version.replicationState,
        };
      } catch (error) {
        if (isNotFound(error)) return { exists: false };
        throw error;
      }
    },

    [ACTIVITY.requestImageVersionExclusion]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestImageVersionExclusion,
        z.object({ cluster: Name, ref: VersionRefInput, excludeFromLatest: z.boolean() }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestImageVersionExclusion(args.ref, args.excludeFromLatest);
      return null;
    },

    [ACTIVITY.requestImageVersionDeletion]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestImageVersionDeletion,
        z.object({ cluster: Name, ref: VersionRefInput }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestImageVersionDeletion(args.ref);
      return null;
    },

    [ACTIVITY.requestScaleSetImageUpdate]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestScaleSetImageUpdate,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput, imageId: z.string().min(1) }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestScaleSetImageUpdate(args.scaleSet, {
        imageId: args.imageId,
        // The prototype already ran its bootstrap: new instances must not run it again.
        customDataBase64: Buffer.from(NO_OP_CLOUD_CONFIG, 'utf8').toString('base64'),
      });
      return null;
    },

    [ACTIVITY.readScaleSetImage]: async (input): Promise<ScaleSetImageView> => {
      const args = parseInput(
        ACTIVITY.readScaleSetImage,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      const scaleSet = await compute.getScaleSet(args.scaleSet);
      const reference = scaleSet.imageReference;
      return {
        imageId: reference !== undefined && reference.kind !== 'marketplace' ? reference.id : undefined,
        provisioningState: scaleSet.provisioningState ?? 'Succeeded',
      };
    },

    [ACTIVITY.listRemovableExtensions]: async (input): Promise<RemovableExtension[]> => {
      const args = parseInput(
        ACTIVITY.listRemovableExtensions,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput, keepExtensionTypes: z.array(z.string()) }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      const keep = new Set(args.keepExtensionTypes.map((type) => type.toLowerCase()));
      const extensions = await compute.listExtensions(args.scaleSet);
      // Extensions already being deleted are listed too: the caller waits until none is left.
      return extensions
        .filter((extension) => {
          const type = extension.type.toLowerCase();
          const qualified = `${extension.publisher}/${extension.type}`.toLowerCase();
          return !keep.has(type) && !keep.has(qualified);
        })
        .map((extension) => ({ name: extension.name, deleting: extension.provisioningState === 'Deleting' }));
    },

    [ACTIVITY.requestExtensionDeletion]: async (input) => {
      const args = parseInput(
        ACTIVITY.requestExtensionDeletion,
        z.object({ cluster: Name, scaleSet: ScaleSetRefInput, extensionName: Name }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      await compute.requestExtensionDeletion(args.scaleSet, args.extensionName);
      return null;
    },

    [ACTIVITY.pruneImageVersions]: async (input): Promise<string[]> => {
      const args = parseInput(
        ACTIVITY.pruneImageVersions,
        z.object({
          cluster: Name,
          definition: DefinitionRefInput,
          history: z.number().int().min(1).max(50),
          keep: z.array(Name),
          modelImageId: z.string().min(1),
        }),
        input,
      );
      const { compute } = await clusterOf(args.cluster);
      const versions = await compute.listImageVersions(args.definition);
      const pinned = pinnedVersionName(args.modelImageId);
      const plan = selectVersionsToPrune({
        versions: versions.map(toPrunable),
        history: args.history,
        pinnedVersion: pinned,
        protectedVersions: args.keep,
      });
      for (const decision of plan.delete) {
        await compute.requestImageVersionDeletion({ ...args.definition, versionName: decision.name });
      }
      return plan.delete.map((decision) => decision.name);
    },

    [ACTIVITY.restoreNode]: async (input) => {
      const args = parseInput(
        ACTIVITY.restoreNode,
        z.object({
          cluster: Name,
          node: Name,
          runTag: Name,
          prior: z.object({ unschedulable: z.boolean(), scaleDownDisabled: z.string().nullable() }),
        }),
        input,
      );
      const { kube } = await clusterOf(args.cluster);
      await restoreNode(kube, args.node, args.runTag, args.prior);
      return null;
    },
  };
}

/**
 * Gives the node back exactly as it was, but only if this run holds it (its marker annotation): a
 * node we never touched, or one another run holds, is left alone. Idempotent; a deleted node is fine.
 */
export async function restoreNode(
  kube: ClusterGateway,
  nodeName: string,
  runTag: string,
  prior: NodePriorState,
): Promise<void> {
  let node;
  try {
    node = await kube.getNode(nodeName);
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  if (node.annotations[CAPTURE_RUN_ANNOTATION] !== runTag) return;
  if (!prior.unschedulable && node.unschedulable) {
    await kube.setNodeUnschedulable(nodeName, false);
  }
  // The marker goes last: while it is there, a retry of this activity still knows the node is ours.
  await kube.patchNodeAnnotations(nodeName, {
    [SCALE_DOWN_DISABLED_ANNOTATION]: prior.scaleDownDisabled,
    [CAPTURE_RUN_ANNOTATION]: null,
  });
}

/** One round of `kubectl drain`: evict what may be evicted now, report what is left. */
export async function drainStep(
  kube: ClusterGateway,
  nodeName: string,
  options: { gracePeriodSeconds: number | undefined; deleteEmptyDirData: boolean; force: boolean },
): Promise<DrainStepResult> {
  const pods = await kube.listPodsOnNode(nodeName);
  const daemonSets = new Map<string, boolean>();
  for (const pod of pods) {
    const controller = pod.controller;
    if (controller?.kind === 'DaemonSet') {
      const key = `${pod.namespace}/${controller.name}`;
      if (!daemonSets.has(key))
        daemonSets.set(key, await kube.daemonSetExists(pod.namespace, controller.name));
    }
  }
  const plan = planDrain(pods, options, (namespace, name) => daemonSets.get(`${namespace}/${name}`) ?? true);
  if (plan.blockers.length > 0) {
    return {
      done: false,
      evictedNow: 0,
      pending: [],
      blockers: plan.blockers.map((b) => ({ pod: `${b.pod.namespace}/${b.pod.name}`, reason: b.reason })),
      warnings: plan.warnings,
    };
  }
  const pending: DrainStepResult['pending'][number][] = [];
  let evictedNow = 0;
  for (const pod of plan.evict) {
    const podName = `${pod.namespace}/${pod.name}`;
    if (pod.terminating) {
      pending.push({ pod: podName, state: 'terminating' });
      continue;
    }
    const outcome = await kube.evictPod(pod.namespace, pod.name, options.gracePeriodSeconds);
    switch (outcome.kind) {
      case 'evicted':
        evictedNow += 1;
        pending.push({ pod: podName, state: 'terminating' });
        break;
      case 'gone':
        break;
      case 'blocked':
        pending.push({ pod: podName, state: 'blocked', message: outcome.message });
        break;
    }
  }
  return { done: pending.length === 0, evictedNow, pending, blockers: [], warnings: plan.warnings };
}

function toPrunable(version: ImageVersion): PrunableImageVersion {
  const state = version.provisioningState;
  const known = ['Creating', 'Updating', 'Failed', 'Succeeded', 'Deleting', 'Migrating'] as const;
  const provisioningState = (known as readonly string[]).includes(state)
    ? (state as PrunableImageVersion['provisioningState'])
    : 'Updating'; // unknown states are treated as in flight: never deleted
  return {
    name: version.ref.versionName,
    provisioningState,
    excludeFromLatest: version.excludeFromLatest,
    ...(version.publishedAt === undefined ? {} : { publishedAt: version.publishedAt }),
  };
}

function pinnedVersionName(modelImageId: string): string | undefined {
  const match = /\/versions\/([^/]+)$/i.exec(modelImageId);
  return match?.[1];
}
