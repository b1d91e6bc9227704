/**
 * Activities of the pools' PoolImagePolicy objects (docs/pool-policy.md): the timer tick's reading of
 * them (which pools have one, which actions their specs ask for), an action's record, and the status
 * written after every run, retirement and tick. The writes never fail: a status that could not be
 * written comes back as a value, for the log, and the run goes on. A cluster that is not configured is
 * refused like in every other activity (the input is wrong, nothing was tried).
 */
import { z } from 'zod';

import { messageOf } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { planPolicyTick, recordPolicyAction, writePolicyStatus } from '../pool-policy-sync.js';
import { defineActivity } from './activity.js';
import { ClusterInput, Name } from './inputs.js';

const ActionKind = z.enum(['rollback', 'retire']);

const planPolicyTickActivity = defineActivity('planPolicyTick', ClusterInput, async (deps, input) =>
  planPolicyTick(await deps.cluster(input.cluster), deps.now()),
);

const recordPolicyActionActivity = defineActivity(
  'recordPolicyAction',
  ClusterInput.extend({
    pool: Name,
    kind: ActionKind,
    record: z.object({
      target: Name,
      observedGeneration: z.number().int().min(0),
      state: z.enum(['Running', 'Done', 'Failed']),
      startedAt: z.string().min(1),
      finishedAt: z.string().min(1).optional(),
      message: z.string().max(2000).optional(),
    }),
    /** The record the write replaces, as the tick read it (null: none): see recordPolicyAction. */
    replaces: z
      .object({ target: Name, state: z.enum(['Running', 'Done', 'Failed']), startedAt: z.string().min(1) })
      .nullable(),
  }),
  async (deps, input) => {
    // An unknown cluster is the caller's error, not a write that failed: it fails the activity.
    const handle = await deps.cluster(input.cluster);
    try {
      const { record } = input;
      return await recordPolicyAction(
        handle,
        input.pool,
        input.kind,
        {
          target: record.target,
          observedGeneration: record.observedGeneration,
          state: record.state,
          startedAt: record.startedAt,
          ...definedOnly({ finishedAt: record.finishedAt, message: record.message }),
        },
        input.replaces,
        deps.now(),
      );
    } catch (error) {
      return { kind: 'failed' as const, reason: messageOf(error) };
    }
  },
);

const writePolicyStatusActivity = defineActivity(
  'writePolicyStatus',
  ClusterInput.extend({
    pool: Name,
    lastRun: z
      .object({
        runId: Name,
        kind: z.string().max(40).optional(),
        outcome: z.string().min(1).max(40),
        step: z.string().max(80).optional(),
        at: z.string().max(40).optional(),
        reason: z.string().max(2000).optional(),
      })
      .optional(),
  }),
  async (deps, input) => {
    const handle = await deps.cluster(input.cluster);
    try {
      const run = input.lastRun;
      return await writePolicyStatus(
        handle,
        input.pool,
        deps.now(),
        run === undefined
          ? undefined
          : {
              runId: run.runId,
              outcome: run.outcome,
              ...definedOnly({ kind: run.kind, step: run.step, at: run.at, reason: run.reason }),
            },
      );
    } catch (error) {
      return { kind: 'failed' as const, reason: messageOf(error) };
    }
  },
);

export const POLICY_ACTIVITIES = {
  planPolicyTick: planPolicyTickActivity,
  recordPolicyAction: recordPolicyActionActivity,
  writePolicyStatus: writePolicyStatusActivity,
} as const;
