/**
 * What the retire-pool orchestration takes and reports (docs/retirement.md). Plain JSON: it
 * crosses durable boundaries and is shown by the CLI, the HTTP API and the status page.
 */
import type { PoolTarget } from './pool-plan.js';

export interface RetirePoolInput extends PoolTarget {
  /**
   * `retire --generation V`: every node of this generation, whatever the age and keep rules and the
   * windows (the budget and surge still apply). Absent: the pool's scheduled retirement policy.
   */
  readonly generation?: string;
  /** List what would happen, node by node; change nothing. */
  readonly dryRun?: boolean;
  readonly trigger: string;
  /** As RefreshPoolInput.runSeed: mixed into the run id (the run holds the pool's lease). */
  readonly runSeed?: string;
}

/**
 * What became (or would become) of one node of the pool:
 * - `retired`: drained and its instance deleted (a replacement joined first when surge is on);
 * - `would-retire`: a dry run's answer for a node that is due and within the budget;
 * - `waiting`: due, but past this window's budget (or the pool's capacity without surge);
 * - `kept`: due, but a mark keeps it (`detail` says which);
 * - `given-back`: its drain did not finish in time (a PodDisruptionBudget, an unreplicated pod), so it
 *   was uncordoned and left as it was;
 * - `stays`: not due (the newest generation, or within the policy).
 */
export type RetirementNodeOutcome = 'retired' | 'would-retire' | 'waiting' | 'kept' | 'given-back' | 'stays';

export interface RetirementNodeLine {
  readonly node: string;
  readonly generation: string;
  readonly outcome: RetirementNodeOutcome;
  /** Why it is due, what keeps it, or what blocked its drain. */
  readonly detail: string;
  /** The node that joined in its place (surge), once known. */
  readonly replacement?: string;
}

/**
 * - `retired`: the run retired at least one node (others may have been given back: see `nodes`);
 * - `planned`: a dry run;
 * - `nothing-due`: no node is due, or every due node is kept or waiting;
 * - `closed`: outside every retirement window (`nextWindowAt`);
 * - `given-back`: every node the run tried was given back;
 * - `refused`: the pool cannot be retired (the reason says why and what to do);
 * - `busy`: another run holds the pool.
 */
export type RetirementOutcome =
  'retired' | 'planned' | 'nothing-due' | 'closed' | 'given-back' | 'refused' | 'busy';

export interface PoolRetirementResult extends PoolTarget {
  readonly outcome: RetirementOutcome;
  readonly reason: string;
  /** `retire --generation V`. */
  readonly generation?: string;
  /** The generation new nodes get. */
  readonly newest?: string;
  /** The pool's capacity the run kept (Ready nodes never fewer). */
  readonly capacity?: number;
  /** Nodes the window's budget allows, and how many it had retired before this run. */
  readonly budget?: { readonly allowed: number; readonly usedInWindow: number };
  /** The open window this run acted in (absent: no windows, or on demand). */
  readonly window?: { readonly openedAt: string; readonly closesAt: string };
  readonly nextWindowAt?: string;
  /** Every node of the pool, in the order retirement takes them. */
  readonly nodes: readonly RetirementNodeLine[];
}

export interface RetireClusterInput {
  readonly cluster: string;
  readonly trigger: string;
  readonly runSeed?: string;
}

/** The retirement timer's run over one cluster: each due pool's result, or why it did not run. */
export interface RetireClusterResult {
  readonly cluster: string;
  readonly pools: readonly (
    | PoolRetirementResult
    | {
        readonly cluster: string;
        readonly pool: string;
        readonly outcome: 'failed' | 'skipped';
        readonly reason: string;
      }
  )[];
  /** What the tick did with the actions the pools' PoolImagePolicy objects ask for (docs/pool-policy.md). */
  readonly policyActions?: readonly {
    readonly pool: string;
    readonly kind: 'rollback' | 'retire';
    readonly target: string;
    readonly state: 'Running' | 'Done' | 'Failed' | 'waiting';
    readonly message: string;
  }[];
  /** The objects could not be read this tick. */
  readonly policyFailure?: string;
}
