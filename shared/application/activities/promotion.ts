/** Activities of rollback and node generations (issue 13). */
import { z } from 'zod';

import { definedOnly } from '../../domain/optional.js';
import { applyNodeGenerations, generationsReportOf } from '../generations.js';
import { planPoolRollback, pointModelAt, verifyPoolRollback } from '../rollback.js';
import { defineActivity } from './activity.js';
import { ClusterInput, DefinitionRefInput, ImageVersionInput, Name, ScaleSetRefInput } from './inputs.js';

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

/** Labels every node of the pool with its generation (and taints older ones when configured); freshness. */
const applyNodeGenerationsActivity = defineActivity(
  'applyNodeGenerations',
  ClusterInput.extend({
    pool: Name,
    modelImageId: z.string().min(1).optional(),
    versions: z.array(ImageVersionInput).optional(),
  }),
  async (deps, input) =>
    generationsReportOf(
      await applyNodeGenerations(await deps.cluster(input.cluster), input.pool, deps.now(), {
        ...definedOnly({ modelImageId: input.modelImageId, versions: input.versions }),
      }),
    ),
);

export const PROMOTION_ACTIVITIES = {
  planRollback: planRollbackActivity,
  pointModelAt: pointModelAtActivity,
  verifyRollback: verifyRollbackActivity,
  applyNodeGenerations: applyNodeGenerationsActivity,
} as const;
