/**
 * What the app writes on the pools' PoolImagePolicy objects (docs/pool-policy.md): the status after every
 * run, retirement and timer tick, the one-shot actions' records, and the Events `kubectl describe` shows.
 * Each write reads the object, builds what it should hold and writes it only when it differs, with the
 * resourceVersion read (a concurrent change is read again): running it twice is running it once. A
 * status write never fails a run: its failure comes back as a value, for the log.
 */
import { isDeepStrictEqual } from 'node:util';

import { messageOf } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import type {
  PendingPolicyAction,
  PolicyActionKind,
  PolicyActionRecord,
  PolicyRecordRef,
  PoolPolicyObject,
} from '../domain/pool-policy.js';
import {
  describePolicyProblems,
  isRecordReferred,
  keptActionRecords,
  pendingPolicyActions,
  recordRefOf,
} from '../domain/pool-policy.js';
import { findPool, listPoolsOfCluster, ownGroupPool } from './pool-lookup.js';
import {
  applyPolicyToConfiguration,
  policyViewOf,
  readPoolPolicies,
  recordedActions,
  withPoolPolicies,
} from './pool-policies.js';
import { type LastRun, policyStatusOf } from './pool-policy-status.js';
import { readPoolStatus } from './pool-status.js';
import type { ClusterHandle } from './refresh-dependencies.js';

/** Tries of a status write that finds the object changed since it was read. */
const WRITE_ATTEMPTS = 3;

/** A status write's result: never an exception. */
export type PolicyWrite =
  | { readonly kind: 'written' | 'unchanged' }
  | { readonly kind: 'no-policy' }
  /** Another tick changed the action's record since this one read it: nothing written, no Event. */
  | { readonly kind: 'superseded'; readonly found?: string }
  | { readonly kind: 'failed'; readonly reason: string };

/** An action the tick starts, or finds done. */
export interface TickAction extends PendingPolicyAction {
  readonly pool: string;
  /** The object's generation the action is started for. */
  readonly observedGeneration: number;
  /** A tick that died recorded it Running, and the pool is already where it asked (nothing to run). */
  readonly alreadyDone?: string;
  /** When an earlier tick started it (a Running record continued), else absent: it starts now. */
  readonly startedAt?: string;
  /** The action's record as the tick read it: its first write replaces this one or nothing. */
  readonly replaces: PolicyRecordRef | null;
}

export interface PolicyTickPlan {
  /** The pools that have a PoolImagePolicy: their status is written at the end of the tick. */
  readonly pools: readonly string[];
  readonly actions: readonly TickAction[];
}

/**
 * The timer tick's reading of the cluster's PoolImagePolicy objects: which pools have one and which
 * actions their specs ask for. An invalid object asks for nothing (its status and Event say why); an
 * object named after no pool is told so in its own status.
 */
export async function planPolicyTick(handle: ClusterHandle, now: Date): Promise<PolicyTickPlan> {
  const objects = await readPoolPolicies(handle);
  if (objects.size === 0) return { pools: [], actions: [] };
  const pools = await listPoolsOfCluster(handle);
  const withPolicies = withPoolPolicies(handle, objects);
  const planned: string[] = [];
  const actions: TickAction[] = [];
  for (const object of objects.values()) {
    const pool = pools.find((candidate) => candidate.name === object.name);
    if (pool === undefined) {
      await tellNoPool(
        handle,
        object,
        pools.map((candidate) => candidate.name),
        now,
      );
      continue;
    }
    planned.push(pool.name);
    const configuration = withPolicies.configuration.poolConfiguration(pool);
    const policy = configuration.imagePolicy;
    if (policy?.spec === undefined || policy.problems.length > 0) continue;
    for (const action of pendingPolicyActions(policy.spec, policy.actions)) {
      const record = policy.actions[action.kind];
      let alreadyDone: string | undefined;
      if (action.kind === 'rollback' && record?.state === 'Running' && record.target === action.target) {
        const status = await readPoolStatus(withPolicies, pool.name, now);
        if (status.currentVersion?.name === action.target) {
          alreadyDone = `rolled back to ${action.target} (found done after an interrupted tick)`;
        }
      }
      const continued = record?.state === 'Running' && record.target === action.target;
      actions.push({
        ...action,
        pool: pool.name,
        observedGeneration: continued ? record.observedGeneration : object.generation,
        replaces: recordRefOf(record),
        ...definedOnly({ alreadyDone, startedAt: continued ? record.startedAt : undefined }),
      });
    }
  }
  return { pools: planned.sort(), actions };
}

/**
 * Records an action's start or end in `status.actions`, leaving the rest of the status as it is; an end
 * is also an Event on the object. Only over the record `replaces` names (what the writer read): a record
 * another tick changed meanwhile stays, and the write says `superseded`. Never throws.
 */
export async function recordPolicyAction(
  handle: ClusterHandle,
  pool: string,
  kind: PolicyActionKind,
  record: PolicyActionRecord,
  replaces: PolicyRecordRef | null,
  now: Date,
): Promise<PolicyWrite> {
  try {
    let found: PolicyActionRecord | undefined;
    const written = await writeStatus(handle, pool, (object) => {
      const actions = recordedActions(object.status);
      found = actions[kind];
      // Written already (a retried write whose answer was lost) is not superseded: it is written.
      if (!isRecordReferred(found, replaces) && !isDeepStrictEqual(found, record)) return undefined;
      const before = isRecord(object.status) ? object.status : {};
      return { ...before, actions: { ...actions, [kind]: record } };
    });
    if (written.kind === 'superseded') {
      return { kind: 'superseded', found: found === undefined ? 'no record' : describeRecord(found) };
    }
    if (written.kind !== 'no-policy' && record.state !== 'Running') {
      const object = await handle.kube.poolPolicies.get(pool);
      if (object !== undefined) {
        await handle.kube.poolPolicies.recordEvent({
          policy: object,
          type: record.state === 'Done' ? 'Normal' : 'Warning',
          reason: record.state === 'Failed' ? 'ActionFailed' : kind === 'rollback' ? 'RolledBack' : 'Retired',
          message: `${kind} ${record.target}: ${record.message ?? record.state.toLowerCase()}`,
          key: `action/${object.uid}/${kind}/${record.target}/${record.startedAt}/${record.state}`,
          at: now.toISOString(),
        });
      }
    }
    return written;
  } catch (error) {
    return { kind: 'failed', reason: `recording the ${kind} of pool ${pool}: ${messageOf(error)}` };
  }
}

/**
 * Writes the pool's status on its PoolImagePolicy from what `status` reads now (pool-policy-status.ts);
 * `lastRun` is the run that just ended, when the writer is one. An invalid spec gets its Event. Never
 * throws: a status write must not fail the run that asked for it.
 */
export async function writePolicyStatus(
  handle: ClusterHandle,
  poolName: string,
  now: Date,
  lastRun?: LastRun,
): Promise<PolicyWrite> {
  try {
    const first = await handle.kube.poolPolicies.get(poolName);
    if (first === undefined) return { kind: 'no-policy' };
    const status = await readPoolStatus(handle, poolName, now);
    // The configuration is per pool name (a discovered pool's is the cluster's): no node listing here.
    const base = handle.configuration.poolConfiguration(
      ownGroupPool(handle, poolName) ?? (await findPool(handle, poolName)),
    );
    const written = await writeStatus(handle, poolName, (object) => {
      const before = isRecord(object.status) ? object.status : {};
      // The object as read now (a write may have raced readPoolStatus's read of it).
      const configuration = applyPolicyToConfiguration(base, object);
      return policyStatusOf({
        status: { ...status, ...definedOnly({ imagePolicy: policyViewOf(configuration) }) },
        observedGeneration: object.generation,
        actions: keptActionRecords(configuration.imagePolicy?.spec, recordedActions(object.status)),
        previousConditions: conditionsOf(before),
        ...definedOnly({ lastRun: lastRun ?? lastRunOf(before) }),
        now,
      });
    });
    const policy = status.imagePolicy;
    if (policy !== undefined && !policy.valid) {
      await handle.kube.poolPolicies.recordEvent({
        policy: first,
        type: 'Warning',
        reason: 'InvalidSpec',
        message: describePolicyProblems(first.name, policy.problems),
        key: `invalid/${first.uid}/${policy.generation}`,
        at: now.toISOString(),
      });
    }
    return written;
  } catch (error) {
    return {
      kind: 'failed',
      reason: `writing the status of pool ${poolName}'s PoolImagePolicy: ${messageOf(error)}`,
    };
  }
}

/**
 * Reads the object, builds its new status, writes it if it differs; a concurrent change is read again.
 * A build that returns undefined declines to write over what it found: `superseded`.
 */
async function writeStatus(
  handle: ClusterHandle,
  name: string,
  build: (object: PoolPolicyObject) => Record<string, unknown> | undefined,
): Promise<PolicyWrite> {
  for (let attempt = 1; ; attempt += 1) {
    const object = await handle.kube.poolPolicies.get(name);
    if (object === undefined) return { kind: 'no-policy' };
    const status = build(object);
    if (status === undefined) return { kind: 'superseded' };
    if (isDeepStrictEqual(status, object.status)) return { kind: 'unchanged' };
    const written = await handle.kube.poolPolicies.replaceStatus(name, status, object.resourceVersion);
    if (written === 'gone') return { kind: 'no-policy' };
    if (written !== 'conflict') return { kind: 'written' };
    if (attempt >= WRITE_ATTEMPTS) {
      return {
        kind: 'failed',
        reason: `the object kept changing while its status was written (${WRITE_ATTEMPTS} tries)`,
      };
    }
  }
}

/** An object named after no pool of the cluster: its status and an Event say so. */
async function tellNoPool(
  handle: ClusterHandle,
  object: PoolPolicyObject,
  pools: readonly string[],
  now: Date,
): Promise<void> {
  const message =
    `cluster ${handle.configuration.name} has no pool ${object.name} (its pools: ${pools.join(', ') || 'none'}): ` +
    'name the object after the pool it is for';
  await writeStatus(handle, object.name, (current) => ({
    observedGeneration: current.generation,
    state: 'Invalid',
    conditions: [
      {
        type: 'Valid',
        status: 'False',
        reason: 'NoSuchPool',
        message,
        lastTransitionTime:
          conditionsOf(isRecord(current.status) ? current.status : {}).find(
            (condition) => condition.type === 'Valid' && condition.status === 'False',
          )?.lastTransitionTime ?? now.toISOString(),
        observedGeneration: current.generation,
      },
    ],
  }));
  await handle.kube.poolPolicies.recordEvent({
    policy: object,
    type: 'Warning',
    reason: 'NoSuchPool',
    message,
    key: `no-pool/${object.uid}/${object.generation}`,
    at: now.toISOString(),
  });
}

function describeRecord(record: PolicyActionRecord): string {
  return `${record.state} for ${record.target} since ${record.startedAt}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function conditionsOf(
  status: Record<string, unknown>,
): { type: string; status: string; lastTransitionTime?: string }[] {
  const conditions = status['conditions'];
  if (!Array.isArray(conditions)) return [];
  return conditions.filter(isRecord).map((condition) => ({
    type: String(condition['type']),
    status: String(condition['status']),
    ...(typeof condition['lastTransitionTime'] === 'string'
      ? { lastTransitionTime: condition['lastTransitionTime'] }
      : {}),
  }));
}

function lastRunOf(status: Record<string, unknown>): LastRun | undefined {
  const run = status['lastRun'];
  if (!isRecord(run) || typeof run['runId'] !== 'string' || typeof run['outcome'] !== 'string')
    return undefined;
  const text = (key: string): string | undefined => (typeof run[key] === 'string' ? run[key] : undefined);
  return {
    runId: run['runId'],
    outcome: run['outcome'],
    ...definedOnly({ kind: text('kind'), step: text('step'), at: text('at'), reason: text('reason') }),
  };
}
