/**
 * What the status page shows of a pool, decided once from the status facts (`vmss-prototype status --json`
 * prints the same facts): how fresh its image is, whether `plan` would refresh it, what its run is doing
 * (shared/domain/run-state.ts), which nodes runs hold and since when, and what each node's generation is.
 * The renderer only lays this out; the page never reaches a verdict of its own. Pure.
 */
import { describeGenerationState, type GenerationState } from '../../domain/generation-state.js';
import type { RunRecord } from '../../domain/pool-history.js';
import type { PoolStatus } from '../pool-status.js';

/** Below this patch age a pool is labelled fresh; below STALE_SECONDS ageing; stale above. */
export const FRESH_SECONDS = 7 * 86_400;
export const STALE_SECONDS = 30 * 86_400;

export type Tone = 'good' | 'warn' | 'bad' | 'info' | 'neutral';

export type FreshnessLabel = 'fresh' | 'ageing' | 'stale' | 'unknown';

/**
 * - `refreshable`: `plan` would refresh it now; `up-to-date`: no node has newer patches.
 * - `skipped`: `plan` leaves it (no eligible donor: e.g. every node is control-plane).
 * - `refused`: the scale set or the capture cannot be refreshed.
 * - `unplanned`: planning it failed, or the status was read without a plan (the scale set's verdict only).
 */
export type EligibilityState = 'refreshable' | 'up-to-date' | 'skipped' | 'refused' | 'unplanned';

export interface EligibilityView {
  readonly state: EligibilityState;
  readonly label: string;
  readonly tone: Tone;
  readonly reason?: string;
}

/** The pool's run now, or its last one: what the glance table says. */
export interface RunView {
  readonly state: 'running' | 'interrupted' | RunRecord['outcome'] | 'none';
  readonly label: string;
  readonly tone: Tone;
  readonly runId?: string;
  readonly since?: string;
  /** When it ended, or (`endedBy`) the moment it had ended by. */
  readonly endedAt?: string;
  readonly endedBy?: string;
  readonly detail?: string;
  /** The command that gives back what it left. */
  readonly wayOut?: string;
}

export interface HeldNodeView {
  readonly node: string;
  readonly runId: string;
  readonly since?: string;
  /** `running`: its run is running; `left behind`: its run is not (release gives it back). */
  readonly state: 'running' | 'left behind';
  readonly cordoned: boolean;
  readonly vm: string;
}

export interface NodeGenerationView {
  readonly node: string;
  readonly generation?: string;
  readonly state: GenerationState;
  /** `current`, `older, tainted`, `rejected v…`. */
  readonly label: string;
  readonly tone: Tone;
  readonly ready: boolean;
  readonly cordoned: boolean;
}

export interface PoolView {
  readonly pool: string;
  readonly freshness: { readonly label: FreshnessLabel; readonly tone: Tone; readonly ageSeconds?: number };
  readonly eligibility: EligibilityView;
  readonly run: RunView;
  readonly heldNodes: readonly HeldNodeView[];
  readonly nodes: readonly NodeGenerationView[];
  /** Nothing to do or see here: refused or skipped, nothing of ours, no run, no held node (collapsed). */
  readonly collapsed: boolean;
}

export function freshnessLabelOf(ageSeconds: number | undefined): FreshnessLabel {
  if (ageSeconds === undefined) return 'unknown';
  if (ageSeconds <= FRESH_SECONDS) return 'fresh';
  if (ageSeconds <= STALE_SECONDS) return 'ageing';
  return 'stale';
}

const FRESHNESS_TONE: Readonly<Record<FreshnessLabel, Tone>> = {
  fresh: 'good',
  ageing: 'warn',
  stale: 'bad',
  unknown: 'neutral',
};

export function eligibilityOf(pool: PoolStatus): EligibilityView {
  if (!pool.eligible) {
    return { state: 'refused', label: 'refused', tone: 'bad', reason: pool.refusal ?? 'no reason given' };
  }
  const plan = pool.plan;
  if (plan === undefined) {
    return {
      state: 'unplanned',
      label: 'not planned',
      tone: 'neutral',
      reason: 'the scale set is eligible; run `vmss-prototype plan` for what it would do with the nodes',
    };
  }
  switch (plan.outcome) {
    case 'planned':
      return { state: 'refreshable', label: 'yes, would refresh', tone: 'info', reason: plan.reason };
    case 'up-to-date':
      return { state: 'up-to-date', label: 'up to date', tone: 'good', reason: plan.reason };
    case 'skipped':
      return { state: 'skipped', label: 'skipped by plan', tone: 'warn', reason: plan.reason };
    case 'refused':
      return { state: 'refused', label: 'refused', tone: 'bad', reason: plan.reason };
    case 'not-planned':
      return { state: 'unplanned', label: 'planning failed', tone: 'bad', reason: plan.reason };
  }
}

const OUTCOME_TONE: Readonly<Record<RunRecord['outcome'], Tone>> = {
  running: 'info',
  interrupted: 'bad',
  refreshed: 'good',
  building: 'neutral',
  rejected: 'bad',
  abandoned: 'warn',
  failed: 'bad',
};

export function runOutcomeTone(outcome: RunRecord['outcome']): Tone {
  return OUTCOME_TONE[outcome];
}

export function runViewOf(pool: PoolStatus): RunView {
  const run = pool.run;
  if (run.kind === 'running') {
    return {
      state: 'running',
      label: run.cancelRequested === undefined ? 'running' : 'running, cancel requested',
      tone: 'info',
      runId: run.runId,
      ...(run.since === undefined ? {} : { since: run.since }),
    };
  }
  if (run.kind === 'interrupted') {
    return {
      state: 'interrupted',
      label: 'interrupted, left behind',
      tone: 'bad',
      runId: run.runId,
      ...(run.since === undefined ? {} : { since: run.since }),
      detail: run.detail,
      wayOut: run.wayOut,
    };
  }
  // Idle: the last run the history knows (the lease's record of the holder is the run that ended last).
  const last = pool.history.runs.find((candidate) => candidate.outcome !== 'running');
  if (last === undefined) return { state: 'none', label: 'none recorded', tone: 'neutral' };
  return {
    state: last.outcome,
    label: last.outcome === 'interrupted' ? 'interrupted, left behind' : last.outcome,
    tone: OUTCOME_TONE[last.outcome],
    runId: last.runId,
    ...(last.startedAt === undefined ? {} : { since: last.startedAt }),
    ...(last.endedAt === undefined ? {} : { endedAt: last.endedAt }),
    ...(last.endedBy === undefined ? {} : { endedBy: last.endedBy }),
    ...(last.reason === undefined ? {} : { detail: last.reason }),
  };
}

const GENERATION_TONE: Readonly<Record<GenerationState, Tone>> = {
  current: 'good',
  older: 'neutral',
  rejected: 'bad',
  abandoned: 'warn',
  original: 'neutral',
  unlabelled: 'neutral',
};

export function poolViewOf(pool: PoolStatus): PoolView {
  const label = freshnessLabelOf(pool.freshness.ageSeconds);
  const eligibility = eligibilityOf(pool);
  const run = runViewOf(pool);
  const interrupted = run.state === 'interrupted';
  const heldNodes = (pool.ownership?.heldNodes ?? []).map((node): HeldNodeView => ({
    node: node.node,
    runId: node.runId,
    ...(node.since === undefined ? {} : { since: node.since }),
    state: node.byLiveRun && !interrupted ? 'running' : 'left behind',
    cordoned: node.cordoned,
    vm: node.vm,
  }));
  const nodes = pool.nodes.map((node): NodeGenerationView => {
    const state = node.generationState ?? (node.generation === undefined ? 'unlabelled' : 'older');
    const words = describeGenerationState(state, node.generation);
    return {
      node: node.name,
      ...(node.generation === undefined ? {} : { generation: node.generation }),
      state,
      label: state === 'older' && node.olderGeneration ? 'older, tainted' : words,
      tone: GENERATION_TONE[state],
      ready: node.ready,
      cordoned: node.cordoned,
    };
  });
  const nothingOfOurs =
    pool.currentVersion === undefined &&
    pool.history.runs.length === 0 &&
    heldNodes.length === 0 &&
    run.state === 'none';
  return {
    pool: pool.pool,
    freshness: {
      label,
      tone: FRESHNESS_TONE[label],
      ...(pool.freshness.ageSeconds === undefined ? {} : { ageSeconds: pool.freshness.ageSeconds }),
    },
    eligibility,
    run,
    heldNodes,
    nodes,
    collapsed: (eligibility.state === 'refused' || eligibility.state === 'skipped') && nothingOfOurs,
  };
}
