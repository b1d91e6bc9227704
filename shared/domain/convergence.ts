/**
 * A pool's convergence on its newest generation, as `status` and the status page show it:
 * nodes per generation over time (the pool lease's readings, shared/domain/generation-samples.ts, and the
 * nodes as `status` read them now), and the pace retirement keeps — its budget, what the open window has
 * used of it, when the window closes or the next one opens. Pure: the time comes in.
 */
import type { GenerationSample } from './generation-samples.js';
import { compareImageVersions, parseImageVersion } from './image-version.js';
import { retiredInWindow } from './retired-in-window.js';
import type { RetirementSettings } from './retirement.js';
import { budgetNodes } from './retirement.js';
import { nextWindowAt, openWindowAt } from './schedule-window.js';

/** Where retirement stands for the pool now (`promotion.retirement` and the lease's record). */
export interface RetirementPace {
  /** Scheduled retirement is on (`retire --generation` works either way). */
  readonly enabled: boolean;
  /** The budget as configured: nodes, or a percentage of the pool's capacity. */
  readonly budget: { readonly nodes: number } | { readonly percent: number };
  /** Nodes the budget allows per window (per run, without windows) at the pool's capacity now. */
  readonly budgetAllowed: number;
  /** Nodes the open window has retired so far; 0 when no window is open. */
  readonly usedInWindow: number;
  /** The pool has retirement windows; without, retirement may act at any time. */
  readonly windowed: boolean;
  readonly windowOpen?: { readonly openedAt: string; readonly closesAt: string };
  /** When the next window opens after now (looked for over the next 8 days). */
  readonly nextWindowAt?: string;
}

/** The pool's convergence, in `status --json` (`convergence`) and on the status page. */
export interface PoolConvergence {
  /** The generation new nodes get (the version the model points at, when it is ours). */
  readonly newest?: string;
  /** Nodes per generation as the runs that held the pool counted them, oldest first. */
  readonly samples: readonly GenerationSample[];
  /** Nodes per generation as `status` read them now (`unlabelled`: a node not labelled yet). */
  readonly now: GenerationSample;
  readonly retirement: RetirementPace;
}

export function retirementPaceOf(input: {
  readonly settings: RetirementSettings;
  /** The pool's capacity (the scale set's), for a budget in percent. */
  readonly capacity: number;
  /** The lease's LEASE_ANNOTATIONS.retiredInWindow record. */
  readonly record?: string;
  readonly now: Date;
}): RetirementPace {
  const { policy, enabled } = input.settings;
  const open = openWindowAt(policy.windows, input.now);
  const windowOpen =
    open === undefined
      ? undefined
      : {
          openedAt: new Date(open.closesAt.getTime() - open.window.durationSeconds * 1000).toISOString(),
          closesAt: open.closesAt.toISOString(),
        };
  const next = policy.windows.length === 0 ? undefined : nextWindowAt(policy.windows, input.now);
  return {
    enabled,
    budget: policy.budget,
    budgetAllowed: budgetNodes(policy.budget, input.capacity),
    usedInWindow: windowOpen === undefined ? 0 : retiredInWindow(input.record, windowOpen.openedAt),
    windowed: policy.windows.length > 0,
    ...(windowOpen === undefined ? {} : { windowOpen }),
    ...(next === undefined ? {} : { nextWindowAt: next.toISOString() }),
  };
}

/**
 * The generations of `names` newest first, as the chart stacks them: the one new nodes get, then our
 * versions by version order, then anything else (`unknown`, `unlabelled`) by name.
 */
export function generationOrder(names: Iterable<string>, newest?: string): string[] {
  const unique = [...new Set(names)];
  const versions = unique
    .filter((name) => name !== newest && parseImageVersion(name) !== undefined)
    .sort((a, b) => compareImageVersions(b, a));
  const others = unique
    .filter((name) => name !== newest && parseImageVersion(name) === undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return [...(newest !== undefined && unique.includes(newest) ? [newest] : []), ...versions, ...others];
}

function nodes(count: number): string {
  return `${count} node${count === 1 ? '' : 's'}`;
}

/** `2026.1127.1: 4 nodes, 2026.1120.3: 2 nodes`, in the order given; `no nodes` when there are none. */
export function describeGenerationCounts(
  counts: Readonly<Record<string, number>>,
  order: readonly string[] = generationOrder(Object.keys(counts)),
): string {
  const parts = order
    .filter((name) => (counts[name] ?? 0) > 0)
    .map((name) => `${name}: ${nodes(counts[name] ?? 0)}`);
  return parts.length === 0 ? 'no nodes' : parts.join(', ');
}

/** `2026-11-29 04:00 UTC`, or `04:00 UTC` when it is the same day as `today`. */
function utcMinute(iso: string, today?: Date): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const text = at.toISOString();
  const sameDay = today !== undefined && text.slice(0, 10) === today.toISOString().slice(0, 10);
  return `${sameDay ? text.slice(11, 16) : `${text.slice(0, 10)} ${text.slice(11, 16)}`} UTC`;
}

/**
 * One line: `retirement: off`, `retirement: budget 1 node per window, 1 used in the window open until
 * 04:00 UTC`, `retirement: budget 20% (2 nodes) per window; next window 2026-11-28 02:00 UTC`.
 */
export function describeRetirementPace(pace: RetirementPace, now: Date): string {
  if (!pace.enabled) return 'retirement: off';
  const budget =
    'percent' in pace.budget
      ? `budget ${pace.budget.percent}% (${nodes(pace.budgetAllowed)})`
      : `budget ${nodes(pace.budgetAllowed)}`;
  if (!pace.windowed) return `retirement: ${budget} per run, at any time (no windows)`;
  if (pace.windowOpen !== undefined) {
    return (
      `retirement: ${budget} per window, ${pace.usedInWindow} used in the window open until ` +
      utcMinute(pace.windowOpen.closesAt, now)
    );
  }
  const next =
    pace.nextWindowAt === undefined
      ? 'no window opens in the next 8 days'
      : `next window ${utcMinute(pace.nextWindowAt)}`;
  return `retirement: ${budget} per window; ${next}`;
}
