/**
 * A pool's image policy declared in its cluster (docs/pool-policy.md): the PoolImagePolicy object, named
 * after its pool, whose spec overrides that pool's settings and asks for one-shot actions (a rollback, a
 * generation's retirement). This module holds the decisions about it: which values a pool runs with
 * (the precedence of the object over the app's settings), what the merged values may not be, and which
 * of the actions the spec asks for are still to do. Pure.
 */
import type { CanaryAfterFail, CanaryAfterPass, CanaryPolicy } from './canary.js';
import type { CaptureModeSetting } from './capture-mode.js';
import type { GenerationPolicy, TaintEffect } from './generations.js';
import { definedOnly } from './optional.js';
import type { RetirementPolicy, RetirementSettings } from './retirement.js';
import type { ScheduleWindow } from './schedule-window.js';

/** Where the resource lives in the API (infra/kubernetes/pool-image-policy.crd.yaml). */
export const POOL_POLICY_RESOURCE = {
  group: 'vmss-prototype.io',
  version: 'v1alpha1',
  plural: 'poolimagepolicies',
  kind: 'PoolImagePolicy',
} as const;

/** `vmss-prototype.io/v1alpha1`. */
export const POOL_POLICY_API_VERSION = `${POOL_POLICY_RESOURCE.group}/${POOL_POLICY_RESOURCE.version}`;

/**
 * A validated spec, in the product's units (durations in seconds). Every field but `paused` is optional:
 * absent, the pool keeps what the app's settings say.
 */
export interface PoolPolicySpec {
  /** No new refresh or scheduled retirement starts while true; actions asked for still run. */
  readonly paused: boolean;
  readonly captureMode?: CaptureModeSetting;
  readonly pinVersion?: boolean;
  readonly canary?: {
    readonly enabled?: boolean;
    readonly instances?: number;
    readonly soakSeconds?: number;
    readonly deadlineSeconds?: number;
    readonly afterPass?: CanaryAfterPass;
    readonly afterFail?: CanaryAfterFail;
  };
  readonly generations?: {
    readonly maxGenerationsBehind?: number;
    readonly taintEffect?: TaintEffect;
  };
  readonly retirement?: {
    readonly enabled?: boolean;
    readonly olderThanSeconds?: number;
    readonly keepGenerations?: number;
    readonly budget?: RetirementPolicy['budget'];
    readonly windows?: readonly ScheduleWindow[];
    readonly surge?: boolean;
    readonly drainTimeoutSeconds?: number;
  };
  /** One-shot: roll the pool back to this version. */
  readonly rollbackTo?: string;
  /** One-shot: retire the nodes of this generation (`unknown`: the pool's original image). */
  readonly retire?: { readonly generation: string };
}

/** What is wrong with an object: the field (`spec.canary.soak`) and a sentence ending with the fix. */
export interface PolicyProblem {
  readonly field: string;
  readonly message: string;
}

/** The per-pool values a policy can override, as the app's settings resolve them for the pool. */
export interface PoolPolicyValues {
  readonly captureMode: CaptureModeSetting;
  readonly pinVersion: boolean;
  readonly canary: CanaryPolicy;
  readonly generations: GenerationPolicy;
  readonly retirement: RetirementSettings;
}

/** What the rest of the app's settings allow a policy to choose (the prep image is the app's). */
export interface PoolPolicyContext {
  /** `capture.prepImage` is set: the modes that run pods can be chosen. */
  readonly hasPrepImage: boolean;
}

export type AppliedPolicy =
  | {
      readonly ok: true;
      readonly values: PoolPolicyValues;
      /** The spec fields that replaced a setting (`spec.canary.soak`), for the status. */
      readonly overridden: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

/**
 * The precedence: each field the spec sets replaces the pool's setting (retirement `windows` as a whole
 * list); fields it leaves out keep the settings' values, which already hold the cluster's defaults and
 * the pool's overrides. The merged values must still make sense together: a problem names the spec field
 * to change and how.
 */
export function applyPoolPolicy(
  base: PoolPolicyValues,
  spec: PoolPolicySpec,
  context: PoolPolicyContext,
): AppliedPolicy {
  const overridden: string[] = [];
  const pick = <T>(field: string, value: T | undefined, fallback: T): T => {
    if (value === undefined) return fallback;
    overridden.push(field);
    return value;
  };
  const captureMode = pick('spec.capture.mode', spec.captureMode, base.captureMode);
  const pinVersion = pick('spec.pinVersion', spec.pinVersion, base.pinVersion);
  const c = spec.canary ?? {};
  const canary: CanaryPolicy = {
    ...base.canary,
    enabled: pick('spec.canary.enabled', c.enabled, base.canary.enabled),
    instances: pick('spec.canary.instances', c.instances, base.canary.instances),
    soakSeconds: pick('spec.canary.soak', c.soakSeconds, base.canary.soakSeconds),
    deadlineSeconds: pick('spec.canary.deadline', c.deadlineSeconds, base.canary.deadlineSeconds),
    afterPass: pick('spec.canary.afterPass', c.afterPass, base.canary.afterPass),
    afterFail: pick('spec.canary.afterFail', c.afterFail, base.canary.afterFail),
  };
  const g = spec.generations ?? {};
  const maxGenerationsBehind = pick(
    'spec.generations.maxGenerationsBehind',
    g.maxGenerationsBehind,
    base.generations.maxGenerationsBehind,
  );
  const generations: GenerationPolicy = {
    taintEffect: pick('spec.generations.taintEffect', g.taintEffect, base.generations.taintEffect),
    ...definedOnly({ maxGenerationsBehind }),
  };
  const r = spec.retirement ?? {};
  const b = base.retirement;
  const olderThanSeconds = pick('spec.retirement.olderThan', r.olderThanSeconds, b.policy.olderThanSeconds);
  const keepGenerations = pick(
    'spec.retirement.keepGenerations',
    r.keepGenerations,
    b.policy.keepGenerations,
  );
  const retirement: RetirementSettings = {
    enabled: pick('spec.retirement.enabled', r.enabled, b.enabled),
    policy: {
      ...definedOnly({ olderThanSeconds, keepGenerations }),
      budget: pick('spec.retirement.budget', r.budget, b.policy.budget),
      windows: pick('spec.retirement.windows', r.windows, b.policy.windows),
      surge: pick('spec.retirement.surge', r.surge, b.policy.surge),
    },
    drainTimeoutSeconds: pick('spec.retirement.drainTimeout', r.drainTimeoutSeconds, b.drainTimeoutSeconds),
  };

  const problems: PolicyProblem[] = [];
  if (captureMode !== 'run-command' && !context.hasPrepImage) {
    problems.push({
      field: 'spec.capture.mode',
      message:
        `capture mode ${captureMode} runs prep pods, but the app's settings have no capture.prepImage ` +
        '(the cluster captures with run-command): set spec.capture.mode to run-command, or set capture.prepImage in the settings',
    });
  }
  if (canary.deadlineSeconds <= canary.soakSeconds) {
    const field =
      c.deadlineSeconds === undefined && c.soakSeconds !== undefined
        ? 'spec.canary.soak'
        : 'spec.canary.deadline';
    problems.push({
      field,
      message:
        `the canary deadline (${canary.deadlineSeconds}s) must be longer than its soak (${canary.soakSeconds}s): ` +
        'each canary must join, turn Ready and stay Ready for the soak within it; lengthen spec.canary.deadline or shorten spec.canary.soak',
    });
  }
  if (retirement.enabled && olderThanSeconds === undefined && keepGenerations === undefined) {
    problems.push({
      field: 'spec.retirement.enabled',
      message:
        'scheduled retirement needs to know which generations are due: set spec.retirement.olderThan (e.g. "14d") or ' +
        'spec.retirement.keepGenerations (e.g. 2), or set spec.retirement.enabled to false',
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, values: { captureMode, pinVersion, canary, generations, retirement }, overridden };
}

/** The one-shot actions of a spec. */
export type PolicyActionKind = 'rollback' | 'retire';

/** What the app recorded of an action in the object's status (`status.actions.<kind>`). */
export interface PolicyActionRecord {
  /** The version rolled back to, or the generation retired: the spec value it acted on. */
  readonly target: string;
  /** The object's `metadata.generation` when the action started. */
  readonly observedGeneration: number;
  readonly state: 'Running' | 'Done' | 'Failed';
  readonly startedAt: string;
  readonly finishedAt?: string;
  /** The run's outcome and what it did, in words. */
  readonly message?: string;
}

/**
 * The record a write of `status.actions.<kind>` replaces, as its writer read it (null: none). Two ticks
 * may act on one object at once (two deployments, a clock that runs ahead): each write is a
 * compare-and-set against the record its tick read, so the first tick to end an action records it and
 * tells it in an Event, and a tick that finds the record changed under it leaves it alone.
 */
export interface PolicyRecordRef {
  readonly target: string;
  readonly state: PolicyActionRecord['state'];
  readonly startedAt: string;
}

export function recordRefOf(record: PolicyActionRecord | undefined): PolicyRecordRef | null {
  return record === undefined
    ? null
    : { target: record.target, state: record.state, startedAt: record.startedAt };
}

/** The record is the one the writer read (both none, or the same target, state and start). */
export function isRecordReferred(
  record: PolicyActionRecord | undefined,
  ref: PolicyRecordRef | null,
): boolean {
  if (record === undefined || ref === null) return record === undefined && ref === null;
  return record.target === ref.target && record.state === ref.state && record.startedAt === ref.startedAt;
}

/** An action the spec asks for that is not recorded as started for the same target. */
export interface PendingPolicyAction {
  readonly kind: PolicyActionKind;
  readonly target: string;
}

/**
 * The actions still to do, rollback first. An action is keyed by its target, so it runs once per value
 * the spec asks for: a Done or Failed record for the same target means it was acted on (a failed one
 * waits for a new value). A Running record is continued: a retirement paced by its budget over several
 * ticks, or an action whose tick died before it recorded the end (the next tick finds it done, or does
 * it; each of its steps is idempotent). An action the spec no longer asks for is not pending.
 */
export function pendingPolicyActions(
  spec: PoolPolicySpec,
  recorded: Readonly<Partial<Record<PolicyActionKind, PolicyActionRecord>>>,
): PendingPolicyAction[] {
  const wanted: PendingPolicyAction[] = [];
  if (spec.rollbackTo !== undefined) wanted.push({ kind: 'rollback', target: spec.rollbackTo });
  if (spec.retire !== undefined) wanted.push({ kind: 'retire', target: spec.retire.generation });
  return wanted.filter((action) => {
    const record = recorded[action.kind];
    return record?.target !== action.target || record.state === 'Running';
  });
}

/**
 * Records to keep in the status: an action whose field left the spec is forgotten, so that asking for the
 * same target again later acts again.
 */
export function keptActionRecords(
  spec: PoolPolicySpec | undefined,
  recorded: Readonly<Partial<Record<PolicyActionKind, PolicyActionRecord>>>,
): Partial<Record<PolicyActionKind, PolicyActionRecord>> {
  // An invalid spec says nothing about what it asks for: the records stay until it is valid again.
  if (spec === undefined) return { ...recorded };
  const kept: Partial<Record<PolicyActionKind, PolicyActionRecord>> = {};
  if (spec.rollbackTo !== undefined && recorded.rollback !== undefined) kept.rollback = recorded.rollback;
  if (spec.retire !== undefined && recorded.retire !== undefined) kept.retire = recorded.retire;
  return kept;
}

/** A PoolImagePolicy as the API server has it: the spec and status as stored, not yet validated. */
export interface PoolPolicyObject {
  /** Its pool's name. */
  readonly name: string;
  readonly uid: string;
  /** `metadata.generation`: raised by the API server on every change of the spec. */
  readonly generation: number;
  readonly resourceVersion: string;
  readonly createdAt?: string;
  readonly spec: unknown;
  readonly status: unknown;
}

/** An Event about a PoolImagePolicy (`kubectl describe` lists it). */
export interface PolicyEvent {
  readonly policy: Pick<PoolPolicyObject, 'name' | 'uid'>;
  readonly type: 'Normal' | 'Warning';
  /** UpperCamelCase: `InvalidSpec`, `RolledBack`, `Retired`, `ActionFailed`. */
  readonly reason: string;
  readonly message: string;
  /**
   * What makes the event one of a kind (the spec's generation and the action): the same key is the same
   * event, recorded once however often a step runs.
   */
  readonly key: string;
  /** RFC 3339. */
  readonly at: string;
}

/** A pool's policy as it applies: the object, its validated spec, what is wrong, what it replaced. */
export interface PolicyEvaluation {
  readonly object: PoolPolicyObject;
  /** The spec once it passed the schema (even if the merged values then have problems). */
  readonly spec?: PoolPolicySpec;
  /** Empty when the policy is valid; otherwise it starts nothing for its pool. */
  readonly problems: readonly PolicyProblem[];
  /** The spec fields that replaced a setting. */
  readonly overridden: readonly string[];
  /** The actions recorded in its status. */
  readonly actions: Readonly<Partial<Record<PolicyActionKind, PolicyActionRecord>>>;
}

/** One sentence on what is wrong with a policy, for a refusal, a condition and an Event. */
export function describePolicyProblems(name: string, problems: readonly PolicyProblem[]): string {
  return (
    `PoolImagePolicy ${name} is invalid, so nothing starts for its pool until it is fixed: ` +
    problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ')
  );
}
