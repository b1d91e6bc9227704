/**
 * The status the app writes on a pool's PoolImagePolicy (docs/pool-policy.md), built from the same facts
 * and verdicts as `vmss-prototype status`, `GET …/status` and the status page (pool-status.ts read them,
 * status-page/view-model.ts judges them), so `kubectl get poolimagepolicies` never disagrees with them.
 * Its values change only when the pool does (ages are times, which kubectl shows as ages): writing it
 * again on every tick changes nothing. Pure; it carries nothing secret (names, versions, times, reasons).
 */
import type { PolicyActionKind, PolicyActionRecord } from '../domain/pool-policy.js';
import { releaseCommand } from '../domain/run-state.js';
import type { PoolStatus } from './pool-status.js';
import { poolViewOf } from './status-page/view-model.js';

export type ConditionType = 'Valid' | 'Fresh' | 'Refreshing' | 'Held' | 'Degraded';

/** A condition as Kubernetes API conventions have it (metav1.Condition). */
export interface PolicyCondition {
  readonly type: ConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration: number;
}

/** One word for the printer column: what needs a look first. */
export type PolicyState =
  'Invalid' | 'Held' | 'Refreshing' | 'Paused' | 'Degraded' | 'Fresh' | 'Ageing' | 'Stale' | 'Unknown';

export interface PolicyStatusInput {
  readonly status: PoolStatus;
  /** The spec generation the status describes. */
  readonly observedGeneration: number;
  /** The action records to write (pool-policy.ts keeps or forgets them). */
  readonly actions: Readonly<Partial<Record<PolicyActionKind, PolicyActionRecord>>>;
  /** The conditions the object has now: a condition that did not change keeps its transition time. */
  readonly previousConditions: readonly {
    readonly type: string;
    readonly status: string;
    readonly lastTransitionTime?: string;
  }[];
  /**
   * The last run of the product on the pool: the run that just ended (its writer knows its outcome and
   * step), else what the object recorded before, else the newest run the pool's history shows.
   */
  readonly lastRun?: LastRun;
  readonly now: Date;
}

/** A run as the status records it. */
export interface LastRun {
  readonly runId: string;
  /** `refresh`, `rollback`, `retire`. */
  readonly kind?: string;
  readonly outcome: string;
  /** The step it ended at (a failure's step). */
  readonly step?: string;
  /** When it ended (RFC 3339). */
  readonly at?: string;
  readonly reason?: string;
}

/** The object's `status`, as the CRD's schema describes it. */
export function policyStatusOf(input: PolicyStatusInput): Record<string, unknown> {
  const { status, observedGeneration } = input;
  const view = poolViewOf(status);
  const policy = status.imagePolicy;
  const valid = policy?.valid ?? true;
  const counts = new Map<string, number>();
  for (const node of status.nodes) {
    const key = node.generation ?? 'unlabelled';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const current = status.currentVersion?.name;
  const previous = status.history.versions.find(
    (version) => version.state === 'usable' && version.name !== current,
  )?.name;
  const lastRun = input.lastRun ?? lastRunOfHistory(status);
  const held = view.heldNodes;
  const leftBehind = held.filter((node) => node.state === 'left behind');
  const conditions: Omit<PolicyCondition, 'lastTransitionTime' | 'observedGeneration'>[] = [
    valid
      ? { type: 'Valid', status: 'True', reason: 'Valid', message: validMessage(status) }
      : {
          type: 'Valid',
          status: 'False',
          reason: 'InvalidSpec',
          message: (policy?.problems ?? [])
            .map((problem) => `${problem.field}: ${problem.message}`)
            .join('; '),
        },
    view.freshness.label === 'unknown'
      ? { type: 'Fresh', status: 'Unknown', reason: 'NoPatchTime', message: status.freshness.detail }
      : {
          type: 'Fresh',
          status: view.freshness.label === 'fresh' ? 'True' : 'False',
          reason:
            view.freshness.label === 'fresh'
              ? 'Fresh'
              : view.freshness.label === 'ageing'
                ? 'Ageing'
                : 'Stale',
          message: `new nodes boot with patches from ${status.freshness.since ?? 'an unknown time'}: ${status.freshness.detail}`,
        },
    view.run.state === 'running'
      ? {
          type: 'Refreshing',
          status: 'True',
          reason: 'RunHoldsPool',
          message: `run ${view.run.runId ?? ''} holds the pool${view.run.since === undefined ? '' : ` since ${view.run.since}`}`,
        }
      : { type: 'Refreshing', status: 'False', reason: 'Idle', message: 'no run holds the pool' },
    leftBehind.length > 0 || view.run.state === 'interrupted'
      ? {
          type: 'Held',
          status: 'True',
          reason: 'LeftBehind',
          message:
            `${leftBehind.map((node) => `node ${node.node} (run ${node.runId})`).join(', ') || `what run ${view.run.runId ?? ''} holds`} ` +
            `was left behind by a run that is not running; the way out: ${view.run.wayOut ?? releaseCommand(status.pool)}`,
        }
      : {
          type: 'Held',
          status: 'False',
          reason: held.length > 0 ? 'HeldByRunningRun' : 'NothingHeld',
          message:
            held.length > 0
              ? `${held.map((node) => `node ${node.node}`).join(', ')} held by the running run ${held[0]?.runId ?? ''}`
              : 'no node of the pool is held by a run',
        },
    degraded(status, view.eligibility.state === 'refused' ? view.eligibility.reason : undefined),
  ];
  const retirement = status.convergence.retirement;
  return {
    observedGeneration,
    pool: `${status.cluster}/${status.pool}`,
    scaleSet: status.scaleSet,
    state: stateOf(valid, policy?.paused ?? false, view, conditions),
    ...(current === undefined ? {} : { currentVersion: current }),
    ...(previous === undefined ? {} : { previousVersion: previous }),
    ...(status.currentVersion?.sourceNode === undefined
      ? {}
      : {
          donor: {
            node: status.currentVersion.sourceNode,
            ...(status.currentVersion.patchedAt === undefined
              ? {}
              : { patchedAt: status.currentVersion.patchedAt }),
          },
        }),
    freshness: {
      label: view.freshness.label,
      ...(status.freshness.since === undefined ? {} : { since: status.freshness.since }),
      basis: status.freshness.basis,
    },
    generations: [...counts.entries()]
      .map(([version, nodes]) => ({ version, nodes, current: version === current }))
      .sort((a, b) => Number(b.current) - Number(a.current) || b.version.localeCompare(a.version)),
    nodes: `${current === undefined ? 0 : (counts.get(current) ?? 0)}/${status.nodes.length}`,
    ...(lastRun === undefined
      ? {}
      : {
          lastRun: {
            ...lastRun,
            ...(lastRun.reason === undefined ? {} : { reason: lastRun.reason.slice(0, 500) }),
          },
        }),
    heldNodes: held.map((node) => ({
      node: node.node,
      runId: node.runId,
      ...(node.since === undefined ? {} : { since: node.since }),
      state: node.state,
      wayOut: releaseCommand(status.pool),
    })),
    retirement: {
      enabled: retirement.enabled,
      ...(retirement.windowOpen === undefined ? {} : { windowClosesAt: retirement.windowOpen.closesAt }),
      ...(retirement.nextWindowAt === undefined ? {} : { nextWindowAt: retirement.nextWindowAt }),
    },
    overridden: [...(policy?.overridden ?? [])],
    actions: { ...input.actions },
    conditions: conditions.map((condition) => {
      const before = input.previousConditions.find((candidate) => candidate.type === condition.type);
      return {
        ...condition,
        lastTransitionTime:
          before?.status === condition.status && before.lastTransitionTime !== undefined
            ? before.lastTransitionTime
            : input.now.toISOString(),
        observedGeneration,
      };
    }),
  };
}

/** The newest run the pool's history records that is not running (runs that built a version). */
function lastRunOfHistory(status: PoolStatus): LastRun | undefined {
  const run = status.history.runs.find((candidate) => candidate.outcome !== 'running');
  if (run === undefined) return undefined;
  const at = run.endedAt ?? run.endedBy ?? run.startedAt;
  const step = run.steps.at(-1)?.step;
  return {
    runId: run.runId,
    kind: 'refresh',
    outcome: run.outcome,
    ...(step === undefined ? {} : { step }),
    ...(at === undefined ? {} : { at }),
    ...(run.reason === undefined ? {} : { reason: run.reason }),
  };
}

function validMessage(status: PoolStatus): string {
  const overridden = status.imagePolicy?.overridden ?? [];
  return overridden.length === 0
    ? 'the spec is valid; it overrides no setting of the pool'
    : `the spec is valid; it overrides ${overridden.join(', ')}`;
}

function degraded(
  status: PoolStatus,
  refusal: string | undefined,
): Omit<PolicyCondition, 'lastTransitionTime' | 'observedGeneration'> {
  if (refusal !== undefined) return { type: 'Degraded', status: 'True', reason: 'Refused', message: refusal };
  if (status.canary?.state === 'damaged') {
    return {
      type: 'Degraded',
      status: 'True',
      reason: 'DamagedCanaryRecord',
      message: status.canary.problem,
    };
  }
  const last = status.history.runs.find((run) => run.outcome !== 'running' && run.outcome !== 'building');
  if (
    last !== undefined &&
    (last.outcome === 'failed' || last.outcome === 'rejected' || last.outcome === 'interrupted')
  ) {
    return {
      type: 'Degraded',
      status: 'True',
      reason:
        last.outcome === 'failed'
          ? 'LastRunFailed'
          : last.outcome === 'rejected'
            ? 'LastRunRejected'
            : 'LastRunInterrupted',
      message: `run ${last.runId} ${last.outcome}${last.reason === undefined ? '' : `: ${last.reason.slice(0, 500)}`}`,
    };
  }
  return {
    type: 'Degraded',
    status: 'False',
    reason: 'AsExpected',
    message: 'the last run did not fail and the pool is not refused',
  };
}

function stateOf(
  valid: boolean,
  paused: boolean,
  view: ReturnType<typeof poolViewOf>,
  conditions: readonly { readonly type: ConditionType; readonly status: string }[],
): PolicyState {
  if (!valid) return 'Invalid';
  const is = (type: ConditionType): boolean => conditions.some((c) => c.type === type && c.status === 'True');
  if (is('Held')) return 'Held';
  if (is('Refreshing')) return 'Refreshing';
  if (paused) return 'Paused';
  if (is('Degraded')) return 'Degraded';
  switch (view.freshness.label) {
    case 'fresh':
      return 'Fresh';
    case 'ageing':
      return 'Ageing';
    case 'stale':
      return 'Stale';
    case 'unknown':
      return 'Unknown';
  }
}
