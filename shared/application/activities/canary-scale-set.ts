/** Activities of the temporary canary scale set (canary-scale-set.phase.ts; docs/design.md#canary). */
import { z } from 'zod';

import { NEW_NODE_BOOTSTRAPS } from '../../domain/bootstrap-flavour.js';
import {
  type CanaryScaleSetCreated,
  type CanaryScaleSetView,
  createCanaryScaleSet,
  deleteCanaryScaleSet,
  readCanaryScaleSet,
} from '../canary-scale-set.js';
import { checkFence } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, Name, ScaleSetRefInput } from './inputs.js';

const ScaleSetInput = ClusterInput.extend({ scaleSet: ScaleSetRefInput });

/** Creates the canary scale set from the pool's model (`scaleSet`), fenced by the pool lease. */
const createCanaryScaleSetActivity = defineActivity(
  'createCanaryScaleSet',
  ScaleSetInput.extend({
    versionId: z.string().min(1),
    newNodes: z.enum(NEW_NODE_BOOTSTRAPS),
    keepExtensionTypes: z.array(z.string()),
    runId: Name,
    canaries: z.number().int().min(1),
    fence: FenceInput,
  }),
  async (deps, input): Promise<CanaryScaleSetCreated> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(
      kube,
      input.fence,
      `creating the canary scale set of ${input.scaleSet.name}`,
      deps.now(),
    );
    return createCanaryScaleSet(compute, {
      source: input.scaleSet,
      versionId: input.versionId,
      newNodes: input.newNodes,
      keepExtensionTypes: input.keepExtensionTypes,
      runId: input.runId,
      canaries: input.canaries,
    });
  },
);

/** Whether the canary scale set exists, its state and its instances (and with `nodes`, their nodes). */
const readCanaryScaleSetActivity = defineActivity(
  'readCanaryScaleSet',
  ScaleSetInput.extend({ nodes: z.boolean().optional() }),
  async (deps, input): Promise<CanaryScaleSetView> =>
    readCanaryScaleSet(await deps.cluster(input.cluster), input.scaleSet, {
      ...(input.nodes === undefined ? {} : { nodes: input.nodes }),
    }),
);

/**
 * Deletes the canary scale set of `runId` and says whether it is gone. Not fenced: giving back (a run
 * whose lease was taken over still removes what it made; a scale set without the run's tags is never touched).
 */
const deleteCanaryScaleSetActivity = defineActivity(
  'deleteCanaryScaleSet',
  ScaleSetInput.extend({
    runId: Name,
    /** The run created it (deleteCanaryScaleSet): the deletion is asked for without a read first. */
    created: z.literal(true).optional(),
  }),
  async (deps, input): Promise<{ readonly gone: boolean }> => {
    const { compute } = await deps.cluster(input.cluster);
    return deleteCanaryScaleSet(compute, input.scaleSet, input.runId, {
      ...(input.created === true ? { created: true } : {}),
    });
  },
);

export const CANARY_SCALE_SET_ACTIVITIES = {
  createCanaryScaleSet: createCanaryScaleSetActivity,
  readCanaryScaleSet: readCanaryScaleSetActivity,
  deleteCanaryScaleSet: deleteCanaryScaleSetActivity,
} as const;
