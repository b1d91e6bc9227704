/**
 * The pools' PoolImagePolicy objects applied to their configuration (docs/pool-policy.md): the app's
 * settings keep the connections and the defaults, a pool's object overrides its settings
 * (shared/domain/pool-policy.ts decides how), a pool without one runs exactly as its settings say. A
 * policy-aware handle is the cluster handle whose `poolConfiguration` answers with the policy applied;
 * every use case that decides what a pool runs with (planning, scheduled retirement, labelling, status)
 * reads the objects once per call and works on such a handle.
 */
import { z } from 'zod';

import { parsePoolPolicySpec, poolPolicyNameProblem } from '../config/pool-policy-spec.js';
import { definedOnly } from '../domain/optional.js';
import type {
  PolicyActionKind,
  PolicyActionRecord,
  PolicyEvaluation,
  PolicyProblem,
  PoolPolicyObject,
} from '../domain/pool-policy.js';
import { applyPoolPolicy, describePolicyProblems } from '../domain/pool-policy.js';
import type { ClusterHandle, PoolConfiguration } from './refresh-dependencies.js';

const ActionRecord = z.object({
  target: z.string(),
  observedGeneration: z.number().int(),
  state: z.enum(['Running', 'Done', 'Failed']),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  message: z.string().optional(),
});

/** What the app wrote in the status before (read leniently: a record it cannot read is no record). */
const RecordedStatus = z.looseObject({
  actions: z
    .looseObject({
      rollback: ActionRecord.optional().catch(undefined),
      retire: ActionRecord.optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
});

/** The actions the status records as started or done. */
export function recordedActions(status: unknown): Partial<Record<PolicyActionKind, PolicyActionRecord>> {
  const parsed = RecordedStatus.safeParse(status ?? {});
  if (!parsed.success) return {};
  const actions = parsed.data.actions ?? {};
  return definedOnly({ rollback: actions.rollback, retire: actions.retire });
}

/**
 * The pool's configuration with its policy applied. A policy whose spec or merged values are invalid
 * leaves the settings' values in place and carries its problems: planning refuses the pool, scheduled
 * retirement skips it, its actions wait (nothing starts for it).
 */
export function applyPolicyToConfiguration(
  base: PoolConfiguration,
  object: PoolPolicyObject | undefined,
): PoolConfiguration {
  if (object === undefined) return base;
  const actions = recordedActions(object.status);
  const invalid = (
    problems: readonly PolicyProblem[],
    spec?: PolicyEvaluation['spec'],
  ): PoolConfiguration => ({
    ...base,
    imagePolicy: { object, ...definedOnly({ spec }), problems, overridden: [], actions },
  });
  const nameProblem = poolPolicyNameProblem(object.name);
  if (nameProblem !== undefined) return invalid([nameProblem]);
  const parsed = parsePoolPolicySpec(object.spec);
  if (!parsed.ok) return invalid(parsed.problems);
  const applied = applyPoolPolicy(
    {
      captureMode: base.run.captureMode,
      pinVersion: base.run.pinVersion,
      canary: base.run.canary,
      generations: base.run.generations,
      retirement: base.run.retirement,
    },
    parsed.spec,
    { hasPrepImage: base.run.prepImage !== undefined },
  );
  if (!applied.ok) return invalid(applied.problems, parsed.spec);
  const paused = parsed.spec.paused;
  return {
    ...base,
    enabled: base.enabled && !paused,
    ...(paused && base.enabled
      ? {
          disabledReason: `paused by PoolImagePolicy ${object.name} (spec.paused: true); set spec.paused to false to resume`,
        }
      : {}),
    run: { ...base.run, ...applied.values },
    imagePolicy: { object, spec: parsed.spec, problems: [], overridden: applied.overridden, actions },
  };
}

/** Why the pool starts nothing because of its policy, when it is invalid. */
export function policyRefusalOf(configuration: PoolConfiguration): string | undefined {
  const policy = configuration.imagePolicy;
  if (policy === undefined || policy.problems.length === 0) return undefined;
  return describePolicyProblems(policy.object.name, policy.problems);
}

/** The handle, its pools' configuration answered with the given objects applied (by pool name). */
export function withPoolPolicies(
  handle: ClusterHandle,
  objects: ReadonlyMap<string, PoolPolicyObject>,
): ClusterHandle {
  if (objects.size === 0) return handle;
  const configuration = handle.configuration;
  return {
    ...handle,
    configuration: {
      ...configuration,
      // The object's own method keeps its `this` (a test's or the composition root's closure).
      poolConfiguration: (pool) =>
        applyPolicyToConfiguration(configuration.poolConfiguration(pool), objects.get(pool.name)),
    },
  };
}

/** The cluster's objects by name; none when the resource is not served (no CustomResourceDefinition). */
export async function readPoolPolicies(handle: ClusterHandle): Promise<Map<string, PoolPolicyObject>> {
  const listed = await handle.kube.poolPolicies.list();
  if (listed === 'not-installed') return new Map();
  return new Map(listed.map((object) => [object.name, object]));
}

/** A handle with every pool's policy applied: one list of the objects. */
export async function policyAwareHandle(handle: ClusterHandle): Promise<ClusterHandle> {
  return withPoolPolicies(handle, await readPoolPolicies(handle));
}

/** A handle with one pool's policy applied: one read of its object. */
export async function policyAwareHandleFor(handle: ClusterHandle, poolName: string): Promise<ClusterHandle> {
  const object = await handle.kube.poolPolicies.get(poolName);
  return object === undefined ? handle : withPoolPolicies(handle, new Map([[poolName, object]]));
}

/** A pool's policy as `status` shows it (CLI, HTTP, the page) and the object's own status repeats it. */
export interface PoolPolicyView {
  /** The object's name (its pool's). */
  readonly name: string;
  /** `metadata.generation` of the spec this view judged. */
  readonly generation: number;
  readonly valid: boolean;
  /** What is wrong, each naming its field and the fix; empty when valid. */
  readonly problems: readonly PolicyProblem[];
  readonly paused: boolean;
  /** The spec fields that replace a setting of the pool. */
  readonly overridden: readonly string[];
  /** The one-shot actions recorded as started or done. */
  readonly actions: Readonly<Partial<Record<PolicyActionKind, PolicyActionRecord>>>;
}

export function policyViewOf(configuration: PoolConfiguration): PoolPolicyView | undefined {
  const policy = configuration.imagePolicy;
  if (policy === undefined) return undefined;
  return {
    name: policy.object.name,
    generation: policy.object.generation,
    valid: policy.problems.length === 0,
    problems: policy.problems,
    paused: policy.spec?.paused ?? false,
    overridden: policy.overridden,
    actions: policy.actions,
  };
}
