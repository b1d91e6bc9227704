/**
 * The input schemas of the orchestrations: what `defineOrchestration` (functions/orchestration.ts) checks
 * once, when a run starts. Their output types are the contracts' (refresh-contracts.ts), checked where
 * each orchestration is defined. Not strict: a field an older starter still sends is dropped, not refused.
 */
import { z } from 'zod';

import { RebootNotice } from '../../shared/application/reboot-notices.js';

const PoolTarget = { cluster: z.string(), pool: z.string() };

/** Why the run started (timer, http, reboot-notice, cli) and the starter's randomness for its run ids. */
const Started = { trigger: z.string(), runSeed: z.string().optional() };

export const RefreshPoolInputSchema = z.object({
  ...PoolTarget,
  node: z.string().optional(),
  dryRun: z.boolean().optional(),
  ...Started,
});

export const RefreshClusterInputSchema = z.object({
  cluster: z.string(),
  dryRun: z.boolean().optional(),
  maxParallelPools: z.number().int().min(1).optional(),
  handOverPools: z.boolean().optional(),
  ...Started,
});

export const RefreshSubscriptionInputSchema = z.object({
  subscriptionId: z.string(),
  clusters: z.array(z.string()).min(1),
  maxPoolsPerSubscription: z.number().int().min(1),
  maxParallelPools: z.number().int().min(1),
  ...Started,
});

export const RollbackPoolInputSchema = z.object({
  ...PoolTarget,
  to: z.string().optional(),
  dryRun: z.boolean().optional(),
  ...Started,
});

export const RetirePoolInputSchema = z.object({
  ...PoolTarget,
  generation: z.string().min(1).optional(),
  dryRun: z.boolean().optional(),
  ...Started,
});

export const ReleasePoolInputSchema = z.object({
  ...PoolTarget,
  dryRun: z.boolean().optional(),
  force: z.boolean().optional(),
  holderGone: z.object({ runId: z.string(), host: z.string(), pid: z.number().int() }).optional(),
  ...Started,
});

export const ReapClusterInputSchema = z.object({ cluster: z.string(), ...Started });

export const RetireClusterInputSchema = z.object({ cluster: z.string(), ...Started });

export const ClusterStatusInputSchema = z.object({ cluster: z.string() });

export const PoolSignalInputSchema = z.object({
  ...PoolTarget,
  quietPeriodSeconds: z.number(),
  minimumReadySeconds: z.number(),
  /** The notice that started the debounce. */
  notice: RebootNotice,
  /** Randomness from the starter, mixed into the run ids of the refreshes (RefreshPoolInput.runSeed). */
  runSeed: z.string().optional(),
});
