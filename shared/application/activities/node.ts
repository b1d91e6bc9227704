/**
 * Activities on the donor node and its prep pod (the cluster side of a capture). Every write to the donor
 * is fenced by the pool lease: it happens only while the lease still names the run (a run resumed after
 * another runner took the pool over touches nothing).
 */
import { z } from 'zod';

import { ignoreNotFound } from '../../domain/errors.js';
import { runPodLabels } from '../../domain/ownership.js';
import type { PowerOffSignals } from '../../domain/power-off-signal.js';
import { drainStep, protectNode, readNodePriorState, restoreNode } from '../donor-node.js';
import { checkFence } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, Name } from './inputs.js';

const NodeInput = ClusterInput.extend({ node: Name });
const PrepPodInput = ClusterInput.extend({ namespace: Name, name: Name });

const readNodeState = defineActivity('readNodeState', NodeInput, async (deps, input) =>
  readNodePriorState((await deps.cluster(input.cluster)).kube, input.node),
);

const PriorStateInput = z.object({ unschedulable: z.boolean(), scaleDownDisabled: z.string().nullable() });

const protectNodeActivity = defineActivity(
  'protectNode',
  NodeInput.extend({ prior: PriorStateInput, fence: FenceInput }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `holding node ${input.node}`, deps.now());
    await protectNode(kube, input.node, input.fence.runId, input.prior);
  },
);

const drainNodeStep = defineActivity(
  'drainNodeStep',
  NodeInput.extend({
    gracePeriodSeconds: z.number().int().min(0).optional(),
    deleteEmptyDirData: z.boolean(),
    force: z.boolean(),
    fence: FenceInput,
  }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `draining node ${input.node}`, deps.now());
    return drainStep(kube, input.node, {
      gracePeriodSeconds: input.gracePeriodSeconds,
      deleteEmptyDirData: input.deleteEmptyDirData,
      force: input.force,
    });
  },
);

const startDiskPrep = defineActivity(
  'startDiskPrep',
  NodeInput.extend({
    namespace: Name,
    podName: Name,
    image: z.string().min(1),
    script: z.string().min(1),
    fence: FenceInput,
  }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `creating prep pod ${input.podName}`, deps.now());
    await kube.pods.createPrepPod({
      namespace: input.namespace,
      name: input.podName,
      nodeName: input.node,
      image: input.image,
      script: input.script,
      // The run and the pool (lease) it belongs to: the reaper finds the pods of runs that are gone.
      labels: runPodLabels(input.fence),
    });
  },
);

/**
 * The one-shot pod that pulls the prep image on the donor before its cordon: unprivileged (the check
 * pod's manifest: no host namespaces, every capability dropped), it runs `true` and ends. Labelled as
 * a prep pod of the run, so the reaper deletes it when the run is gone.
 */
const startPrepImagePull = defineActivity(
  'startPrepImagePull',
  PrepPodInput.extend({ node: Name, image: z.string().min(1), fence: FenceInput }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `creating pod ${input.name} to pull the prep image`, deps.now());
    await kube.pods.createCheckPod({
      namespace: input.namespace,
      name: input.name,
      nodeName: input.node,
      image: input.image,
      command: ['sh', '-c', 'true'],
      args: [],
      env: [],
      // The pull itself is bounded by the run's wait (timing.ts POLL.prepImagePull).
      deadlineSeconds: 15 * 60,
      labels: runPodLabels(input.fence),
    });
  },
);

/** The prep image pull pod's phase (its outcome); `Absent` when it does not exist. */
const readPrepImagePull = defineActivity('readPrepImagePull', PrepPodInput, async (deps, input) => {
  const { kube } = await deps.cluster(input.cluster);
  return (await kube.pods.getOutcome(input.namespace, input.name))?.phase ?? 'Absent';
});

/** The prep pod's phase; `Absent` when it does not exist (not yet, or already deleted). */
const readPrepPod = defineActivity('readPrepPod', PrepPodInput, async (deps, input) => {
  const { kube } = await deps.cluster(input.cluster);
  return (await kube.pods.getPhase(input.namespace, input.name)) ?? 'Absent';
});

/**
 * What the cluster shows of the donor's guest going down (shared/domain/power-off-signal.ts): the prep
 * pod's phase and end, and the node's Ready condition (absent when the node is gone). Kubernetes reads
 * only: the power-off wait makes these instead of ARM reads until the guest is down.
 */
const readPowerOffSignals = defineActivity(
  'readPowerOffSignals',
  PrepPodInput.extend({ node: Name }),
  async (deps, input): Promise<PowerOffSignals> => {
    const { kube } = await deps.cluster(input.cluster);
    const outcome = await kube.pods.getOutcome(input.namespace, input.name);
    const node = await kube.nodes.get(input.node).catch(ignoreNotFound);
    const ready = node?.conditions.find((condition) => condition.type === 'Ready');
    const endedAt = outcome?.endedAt === undefined ? undefined : Date.parse(outcome.endedAt);
    const readySince =
      ready?.lastTransitionTime === undefined ? undefined : Date.parse(ready.lastTransitionTime);
    return {
      podPhase: outcome?.phase ?? 'Absent',
      ...(endedAt === undefined || Number.isNaN(endedAt) ? {} : { podEndedAtMs: endedAt }),
      ...(ready === undefined
        ? {}
        : {
            nodeReady: {
              status: ready.status,
              ...(readySince === undefined || Number.isNaN(readySince) ? {} : { sinceMs: readySince }),
            },
          }),
    };
  },
);

const deletePrepPod = defineActivity('deletePrepPod', PrepPodInput, async (deps, input) => {
  const { kube } = await deps.cluster(input.cluster);
  await kube.pods.delete(input.namespace, input.name);
});

/**
 * Gives the node back if run `runId` holds it (its marker), to the prior state given (the run's own
 * record) or, for the reaper, the one recorded on the node.
 */
const restoreNodeActivity = defineActivity(
  'restoreNode',
  NodeInput.extend({
    runId: Name,
    prior: z.union([PriorStateInput, z.literal('recorded-on-node')]),
  }),
  async (deps, input) =>
    restoreNode((await deps.cluster(input.cluster)).kube, input.node, input.runId, input.prior),
);

export const NODE_ACTIVITIES = {
  readNodeState,
  protectNode: protectNodeActivity,
  drainNodeStep,
  startDiskPrep,
  startPrepImagePull,
  readPrepImagePull,
  readPrepPod,
  readPowerOffSignals,
  deletePrepPod,
  restoreNode: restoreNodeActivity,
} as const;
