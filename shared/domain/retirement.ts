/**
 * Retirement of older generations at the operator's pace (Karpenter's disruption controls are
 * the model operators know): which nodes of a pool may be retired now — drained and their instances
 * replaced by the newest generation — under a policy (generations older than an age or beyond the
 * newest N), a budget (nodes or a percentage of the pool, rounded up as Karpenter rounds), schedule
 * windows, the pool's capacity, and the marks that keep a node (our `do-not-retire`, Karpenter's
 * `do-not-disrupt` on the node or a pod, the cluster-autoscaler's scale-down-disabled). Pure.
 */
import { nextWindowAt, openWindowAt, type ScheduleWindow } from './schedule-window.js';

export const DO_NOT_RETIRE_ANNOTATION = 'vmss-prototype.io/do-not-retire';
export const KARPENTER_DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
export const SCALE_DOWN_DISABLED_ANNOTATION = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';

export interface RetirementPolicy {
  /** Retire nodes whose generation was published longer ago than this. */
  readonly olderThanSeconds?: number;
  /** Retire nodes of generations beyond the newest N (1: every generation but the newest). */
  readonly keepGenerations?: number;
  /** How many nodes may be retiring at once: a count, or a percentage of the pool's capacity (rounded up). */
  readonly budget: { readonly nodes: number } | { readonly percent: number };
  /** When retirement may act; empty: at any time. */
  readonly windows: readonly ScheduleWindow[];
  /** A new-generation instance is added and Ready before an old node is drained. */
  readonly surge: boolean;
}

/** One pool's retirement settings (`promotion.retirement`, resolved). */
export interface RetirementSettings {
  /** Scheduled retirement (the timer); `retire --generation` works either way. */
  readonly enabled: boolean;
  readonly policy: RetirementPolicy;
  /** How long a node's drain may take before it is given back and reported (PDBs refusing). */
  readonly drainTimeoutSeconds: number;
}

export interface RetirementNode {
  readonly name: string;
  /** The image version it was built from; `unknown` when not one of ours (the pool's original image). */
  readonly generation: string;
  readonly createdAt: string;
  readonly ready: boolean;
  /** Cordoned by someone (an administrator, a drain in progress). */
  readonly unschedulable: boolean;
  readonly annotations: Readonly<Record<string, string>>;
  /** Pods on the node that carry `karpenter.sh/do-not-disrupt: "true"`, as namespace/name. */
  readonly podsNotToDisrupt: readonly string[]; /** Kept by the caller, with why (a refresh keeps the donor of the version it just published). */
  readonly keptFor?: string;
}

export interface GenerationInfo {
  readonly name: string;
  /** RFC 3339: when the version went into `latest`. */
  readonly publishedAt?: string;
}

export interface RetirementInput {
  readonly policy: RetirementPolicy;
  readonly nodes: readonly RetirementNode[];
  /** The definition's usable versions, newest first; the first is what new nodes get. */
  readonly generations: readonly GenerationInfo[];
  /** The pool's capacity (the scale set's, or the MachinePool's replicas): never fewer Ready nodes. */
  readonly capacity: number;
  /** Nodes being retired now (drained or draining): they count against the budget. */
  readonly retiring: number;
  /** Versions rejected (a failed canary, a rollback): their nodes are always due. */
  readonly rejected?: readonly string[];
  /** `retire --generation V`: only this generation, whatever the age and keep rules. */
  readonly onlyGeneration?: string;
  readonly now: Date;
}

export interface Retiree {
  readonly node: string;
  readonly generation: string;
  readonly why: string;
}

export type RetirementDecision =
  | { readonly kind: 'closed'; readonly reason: string; readonly nextWindowAt?: string }
  | {
      readonly kind: 'plan';
      /** Retire now, in this order (oldest generation, then oldest node). */
      readonly retire: readonly Retiree[];
      /** Due but waiting for budget or capacity, in the same order. */
      readonly waiting: readonly Retiree[];
      /** Due, but kept by a mark (with which). */
      readonly kept: readonly { readonly node: string; readonly why: string }[];
      readonly budget: { readonly allowed: number; readonly inUse: number };
    };

/** The budget in nodes: a count as it is, a percentage of capacity rounded up (at least 0). */
export function budgetNodes(budget: RetirementPolicy['budget'], capacity: number): number {
  if ('nodes' in budget) return Math.max(0, Math.trunc(budget.nodes));
  return Math.max(0, Math.ceil((budget.percent * capacity) / 100));
}

/** Why a node is kept whatever its generation, or undefined. */
export function keptBy(node: RetirementNode): string | undefined {
  if (node.keptFor !== undefined) return node.keptFor;
  if (node.annotations[DO_NOT_RETIRE_ANNOTATION] === 'true') return `annotation ${DO_NOT_RETIRE_ANNOTATION}`;
  if (node.annotations[KARPENTER_DO_NOT_DISRUPT_ANNOTATION] === 'true') {
    return `annotation ${KARPENTER_DO_NOT_DISRUPT_ANNOTATION}`;
  }
  if (node.annotations[SCALE_DOWN_DISABLED_ANNOTATION] === 'true') {
    return `annotation ${SCALE_DOWN_DISABLED_ANNOTATION} (the cluster-autoscaler keeps it too)`;
  }
  const [pod] = node.podsNotToDisrupt;
  if (pod !== undefined) return `pod ${pod} carries ${KARPENTER_DO_NOT_DISRUPT_ANNOTATION}`;
  if (node.unschedulable) return 'cordoned by someone else: left to them';
  if (!node.ready) return 'not Ready: retiring it would not keep capacity, left to the node lifecycle';
  return undefined;
}

/** Why a node's generation is due for retirement, or undefined. */
function dueBecause(
  input: RetirementInput,
  node: RetirementNode,
  rank: ReadonlyMap<string, number>,
): string | undefined {
  const newest = input.generations[0]?.name;
  if (node.generation === newest) return undefined;
  // One generation on demand needs no newer one of ours: the replacement is whatever the model boots (after
  // a rejected canary on a pool's first refresh, its original image).
  if (input.onlyGeneration !== undefined) {
    return node.generation === input.onlyGeneration
      ? `generation ${node.generation} retired on demand`
      : undefined;
  }
  if (newest === undefined) return undefined;
  if (input.rejected?.includes(node.generation) === true) {
    return `built from version ${node.generation}, which was rejected`;
  }
  const { keepGenerations, olderThanSeconds } = input.policy;
  const position = rank.get(node.generation) ?? Number.POSITIVE_INFINITY;
  if (keepGenerations !== undefined && position >= keepGenerations) {
    return `generation ${node.generation} is beyond the newest ${keepGenerations}`;
  }
  if (olderThanSeconds !== undefined) {
    const published = input.generations.find(
      (generation) => generation.name === node.generation,
    )?.publishedAt;
    const since = Date.parse(published ?? node.createdAt);
    if (Number.isFinite(since) && input.now.getTime() - since >= olderThanSeconds * 1000) {
      return `generation ${node.generation} is older than ${olderThanSeconds} s`;
    }
  }
  return undefined;
}

export function planRetirement(input: RetirementInput): RetirementDecision {
  const { policy, now } = input;
  if (
    input.onlyGeneration === undefined &&
    policy.windows.length > 0 &&
    openWindowAt(policy.windows, now) === undefined
  ) {
    const next = nextWindowAt(policy.windows, now);
    return {
      kind: 'closed',
      reason: 'no retirement window is open',
      ...(next === undefined ? {} : { nextWindowAt: next.toISOString() }),
    };
  }
  const rank = new Map(input.generations.map((generation, index) => [generation.name, index]));
  const due: (Retiree & { readonly order: number; readonly createdAt: string })[] = [];
  const kept: { node: string; why: string }[] = [];
  for (const node of input.nodes) {
    const why = dueBecause(input, node, rank);
    if (why === undefined) continue;
    const keep = keptBy(node);
    if (keep !== undefined) {
      kept.push({ node: node.name, why: keep });
      continue;
    }
    const order = rank.get(node.generation) ?? Number.POSITIVE_INFINITY;
    due.push({ node: node.name, generation: node.generation, why, order, createdAt: node.createdAt });
  }
  due.sort(
    (a, b) =>
      b.order - a.order || Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.node.localeCompare(b.node),
  );
  const allowed = budgetNodes(policy.budget, input.capacity);
  let room = Math.max(0, allowed - input.retiring);
  if (!policy.surge) {
    // Without surge a node is drained before its replacement exists: only Ready nodes above capacity go.
    const ready = input.nodes.filter((node) => node.ready && !node.unschedulable).length;
    room = Math.min(room, Math.max(0, ready - input.capacity));
  }
  const strip = ({ node, generation, why }: Retiree): Retiree => ({ node, generation, why });
  return {
    kind: 'plan',
    retire: due.slice(0, room).map(strip),
    waiting: due.slice(room).map(strip),
    kept,
    budget: { allowed, inUse: input.retiring },
  };
}
