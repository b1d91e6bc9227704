/**
 * Prototype selection folded over a node list as it arrives, page by page: each pool member is judged
 * once, counted, and dropped unless it is among the best candidates (or the first verdicts shown, or a
 * node asked for by name). Memory is bounded by the limits, not by the pool's size, and the decision is
 * the one `selectPrototypeNodeForPool` takes over the whole list (same rules, same `concludeSelection`).
 */
import type { ClusterNode } from './cluster-node.js';
import {
  compareRanked,
  concludeSelection,
  type Evaluated,
  evaluateMember,
  type PoolSelectionInput,
  type PrototypeSelection,
  type RankedCandidate,
  rankedOf,
  type RejectionCode,
  type SelectionTally,
  waivedCandidateOf,
} from './prototype-selection.js';

export interface SelectionFoldLimits {
  /** Best candidates kept (and best patch-blocked nodes, for the fallback). At least minimumCandidates. */
  readonly candidates: number;
  /** Verdicts kept in list order; the best candidates' and named nodes' verdicts are kept besides. */
  readonly verdicts: number;
  /** Nodes whose verdict and object are always kept (a node an operator named). */
  readonly keepNames?: ReadonlySet<string>;
}

/** Enough for any plan and small in an orchestration's history. */
export const DEFAULT_FOLD_LIMITS: SelectionFoldLimits = { candidates: 10, verdicts: 100 };

interface Entry {
  readonly index: number;
  readonly node: ClusterNode;
  readonly evaluated: Evaluated;
  readonly ranked?: RankedCandidate;
}

/** One pool's running tally; build with `startPoolFold`, feed members with `foldPoolMember`. */
export interface PoolSelectionFold {
  readonly input: PoolSelectionInput;
  readonly limits: SelectionFoldLimits;
  members: number;
  readonly rejectionCounts: Partial<Record<RejectionCode, number>>;
  readonly blockedRules: Partial<Record<RejectionCode, number>>;
  candidateCount: number;
  blockedCount: number;
  best: Entry[];
  bestBlocked: Entry[];
  readonly firstVerdicts: Entry[];
  readonly named: Entry[];
}

export interface FoldedSelection {
  readonly selection: PrototypeSelection;
  /** Members whose verdict was not kept (the verdicts shown are the first ones and the best). */
  readonly verdictsOmitted: number;
  /** The kept nodes (best candidates and named nodes) by name: the donor's labels decide its flavour. */
  readonly nodes: ReadonlyMap<string, ClusterNode>;
}

export function startPoolFold(input: PoolSelectionInput, limits = DEFAULT_FOLD_LIMITS): PoolSelectionFold {
  return {
    input,
    limits: {
      ...limits,
      candidates: Math.max(1, limits.candidates, input.policy.minimumCandidates),
    },
    members: 0,
    rejectionCounts: {},
    blockedRules: {},
    candidateCount: 0,
    blockedCount: 0,
    best: [],
    bestBlocked: [],
    firstVerdicts: [],
    named: [],
  };
}

/** Judges one member of the pool (members in list order) and keeps it only if it may matter. */
export function foldPoolMember(fold: PoolSelectionFold, node: ClusterNode): void {
  const evaluated = evaluateMember(node, fold.input);
  const index = fold.members;
  fold.members += 1;
  const verdict = evaluated.verdict;
  let entry: Entry = { index, node, evaluated };
  if (verdict.status === 'candidate') {
    fold.candidateCount += 1;
    entry = { ...entry, ranked: rankedOf(verdict, evaluated.healthy) };
    fold.best = keepBest(fold.best, entry, fold.limits.candidates);
  } else {
    fold.rejectionCounts[verdict.rule] = (fold.rejectionCounts[verdict.rule] ?? 0) + 1;
    const waived = waivedCandidateOf(evaluated);
    if (waived !== undefined) {
      fold.blockedCount += 1;
      fold.blockedRules[verdict.rule] = (fold.blockedRules[verdict.rule] ?? 0) + 1;
      entry = { ...entry, ranked: rankedOf(waived, evaluated.healthy) };
      fold.bestBlocked = keepBest(fold.bestBlocked, entry, fold.limits.candidates);
    }
  }
  if (fold.firstVerdicts.length < fold.limits.verdicts) fold.firstVerdicts.push(entry);
  else if (fold.limits.keepNames?.has(node.name) === true) fold.named.push(entry);
}

/** The decision, with the verdicts kept: the first ones, then the best and named ones, in list order. */
export function finishPoolFold(fold: PoolSelectionFold, nodesOutsidePool: number): FoldedSelection {
  const best = sortedBest(fold.best, fold.limits.candidates);
  const bestBlocked = sortedBest(fold.bestBlocked, fold.limits.candidates);
  const tally: SelectionTally = {
    members: fold.members,
    rejectionCounts: fold.rejectionCounts,
    ranked: best.flatMap((entry) => (entry.ranked === undefined ? [] : [entry.ranked])),
    candidateCount: fold.candidateCount,
    blocked: bestBlocked.map((entry) => entry.evaluated),
    blockedCount: fold.blockedCount,
    blockedRules: fold.blockedRules,
  };
  // A waived fallback promotes the patch-blocked best, otherwise the candidates are the best.
  const shown = new Map<number, Entry>();
  for (const entry of [...fold.firstVerdicts, ...fold.named, ...best, ...bestBlocked]) {
    shown.set(entry.index, entry);
  }
  const kept = [...shown.values()].sort((a, b) => a.index - b.index);
  const selection = concludeSelection(
    fold.input,
    tally,
    kept.map((entry) => entry.evaluated),
    nodesOutsidePool,
  );
  const nodes = new Map<string, ClusterNode>();
  for (const entry of [...best, ...bestBlocked, ...fold.named]) nodes.set(entry.node.name, entry.node);
  for (const entry of fold.firstVerdicts) {
    if (fold.limits.keepNames?.has(entry.node.name) === true) nodes.set(entry.node.name, entry.node);
  }
  return { selection, verdictsOmitted: fold.members - kept.length, nodes };
}

/** Appends and, past twice the limit, sorts and cuts back to the limit: amortised O(1) per member. */
function keepBest(entries: Entry[], entry: Entry, limit: number): Entry[] {
  entries.push(entry);
  return entries.length > 2 * limit ? sortedBest(entries, limit) : entries;
}

function sortedBest(entries: readonly Entry[], limit: number): Entry[] {
  return [...entries].sort((a, b) => compareEntries(a, b)).slice(0, limit);
}

function compareEntries(a: Entry, b: Entry): number {
  if (a.ranked === undefined || b.ranked === undefined) return a.index - b.index;
  return compareRanked(a.ranked, b.ranked);
}
