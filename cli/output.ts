/** Renders command results for people (aligned tables) and machines (`--json`). */
import type { PoolRefreshResult } from '../shared/application/refresh-contracts.js';
import type { CommandResult } from './commands.js';

/** Aligns columns; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function formatSeconds(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60 === 0 ? '' : `${seconds % 60}s`}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h${minutes % 60 === 0 ? '' : `${minutes % 60}m`}`;
  return `${Math.floor(hours / 24)}d`;
}

function oneLine(text: string, max = 110): string {
  const flat = text.replaceAll(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function refreshRow(pool: PoolRefreshResult): string[] {
  return [
    pool.cluster,
    pool.pool,
    pool.outcome,
    pool.version?.versionName ?? '-',
    pool.donor ?? (pool.plan?.decision.kind === 'refresh' ? pool.plan.decision.node : '-'),
    formatSeconds(pool.donorOutOfServiceSeconds),
    oneLine(pool.failure === undefined ? pool.reason : `${pool.failure.step}: ${pool.failure.message}`),
  ];
}

export function render(result: CommandResult): string {
  if (result.kind === 'status') {
    const rows = result.clusters.flatMap((cluster) =>
      cluster.pools.map((pool) => [
        pool.cluster,
        pool.pool,
        pool.currentVersion?.name ?? '-',
        pool.currentVersion?.sourceNode ?? '-',
        pool.currentVersion?.builtAt ?? '-',
        formatSeconds(pool.currentVersion?.ageSeconds),
        pool.pointsAtOurImage ? (pool.pinned ? 'yes (pinned)' : 'yes (latest)') : 'no',
        pool.eligible ? 'yes' : `no: ${oneLine(pool.refusal ?? '', 70)}`,
      ]),
    );
    return table(
      ['CLUSTER', 'POOL', 'VERSION', 'BUILT FROM', 'BUILT AT', 'AGE', 'MODEL USES IT', 'ELIGIBLE'],
      rows,
    );
  }
  const pools = result.clusters.flatMap((cluster) => cluster.pools);
  const parts = [
    table(
      ['CLUSTER', 'POOL', 'OUTCOME', 'VERSION', 'DONOR', 'OUT OF SERVICE', 'REASON'],
      pools.map(refreshRow),
    ),
  ];
  if (result.kind === 'plan') {
    for (const pool of pools) {
      const verdicts = pool.plan?.verdicts ?? [];
      if (verdicts.length === 0) continue;
      parts.push(
        `\n${pool.cluster}/${pool.pool}: ${pool.plan?.decision.kind ?? pool.outcome}\n` +
          table(
            ['  NODE', 'VERDICT'],
            verdicts.map((verdict) => [`  ${verdict.node}`, oneLine(verdict.detail, 120)]),
          ),
      );
    }
  }
  for (const failure of result.failures) {
    parts.push(`\nrun ${failure.instanceId} failed: ${failure.message}`);
  }
  return parts.join('\n');
}
