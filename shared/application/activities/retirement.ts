/**
 * Activities of retirement (docs/retirement.md): plan, surge, see the surge's node, record and
 * clear the retirement on the pool lease, count what a window retired. The node itself is held, drained
 * and given back with the donor's activities (node.ts); instances are deleted with the canary's.
 */
import { z } from 'zod';

import { definedOnly } from '../../domain/optional.js';
import { planPoolRetirement, poolsDueForRetirement } from '../pool-retirement.js';
import {
  clearRetirementRecord,
  countRetired,
  noteSurgeInstance,
  observeSurge,
  readRetirementLeftover,
  startSurge,
} from '../retirement-surge.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, LeaseInput, Name, ScaleSetRefInput, Tags } from './inputs.js';

const planRetirementActivity = defineActivity(
  'planRetirement',
  ClusterInput.extend({
    pool: Name,
    generation: Name.optional(),
    inPlaceOfCanaries: z.number().int().min(1).max(10).optional(),
    keep: z
      .array(z.object({ node: Name, why: z.string().min(1).max(500) }))
      .max(50)
      .optional(),
    afterRejectedCanary: z.boolean().optional(),
    /** The model as the run's read just before saw it (keep-size): not read again. */
    model: z
      .object({
        scaleSet: ScaleSetRefInput,
        capacity: z.number().int().min(0).optional(),
        tags: Tags,
      })
      .optional(),
  }),
  async (deps, input) =>
    planPoolRetirement(
      await deps.cluster(input.cluster),
      input.pool,
      definedOnly({
        generation: input.generation,
        inPlaceOfCanaries: input.inPlaceOfCanaries,
        keep: input.keep,
        afterRejectedCanary: input.afterRejectedCanary,
        model: input.model,
      }),
      deps.now(),
    ),
);

const startRetirementSurge = defineActivity(
  'startRetirementSurge',
  ClusterInput.extend({
    scaleSet: ScaleSetRefInput,
    fence: FenceInput,
    surge: z.boolean(),
    record: z.object({
      run: Name,
      node: Name,
      instanceId: Name,
      priorCapacity: z.number().int().min(0),
      startedAt: z.string().min(1),
      surgeInstanceId: Name.optional(),
    }),
    /** The instance ids the run's plan listed: the baseline, unread, when no surge is asked. */
    plannedInstanceIds: z.array(Name).optional(),
  }),
  async (deps, input) =>
    startSurge(
      await deps.cluster(input.cluster),
      input.fence,
      input.scaleSet,
      {
        run: input.record.run,
        node: input.record.node,
        instanceId: input.record.instanceId,
        priorCapacity: input.record.priorCapacity,
        startedAt: input.record.startedAt,
        ...definedOnly({ surgeInstanceId: input.record.surgeInstanceId }),
      },
      input.surge,
      deps.now(),
      input.plannedInstanceIds,
    ),
);

const observeRetirementSurge = defineActivity(
  'observeRetirementSurge',
  ClusterInput.extend({ scaleSet: ScaleSetRefInput, baseline: z.array(Name) }),
  async (deps, input) => observeSurge(await deps.cluster(input.cluster), input.scaleSet, input.baseline),
);

const noteRetirementSurge = defineActivity(
  'noteRetirementSurge',
  ClusterInput.extend({ fence: FenceInput, instanceId: Name }),
  async (deps, input) =>
    noteSurgeInstance(await deps.cluster(input.cluster), input.fence, input.instanceId, deps.now()),
);

const clearRetirement = defineActivity(
  'clearRetirement',
  ClusterInput.extend({ fence: FenceInput }),
  async (deps, input) => clearRetirementRecord(await deps.cluster(input.cluster), input.fence, deps.now()),
);

const countRetiredNode = defineActivity(
  'countRetiredNode',
  ClusterInput.extend({ fence: FenceInput, openedAt: z.string().min(1), node: Name }),
  async (deps, input) =>
    countRetired(await deps.cluster(input.cluster), input.fence, input.openedAt, input.node, deps.now()),
);

/** A dead run's retirement record on the lease, and what of it is left (the reaper's view). */
const readRetirementLeftoverActivity = defineActivity(
  'readRetirementLeftover',
  ClusterInput.extend({ lease: LeaseInput, scaleSet: ScaleSetRefInput, holder: Name }),
  async (deps, input) =>
    readRetirementLeftover(await deps.cluster(input.cluster), input.lease, input.scaleSet, input.holder),
);

const listPoolsDueForRetirement = defineActivity(
  'listPoolsDueForRetirement',
  ClusterInput,
  async (deps, input) => poolsDueForRetirement(await deps.cluster(input.cluster), deps.now()),
);

export const RETIREMENT_ACTIVITIES = {
  listPoolsDueForRetirement,
  readRetirementLeftover: readRetirementLeftoverActivity,
  planRetirement: planRetirementActivity,
  startRetirementSurge,
  observeRetirementSurge,
  noteRetirementSurge,
  clearRetirement,
  countRetiredNode,
} as const;
