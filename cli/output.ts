/**
 * Renders command results for people: aligned tables whose long cells wrap onto more lines (never cut,
 * also when written to a file) and durations as `2d2h5m`. `--json` output does not come through here.
 */
import type { PoolStatus } from '../shared/application/pool-status.js';
import type { PoolRefreshResult } from '../shared/application/refresh-contracts.js';
import { formatDuration } from '../shared/config/duration.js';
import { captureCell, captureSummaryOf } from './capture-summary.js';
import type { CommandResult, ReleaseResult, StatusResult } from './commands.js';
import type { DoctorResult } from './doctor.js';
import { giveBackAdvice } from './give-back-advice.js';
import { renderRetire } from './retire-output.js';
import type { RenderOptions } from './table.js';
import { DEFAULT_WIDTH, table } from './table.js';

export type { RenderOptions } from './table.js';
export { DEFAULT_WIDTH, table, wrap } from './table.js';

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** A duration in seconds as `2d2h5m8s`; `-` when unknown. */
export function formatSeconds(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '-';
  return formatDuration(Math.max(0, Math.round(seconds)));
}

const REFRESH_HEADER = ['CLUSTER', 'POOL', 'OUTCOME', 'VERSION', 'DONOR', 'OUT OF SERVICE', 'REASON'];
/** A plan builds nothing and stops no donor: how the donor would be captured instead of version and time. */
const PLAN_HEADER = ['CLUSTER', 'POOL', 'OUTCOME', 'DONOR', 'CAPTURE', 'REASON'];

function refreshRow(pool: PoolRefreshResult, plan: boolean): string[] {
  const donor = pool.donor ?? (pool.plan?.decision.kind === 'refresh' ? pool.plan.decision.node : '-');
  const reason = pool.failure === undefined ? pool.reason : `${pool.failure.step}: ${pool.failure.message}`;
  if (plan) {
    return [pool.cluster, pool.pool, pool.outcome, donor, captureCell(captureSummaryOf(pool)), reason];
  }
  return [
    pool.cluster,
    pool.pool,
    pool.outcome,
    pool.version?.versionName ?? '-',
    donor,
    formatSeconds(pool.donorOutOfServiceSeconds),
    reason,
  ];
}

/** Who holds the pool, from its lease: `-`, the live holder, or an expired one. */
function holderCell(pool: PoolStatus): string {
  const lease = pool.ownership?.lease;
  if (lease === undefined || lease.state === 'free') return '-';
  const what = lease.instanceId === undefined ? '' : ` ${lease.instanceId}`;
  return lease.state === 'held'
    ? `${lease.runner} on ${lease.host}${what} until ${lease.expiresAt}`
    : `expired ${lease.expiresAt}: ${lease.runner} on ${lease.host}${what}`;
}

function renderStatus(result: StatusResult, options: RenderOptions): string {
  const pools = result.clusters.flatMap((cluster) => cluster.pools);
  const rows = pools.map((pool) => [
    pool.cluster,
    pool.pool,
    pool.currentVersion?.name ?? '-',
    pool.currentVersion?.sourceNode ?? '-',
    pool.currentVersion?.builtAt ?? '-',
    formatSeconds(pool.currentVersion?.ageSeconds),
    formatSeconds(pool.freshness.ageSeconds),
    pool.pointsAtOurImage ? (pool.pinned ? 'yes (pinned)' : 'yes (latest)') : 'no',
    pool.eligible ? 'yes' : `no: ${pool.refusal ?? ''}`,
    holderCell(pool),
  ]);
  const parts = [
    table(
      [
        'CLUSTER',
        'POOL',
        'VERSION',
        'BUILT FROM',
        'BUILT AT',
        'AGE',
        'PATCHES AGE',
        'MODEL USES IT',
        'ELIGIBLE',
        'HELD BY',
      ],
      rows,
      options,
    ),
  ];
  for (const pool of pools) {
    const ownership = pool.ownership;
    const lines: string[] = [...policyLines(pool), ...rejectedNodeLines(pool)];
    if (ownership === undefined) {
      if (lines.length > 0) parts.push(`\n${pool.cluster}/${pool.pool}:\n${indent(lines.join('\n'))}`);
      continue;
    }
    if (ownership.lease.state !== 'free') lines.push(`held by ${ownership.lease.description}`);
    if (ownership.lease.state !== 'free' && ownership.lease.cancelRequested !== undefined) {
      lines.push(`cancel requested: ${ownership.lease.cancelRequested}`);
    }
    for (const node of ownership.heldNodes) {
      lines.push(
        `node ${node.node} held by run ${node.runId}${node.byLiveRun ? ' (running)' : ' (not alive)'}: ` +
          `${node.cordoned ? 'cordoned' : 'schedulable'}, VM ${node.vm}`,
      );
    }
    if (ownership.leftovers.length > 0) {
      lines.push(
        `left by runs that are not alive (\`vmss-prototype release --pool ${pool.pool}\` gives them back):`,
      );
      lines.push(...ownership.leftovers.map((leftover) => `  ${leftover}`));
    }
    for (const kept of ownership.kept) lines.push(`kept: ${kept.what}: ${kept.reason}`);
    if (lines.length > 0) parts.push(`\n${pool.cluster}/${pool.pool}:\n${indent(lines.join('\n'))}`);
  }
  for (const cluster of result.clusters) {
    for (const entry of cluster.unreadable) {
      parts.push(`\n${cluster.cluster}/${entry.pool} could not be read:\n${indent(entry.reason)}`);
    }
  }
  return parts.join('\n');
}

/**
 * The pool's nodes built from a version that was rejected or abandoned (an outside scale-out while its
 * canary had the model pinned, a rollback), by version: named, with the command that replaces them.
 */
function rejectedNodeLines(pool: PoolStatus): string[] {
  const byVersion = new Map<string, { state: string; nodes: string[] }>();
  for (const node of pool.nodes) {
    const state = node.generationState;
    if ((state !== 'rejected' && state !== 'abandoned') || node.generation === undefined) continue;
    const entry = byVersion.get(node.generation) ?? { state, nodes: [] };
    entry.nodes.push(node.name);
    byVersion.set(node.generation, entry);
  }
  return [...byVersion].map(
    ([version, { state, nodes }]) =>
      `${nodes.length} node(s) built from ${state} version ${version}: ${nodes.join(', ')} ` +
      `(\`vmss-prototype retire --pool ${pool.pool} --generation ${version}\` replaces them)`,
  );
}

/** The pool's PoolImagePolicy, as its object's status says it (docs/pool-policy.md). */
function policyLines(pool: StatusResult['clusters'][number]['pools'][number]): string[] {
  const policy = pool.imagePolicy;
  if (policy === undefined) return [];
  const lines = [
    `PoolImagePolicy ${policy.name} (generation ${policy.generation}): ` +
      (policy.valid
        ? `valid${policy.paused ? ', paused' : ''}${policy.overridden.length === 0 ? '' : `; overrides ${policy.overridden.join(', ')}`}`
        : `invalid, nothing starts: ${policy.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ')}`),
  ];
  for (const [kind, action] of Object.entries(policy.actions)) {
    lines.push(
      `${kind} ${action.target}: ${action.state}${action.message === undefined ? '' : ` (${action.message})`}`,
    );
  }
  return lines;
}

function renderRelease(result: ReleaseResult, options: RenderOptions): string {
  const parts = [
    table(
      ['CLUSTER', 'POOL', 'OUTCOME', 'DETAIL'],
      result.pools.map((pool) => [
        pool.cluster,
        pool.pool,
        pool.outcome,
        pool.outcome === 'held'
          ? `held by ${pool.holder ?? 'a live run'}: stop it with \`vmss-prototype cancel --pool ${pool.pool}\`, ` +
            'wait until its lease expires, or give --force if you know that runner is gone'
          : pool.outcome === 'nothing-left'
            ? 'nothing to give back'
            : `${pool.actions.length} ${result.dryRun ? 'to give back' : 'given back'}` +
              (pool.failures.length > 0 ? `, ${pool.failures.length} failed` : ''),
      ]),
      options,
    ),
  ];
  for (const pool of result.pools) {
    const gone = pool.holderGone;
    const lines = [
      ...(gone === undefined
        ? []
        : [
            `the run's process ${gone.pid} on ${gone.host} is gone (run ${gone.runId}): ` +
              (result.dryRun
                ? 'its lease would be taken over at once, not after it expired'
                : 'its lease was taken over at once, not after it expired'),
          ]),
      ...pool.actions.map((action) => `${result.dryRun ? 'would ' : ''}${action}`),
      ...pool.failures.map((failure) => `failed: ${failure}`),
      ...pool.kept.map((kept) => `kept: ${kept.what}: ${kept.reason}`),
    ];
    if (lines.length > 0) parts.push(`\n${pool.cluster}/${pool.pool}:\n${indent(lines.join('\n'))}`);
  }
  for (const failure of result.failures) parts.push(`\nrun ${failure.instanceId} failed: ${failure.message}`);
  return parts.join('\n');
}

export function render(result: CommandResult, options: RenderOptions = {}): string {
  if (result.kind === 'doctor') return renderDoctor(result, options);
  if (result.kind === 'status') return renderStatus(result, options);
  if (result.kind === 'release') return renderRelease(result, options);
  if (result.kind === 'cancel') {
    return table(
      ['CLUSTER', 'POOL', 'OUTCOME', 'DETAIL'],
      result.pools.map((pool) => [pool.cluster, pool.pool, pool.outcome, pool.detail]),
      options,
    );
  }
  if (result.kind === 'retire') return renderRetire(result, options);
  if (result.kind === 'rollback') {
    const parts = [
      table(
        ['CLUSTER', 'POOL', 'OUTCOME', 'FROM', 'TO', 'REASON'],
        result.pools.map((pool) => [
          pool.cluster,
          pool.pool,
          pool.outcome,
          pool.from ?? '-',
          pool.to ?? '-',
          pool.reason,
        ]),
        options,
      ),
      ...result.failures.map((failure) => `\nrun ${failure.instanceId} failed: ${failure.message}`),
    ];
    return parts.join('\n');
  }
  const pools = result.clusters.flatMap((cluster) => cluster.pools);
  // A plan says how each donor would be captured; a refresh's version tags and status say how it was.
  const plan = result.kind === 'plan';
  const parts = [
    table(
      plan ? PLAN_HEADER : REFRESH_HEADER,
      pools.map((pool) => refreshRow(pool, plan)),
      options,
    ),
  ];
  if (result.kind === 'plan') {
    for (const pool of pools) {
      const verdicts = pool.plan?.verdicts ?? [];
      const capz = pool.plan?.capz;
      if (verdicts.length === 0 && capz === undefined) continue;
      const capture = pool.plan?.capture;
      const decision = pool.plan?.decision;
      parts.push(
        `\n${pool.cluster}/${pool.pool}: ${decision?.kind ?? pool.outcome}\n` +
          (capture === undefined ? '' : `${indent(`capture: ${capture.mode} (${capture.reason})`)}\n`) +
          // A CAPZ pool: what CAPZ will do with the new image, and the refusal in full when refused.
          (capz === undefined ? '' : `${indent(`capz: ${capz.description}`)}\n`) +
          (capz !== undefined && decision?.kind === 'refused'
            ? `${indent(`refused: ${decision.reason}`)}\n`
            : '') +
          indent(
            table(
              ['NODE', 'VERDICT'],
              verdicts.map((verdict) => [verdict.node, verdict.detail]),
              { width: (options.width ?? DEFAULT_WIDTH) - 2 },
            ),
          ) +
          (pool.plan?.verdictsOmitted === undefined
            ? ''
            : `\n  … and ${pool.plan.verdictsOmitted} more node(s): the first verdicts and the best candidates are shown`),
      );
    }
  }
  for (const pool of pools) {
    const notes = [
      ...(pool.gaveBack ?? []).map((what) => `gave back first: ${what}`),
      ...(pool.modelKept === undefined ? [] : [pool.modelKept]),
      ...(result.kind === 'refresh' ? deadRunNote(pool) : []),
    ];
    if (notes.length > 0) parts.push(`\n${pool.cluster}/${pool.pool}:\n${indent(notes.join('\n'))}`);
  }
  for (const failure of result.failures) {
    parts.push(`\nrun ${failure.instanceId} failed: ${failure.message}`);
  }
  if (result.kind === 'refresh' && result.failures.length > 0 && pools.length === 0) {
    parts.push(
      `\nif a pool's node is still held (see \`vmss-prototype status\`): ${giveBackAdvice('<pool>')}`,
    );
  }
  return parts.join('\n');
}

/**
 * A refresh that ended held by another run, or failed after it may have taken its node: what gives back a
 * dead run's node (a failed run gives its node back itself unless it could not; `status` shows).
 */
function deadRunNote(pool: PoolRefreshResult): string[] {
  if (pool.outcome === 'busy') return [`if the run holding it is dead: ${giveBackAdvice(pool.pool)}`];
  if (pool.outcome === 'failed' && pool.failure?.step !== 'planning') {
    return [`if its node is still held (see \`vmss-prototype status\`): ${giveBackAdvice(pool.pool)}`];
  }
  return [];
}

/** One row per check; then, per failed check, what is missing, one per line, and the fix. */
function renderDoctor(result: DoctorResult, options: RenderOptions): string {
  const parts = [
    table(
      ['CHECK', 'CLUSTER', 'TARGET', 'RESULT', 'DETAIL'],
      result.checks.map((check) => [
        check.check,
        check.cluster ?? '-',
        check.target,
        check.result,
        check.result === 'missing' ? `${check.missing?.length ?? 0} missing` : check.detail,
      ]),
      options,
    ),
  ];
  for (const check of result.checks) {
    if (check.result === 'ok') continue;
    const where = `${check.check}${check.cluster === undefined ? '' : ` ${check.cluster}`} ${check.target}`;
    const lines =
      check.result === 'missing'
        ? [`${where}: missing`, ...(check.missing ?? []).map((item) => `  - ${item}`)]
        : [`${where}: ${check.detail}`];
    if (check.fix !== undefined) lines.push(`  fix: ${check.fix}`);
    parts.push(`\n${lines.join('\n')}`);
  }
  parts.push(result.ok ? '\nall checks passed' : '\nsomething is missing: see above');
  return parts.join('\n');
}
