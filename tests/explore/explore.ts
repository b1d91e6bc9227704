/**
 * Runs points of the fault space and tabulates them: per variant and fault kind, the points explored,
 * those whose invariants failed, and the wall time they took. `npm run explore` runs the whole space
 * (main.ts); the test suite runs a deterministic sample (explore.test.ts).
 */
import { sampleBoundaries } from './boundary-sample.js';
import type { PointResult } from './point.js';
import { activityCallsOf, explorePoint } from './point.js';
import type { Boundary, FaultKind, Variant } from './space.js';
import { boundariesOf, FAULT_KINDS } from './space.js';

export interface ExploreOptions {
  readonly variants: readonly Variant[];
  readonly faults?: readonly FaultKind[];
  /**
   * At most this many boundaries per variant and fault kind, chosen by name (boundary-sample.ts: the
   * same points on every machine), all when absent.
   */
  readonly boundariesPerFault?: number;
  /**
   * Only the variant and fault kind pairs it accepts (a shard of the sample, shard.ts): the boundaries
   * picked for a pair are the same as without it.
   */
  readonly select?: (variant: Variant, fault: FaultKind) => boolean;
  /** Called after each point (progress). */
  readonly onPoint?: (result: PointResult, done: number, total: number) => void;
}

export interface ExploreReport {
  readonly points: readonly PointResult[];
  /** Boundaries of each variant's uninterrupted run. */
  readonly boundaries: Readonly<Record<string, number>>;
  readonly wallMs: number;
}

export async function explore(options: ExploreOptions): Promise<ExploreReport> {
  const started = performance.now();
  const faults = options.faults ?? FAULT_KINDS.map((fault) => fault.kind);
  const plan: { variant: Variant; boundary: Boundary; fault: FaultKind }[] = [];
  const boundaries: Record<string, number> = {};
  for (const variant of options.variants) {
    if (options.select !== undefined && !faults.some((fault) => options.select?.(variant, fault) === true))
      continue;
    const baseline = await activityCallsOf(variant);
    if (!baseline.status.startsWith('Completed')) {
      throw new Error(`${variant.name}: the uninterrupted run did not complete (${baseline.status})`);
    }
    const all = boundariesOf(baseline.calls);
    boundaries[variant.name] = all.length;
    for (const fault of faults) {
      if (options.select !== undefined && !options.select(variant, fault)) continue;
      const picked =
        options.boundariesPerFault === undefined
          ? all
          : sampleBoundaries(all, options.boundariesPerFault, `${variant.name}\n${fault}`);
      for (const boundary of picked) plan.push({ variant, boundary, fault });
    }
  }
  const points: PointResult[] = [];
  for (const { variant, boundary, fault } of plan) {
    const result = await explorePoint(variant, boundary, fault);
    points.push(result);
    options.onPoint?.(result, points.length, plan.length);
  }
  return { points, boundaries, wallMs: Math.round(performance.now() - started) };
}

/** The table: one row per variant and fault kind. */
export function reportTable(report: ExploreReport): string {
  const header = ['run', 'fault', 'points', 'violating', 'wall s'];
  const rows = new Map<string, { points: number; violating: number; wallMs: number }>();
  for (const point of report.points) {
    const key = `${point.variant}\n${point.fault}`;
    const row = rows.get(key) ?? { points: 0, violating: 0, wallMs: 0 };
    row.points += 1;
    if (point.violations.length > 0) row.violating += 1;
    row.wallMs += point.wallMs;
    rows.set(key, row);
  }
  const body = [...rows].map(([key, row]) => [
    ...key.split('\n'),
    String(row.points),
    String(row.violating),
    (row.wallMs / 1000).toFixed(0),
  ]);
  const total = report.points.length;
  const violating = report.points.filter((point) => point.violations.length > 0).length;
  body.push(['all', '', String(total), String(violating), (report.wallMs / 1000).toFixed(0)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] ?? '').length)));
  const format = (line: readonly string[]): string =>
    line.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(format)].join('\n');
}

/** Each violating point with what it violated, grouped by the violation's text (boundaries listed). */
export function violationList(report: ExploreReport): string {
  const groups = new Map<string, string[]>();
  for (const point of report.points) {
    for (const violation of point.violations) {
      const key = `${point.variant} / ${point.fault}: ${violation.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')}`;
      groups.set(key, [...(groups.get(key) ?? []), point.boundary]);
    }
  }
  return [...groups].map(([violation, where]) => `- ${violation}\n    at ${where.join(', ')}`).join('\n');
}
