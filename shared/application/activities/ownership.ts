/**
 * Activities of pool ownership: the pool lease (acquire, renew, release) and what a pool's runs hold or left
 * behind (read from the cluster and Azure for the reaper, `status` and `release`).
 */
import { z } from 'zod';

import { definedOnly } from '../../domain/optional.js';
import { surveyClusterHoldings } from '../cluster-holdings.js';
import { poolScopeAndModel, readPoolHoldings } from '../pool-holdings.js';
import { acquirePoolLease, releasePoolLease, renewPoolLease } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import { ClusterInput, ImageVersionInput, LeaseInput, Name, ScaleSetRefInput } from './inputs.js';

const LeaseRunInput = ClusterInput.extend({ lease: LeaseInput, runId: Name });

const acquirePoolLeaseActivity = defineActivity(
  'acquirePoolLease',
  LeaseRunInput.extend({
    purpose: ClusterInput.extend({ pool: Name, instanceId: Name, purpose: Name }),
    force: z.boolean().optional(),
    plannedAt: z.string().datetime().optional(),
  }),
  async (deps, input) => {
    const outcome = await acquirePoolLease(
      (await deps.cluster(input.cluster)).kube,
      input.lease,
      {
        runId: input.runId,
        runner: deps.runner,
        purpose: input.purpose,
        ...definedOnly({ force: input.force, plannedAt: input.plannedAt }),
      },
      deps.now(),
    );
    // Every run that waits on a pool holds its lease first: the hold carries how this deployment's waits
    // are timed (a simulator's scale), so that the orchestration reads it from history, never from settings.
    const scale = deps.waitScale;
    return outcome.kind === 'acquired' && scale !== undefined && scale !== 1
      ? { ...outcome, waitScale: scale }
      : outcome;
  },
);

const renewPoolLeaseActivity = defineActivity('renewPoolLease', LeaseRunInput, async (deps, input) =>
  renewPoolLease((await deps.cluster(input.cluster)).kube, input.lease, input.runId, deps.now(), deps.runner),
);

const releasePoolLeaseActivity = defineActivity('releasePoolLease', LeaseRunInput, async (deps, input) =>
  releasePoolLease((await deps.cluster(input.cluster)).kube, input.lease, input.runId, deps.now()),
);

/** Where the pool lives and what its runs hold or left: lease, held nodes, prep pods, snapshots, versions. */
const readPoolHoldingsActivity = defineActivity(
  'readPoolHoldings',
  ClusterInput.extend({
    pool: Name,
    /** The definition's versions as the run's plan listed them (`absent`: none yet): not listed again. */
    listedVersions: z.union([z.array(ImageVersionInput), z.literal('absent')]).optional(),
  }),
  async (deps, input) => {
    const handle = await deps.cluster(input.cluster);
    const { scope, model, listings } = await poolScopeAndModel(handle, input.pool);
    return readPoolHoldings(handle, scope, model, undefined, undefined, {
      ...listings,
      ...definedOnly({ definitionVersions: input.listedVersions }),
    });
  },
);

/** The reaper's survey: every pool's holdings, shared listings read once; which pools have leftovers. */
const surveyClusterHoldingsActivity = defineActivity(
  'surveyClusterHoldings',
  ClusterInput.extend({
    /** The pools to survey and where their scale sets are; absent: every pool of the cluster. */
    pools: z.array(z.object({ name: Name, scaleSet: ScaleSetRefInput })).optional(),
  }),
  async (deps, input) => surveyClusterHoldings(await deps.cluster(input.cluster), deps.now(), input.pools),
);

export const OWNERSHIP_ACTIVITIES = {
  acquirePoolLease: acquirePoolLeaseActivity,
  renewPoolLease: renewPoolLeaseActivity,
  releasePoolLease: releasePoolLeaseActivity,
  readPoolHoldings: readPoolHoldingsActivity,
  surveyClusterHoldings: surveyClusterHoldingsActivity,
} as const;
