/** Activities on the donor node and its prep pod (the cluster side of a capture). */
import { z } from 'zod';

import { drainStep, protectNode, readNodePriorState, restoreNode } from '../donor-node.js';
import { defineActivity } from './activity.js';
import { ClusterInput, Name } from './inputs.js';

const NodeInput = ClusterInput.extend({ node: Name });
const PrepPodInput = ClusterInput.extend({ namespace: Name, name: Name });

const readNodeState = defineActivity('readNodeState', NodeInput, async (deps, input) =>
  readNodePriorState((await deps.cluster(input.cluster)).kube, input.node),
);

const protectNodeActivity = defineActivity(
  'protectNode',
  NodeInput.extend({ runTag: Name }),
  async (deps, input) => protectNode((await deps.cluster(input.cluster)).kube, input.node, input.runTag),
);

const drainNodeStep = defineActivity(
  'drainNodeStep',
  NodeInput.extend({
    gracePeriodSeconds: z.number().int().min(0).optional(),
    deleteEmptyDirData: z.boolean(),
    force: z.boolean(),
  }),
  async (deps, input) =>
    drainStep((await deps.cluster(input.cluster)).kube, input.node, {
      gracePeriodSeconds: input.gracePeriodSeconds,
      deleteEmptyDirData: input.deleteEmptyDirData,
      force: input.force,
    }),
);

const startDiskPrep = defineActivity(
  'startDiskPrep',
  NodeInput.extend({ namespace: Name, podName: Name, image: z.string().min(1), script: z.string().min(1) }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await kube.createPrepPod({
      namespace: input.namespace,
      name: input.podName,
      nodeName: input.node,
      image: input.image,
      script: input.script,
      labels: {
        'app.kubernetes.io/name': 'vmss-prototype-prep',
        'app.kubernetes.io/managed-by': 'vmss-prototype',
      },
    });
  },
);

/** The prep pod's phase; `Absent` when it does not exist (not yet, or already deleted). */
const readPrepPod = defineActivity('readPrepPod', PrepPodInput, async (deps, input) => {
  const { kube } = await deps.cluster(input.cluster);
  return (await kube.getPodPhase(input.namespace, input.name)) ?? 'Absent';
});

const deletePrepPod = defineActivity('deletePrepPod', PrepPodInput, async (deps, input) => {
  const { kube } = await deps.cluster(input.cluster);
  await kube.deletePod(input.namespace, input.name);
});

const restoreNodeActivity = defineActivity(
  'restoreNode',
  NodeInput.extend({
    runTag: Name,
    prior: z.object({ unschedulable: z.boolean(), scaleDownDisabled: z.string().nullable() }),
  }),
  async (deps, input) =>
    restoreNode((await deps.cluster(input.cluster)).kube, input.node, input.runTag, input.prior),
);

export const NODE_ACTIVITIES = {
  readNodeState,
  protectNode: protectNodeActivity,
  drainNodeStep,
  startDiskPrep,
  readPrepPod,
  deletePrepPod,
  restoreNode: restoreNodeActivity,
} as const;
