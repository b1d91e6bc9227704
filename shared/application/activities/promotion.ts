/** Activities of rollback and node generations. */
import { z } from 'zod';

import { messageOf } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { applyNodeGenerations, generationsReportOf, recordPoolGenerations } from '../generations.js';
import { planPoolRollback, pointModelAt, verifyPoolRollback } from '../rollback.js';
import { defineActivity } from './activity.js';
import {
  ClusterInput,
  DefinitionRefInput,
  FenceInput,
  ImageVersionInput,
  Name,
  ScaleSetRefInput,
} from './inputs.js';

const planRollbackActivity = defineActivity(
  'planRollback',
  ClusterInput.extend({ pool: Name, to: Name.optional() }),
  async (deps, input) => planPoolRollback(await deps.cluster(input.cluster), input.pool, input.to),
);

const pointModelAtActivity = defineActivity(
  'pointModelAt',
  ClusterInput.extend({
    scaleSet: ScaleSetRefInput,
    imageId: z.string().min(1),
    etag: z.string().optional(),
  }),
  async (deps, input) =>
    pointModelAt(await deps.cluster(input.cluster), input.scaleSet, {
      imageId: input.imageId,
      ...definedOnly({ etag: input.etag }),
    }),
);

const verifyRollbackActivity = defineActivity(
  'verifyRollback',
  ClusterInput.extend({
    scaleSet: ScaleSetRefInput,
    definition: DefinitionRefInput,
    modelImageId: z.string().min(1),
    to: Name,
    hide: z.array(Name),
  }),
  async (deps, input) => verifyPoolRollback(await deps.cluster(input.cluster), input),
);

/**
 * Labels every node of the pool with its generation (and taints older ones when configured); freshness.
 * With the run's `fence` (a run that holds the pool), also records the nodes per generation on the pool
 * lease for the status page: a failure to record is a warning, never the step's failure (the labels are
 * on the nodes; the next run records again).
 */
const applyNodeGenerationsActivity = defineActivity(
  'applyNodeGenerations',
  ClusterInput.extend({
    pool: Name,
    modelImageId: z.string().min(1).optional(),
    versions: z.array(ImageVersionInput).optional(),
    fence: FenceInput.optional(),
  }),
  async (deps, input) => {
    const handle = await deps.cluster(input.cluster);
    const result = await applyNodeGenerations(handle, input.pool, deps.now(), {
      ...definedOnly({ modelImageId: input.modelImageId, versions: input.versions }),
    });
    const report = generationsReportOf(result);
    if (input.fence === undefined) return report;
    try {
      await recordPoolGenerations(handle, input.fence, result, deps.now());
      return report;
    } catch (error) {
      return {
        ...report,
        warnings: [
          `recording nodes per generation on the pool lease: ${messageOf(error)} (the next run records again)`,
        ],
      };
    }
  },
);

export const PROMOTION_ACTIVITIES = {
  planRollback: planRollbackActivity,
  pointModelAt: pointModelAtActivity,
  verifyRollback: verifyRollbackActivity,
  applyNodeGenerations: applyNodeGenerationsActivity,
} as const;
