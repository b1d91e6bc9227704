/**
 * Renders `retire` results for people: per pool a header (outcome and reason), the budget and window,
 * then one row per node saying what happens to it and why (docs/retirement.md).
 */
import type {
  PoolRetirementResult,
  RetirementNodeLine,
  RetirementNodeOutcome,
} from '../shared/application/retirement-contracts.js';
import type { RetireResult } from './commands.js';
import type { RenderOptions } from './table.js';
import { DEFAULT_WIDTH, table, wrap } from './table.js';

/** What happens to a node, in words (the JSON keeps the outcome names). */
const WHAT_HAPPENS: Readonly<Record<RetirementNodeOutcome, string>> = {
  retired: 'retired',
  'would-retire': 'would retire',
  waiting: 'waiting',
  kept: 'kept',
  'given-back': 'given back',
  stays: 'stays',
};

/** Lines of at most `width` characters, continuation lines indented by two spaces. */
function wrapped(text: string, width: number): string[] {
  return wrap(text, width - 2).map((line, index) => (index === 0 ? line : `  ${line}`));
}

/** A detail column narrower than this reads as a word per line: the details go under their rows instead. */
const MIN_DETAIL = 32;
const HEADER = ['NODE', 'GENERATION', 'WHAT HAPPENS'] as const;

function detailOf(node: RetirementNodeLine): string {
  return node.replacement === undefined ? node.detail : `${node.detail}; replacement ${node.replacement}`;
}

/**
 * The node table within `width`: the detail as a fourth column while it has room to read, otherwise on
 * indented lines under each node's row (node names and versions never wrap).
 */
function nodeTable(nodes: readonly RetirementNodeLine[], width: number): string[] {
  const rows = nodes.map((node) => [node.node, node.generation, WHAT_HAPPENS[node.outcome]] as const);
  const widths = HEADER.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const fixed = widths.reduce((sum, w) => sum + w, 0) + 2 * widths.length;
  if (width - fixed >= MIN_DETAIL) {
    return table(
      [...HEADER, 'DETAIL'],
      nodes.map((node, index) => [...(rows[index] ?? []), detailOf(node)]),
      { width },
    ).split('\n');
  }
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [
    line(HEADER),
    ...nodes.flatMap((node, index) => [
      line(rows[index] ?? []),
      ...wrap(detailOf(node), Math.max(MIN_DETAIL, width - 4)).map((text) => `    ${text}`),
    ]),
  ];
}

function poolLines(pool: PoolRetirementResult, width: number): string[] {
  const lines = wrapped(`${pool.cluster}/${pool.pool}: ${pool.outcome}: ${pool.reason}`, width);
  const facts = [
    ...(pool.generation === undefined ? [] : [`generation ${pool.generation}`]),
    ...(pool.newest === undefined ? [] : [`new nodes get ${pool.newest}`]),
    ...(pool.capacity === undefined ? [] : [`capacity ${pool.capacity}`]),
    ...(pool.budget === undefined
      ? []
      : pool.generation !== undefined
        ? // On demand every node of the generation goes, one at a time: the budget does not cap the run.
          ['on demand: one node at a time']
        : pool.window === undefined
          ? // No window (on demand, or a policy without windows): the budget is this run's.
            [`budget: ${pool.budget.allowed} per run`]
          : // usedInWindow counts earlier runs in this window, not this one's retirements.
            [`budget: ${pool.budget.allowed} per window, ${pool.budget.usedInWindow} used before this run`]),
    ...(pool.window === undefined ? [] : [`window ${pool.window.openedAt} to ${pool.window.closesAt}`]),
    ...(pool.nextWindowAt === undefined ? [] : [`next window ${pool.nextWindowAt}`]),
  ];
  if (facts.length > 0) lines.push(...wrapped(facts.join('; '), width - 2).map((line) => `  ${line}`));
  if (pool.nodes.length > 0) lines.push(...nodeTable(pool.nodes, width - 2).map((line) => `  ${line}`));
  return lines;
}

export function renderRetire(result: RetireResult, options: RenderOptions = {}): string {
  const width = Math.max(40, options.width ?? DEFAULT_WIDTH);
  return [
    ...result.pools.map((pool) => poolLines(pool, width).join('\n')),
    ...result.failures.map((failure) => `run ${failure.instanceId} failed: ${failure.message}`),
  ].join('\n\n');
}
