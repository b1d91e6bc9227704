/**
 * The status page: one self-contained HTML document (inline CSS,
 * inline SVG, no script, nothing fetched) rendered from the same status `vmss-prototype status --json`
 * prints. It opens with what an operator asks first: which pools are stale, which nodes runs hold and
 * since when, what runs now, what failed and why (the glance table); then a section per pool; pools that
 * are refused or skipped and hold nothing of ours last, collapsed, with their reason. Every verdict comes
 * from the view model (view-model.ts). Pure: the time comes in. Every text from outside goes through
 * `escapeHtml`; the page is served with a Content-Security-Policy that allows nothing but its own inline
 * styles and data: images.
 */
import type { PoolStatus, UnreadablePool } from '../pool-status.js';
import { CONVERGENCE_STYLE } from './convergence-chart.js';
import { FRESHNESS_STYLE } from './freshness-chart.js';
import type { Html } from './html.js';
import { badge, duration, empty, Html as RenderedHtml, html, table, time } from './html.js';
import { freshnessText, poolSection, runText } from './pool-section.js';
import { PAGE_STYLE } from './style.js';
import type { PoolView } from './view-model.js';
import { FRESH_SECONDS, poolViewOf, STALE_SECONDS } from './view-model.js';

export { freshnessChart } from './freshness-chart.js';
export { escapeHtml } from './html.js';
export { FRESH_SECONDS, STALE_SECONDS } from './view-model.js';

export interface StatusPageCluster {
  readonly cluster: string;
  readonly pools: readonly PoolStatus[];
  /** Pools whose status could not be read, each with why (shown above the others). */
  readonly unreadable?: readonly UnreadablePool[];
  /** Reading the cluster's status failed: why (shown instead of its pools). */
  readonly error?: string;
}

export interface StatusPageInput {
  /** When the status was read (RFC 3339). */
  readonly generatedAt: string;
  readonly clusters: readonly StatusPageCluster[];
}

/** The page's Content-Security-Policy: no script, no fetch, no frame; inline styles and data: images only. */
export const STATUS_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const STATUS_PAGE_CONTENT_TYPE = 'text/html; charset=utf-8';

interface Entry {
  readonly pool: PoolStatus;
  readonly view: PoolView;
  readonly id: string;
}

/** Needs a look: stale, a run that is not running as it should, a node left behind, a refused plan. */
function needsAttention(view: PoolView | undefined): boolean {
  if (view === undefined) return false;
  return (
    view.freshness.label === 'stale' ||
    view.run.state === 'interrupted' ||
    view.run.state === 'failed' ||
    view.run.state === 'rejected' ||
    view.heldNodes.some((node) => node.state === 'left behind')
  );
}

function heldCell(view: PoolView): Html {
  if (view.heldNodes.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul>
    ${view.heldNodes.map(
      (node) =>
        html`<li>
          ${node.node}
          ${node.state === 'running' ? badge('info', 'held, running') : badge('bad', 'left behind')} since
          ${time(node.since)}${node.cordoned ? ', cordoned' : ''}, VM ${node.vm}
        </li>`,
    )}
  </ul>`;
}

/** One row per pool that is refreshed: the page at a glance, the pools needing a look first. */
function glance(entries: readonly Entry[]): Html {
  const ordered = [...entries].sort(
    (a, b) => Number(needsAttention(b.view)) - Number(needsAttention(a.view)),
  );
  return table(
    'Pools at a glance',
    ['Pool', 'Freshness', 'Current version', 'Plan', 'Run', 'Held nodes'],
    ordered.map(({ pool, view, id }) => [
      html`<a href="#${id}">${pool.pool}</a>`,
      freshnessText(view.freshness, false),
      pool.currentVersion?.name ?? html`<span class="muted">none of ours</span>`,
      html`${badge(view.eligibility.tone, view.eligibility.label)}${view.eligibility.state === 'skipped' || view.eligibility.state === 'refused' ? html`<br /><span class="muted">${view.eligibility.reason ?? ''}</span>` : ''}`,
      runText(view.run, view.run.state !== 'running'),
      heldCell(view),
    ]),
    // The pools needing a look are marked (a border on the row's header; the words say why).
    (index) => (needsAttention(ordered[index]?.view) ? 'attention' : ''),
  );
}

/** Refused or skipped pools with nothing of ours: collapsed at the end, each with its reason. */
function notRefreshed(entries: readonly Entry[]): Html | string {
  if (entries.length === 0) return '';
  return html`<details class="not-refreshed">
    <summary>
      ${entries.length} pool${entries.length === 1 ? '' : 's'} not refreshed (refused or skipped by plan)
    </summary>
    <ul>
      ${entries.map(
        ({ pool, view }) =>
          html`<li>
            <strong>${pool.pool}</strong> ${badge(view.eligibility.tone, view.eligibility.label)}
            ${view.eligibility.reason ?? ''}
          </li>`,
      )}
    </ul>
  </details>`;
}

function clusterSection(cluster: StatusPageCluster, index: number): Html {
  const id = `cluster-${index}`;
  const entries = cluster.pools.map((pool, poolIndex): Entry => ({
    pool,
    view: poolViewOf(pool),
    id: `pool-${index}-${poolIndex}`,
  }));
  const shown = entries.filter((entry) => !entry.view.collapsed);
  const collapsed = entries.filter((entry) => entry.view.collapsed);
  const unreadable = (cluster.unreadable ?? []).map(
    (entry) =>
      html`<p role="alert">
        ${badge('bad', 'error')} Pool ${entry.pool} could not be read: ${entry.reason}
      </p>`,
  );
  const body =
    cluster.error !== undefined
      ? html`<p role="alert">${badge('bad', 'error')} Reading this cluster failed: ${cluster.error}</p>`
      : cluster.pools.length === 0 && unreadable.length > 0
        ? html`${unreadable}`
        : cluster.pools.length === 0
          ? empty('No pools: no scale set of this cluster has nodes, or none is configured.')
          : html`${unreadable}
              <div class="overview glance">${glance(shown)}</div>
              ${shown.map(({ pool, view, id: poolId }) => poolSection(pool, view, poolId))}
              ${notRefreshed(collapsed)}`;
  return html`<section class="cluster" aria-labelledby="${id}">
    <h2 id="${id}">Cluster ${cluster.cluster}</h2>
    ${body}
  </section>`;
}

/** The whole page. */
export function renderStatusPage(input: StatusPageInput): string {
  const pools = input.clusters.reduce((sum, cluster) => sum + cluster.pools.length, 0);
  const body =
    input.clusters.length === 0
      ? empty('No clusters are configured.')
      : html`${input.clusters.map(clusterSection)}`;
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>vmss-prototype status</title>
        <style>
          ${new RenderedHtml(PAGE_STYLE + CONVERGENCE_STYLE + FRESHNESS_STYLE)}
        </style>
      </head>
      <body>
        <header>
          <h1>Node pool images</h1>
          <p class="muted">
            ${input.clusters.length} cluster${input.clusters.length === 1 ? '' : 's'}, ${pools}
            pool${pools === 1 ? '' : 's'}; read ${time(input.generatedAt)}. Freshness is the age of the
            patches a new node boots with: ${badge('good', 'fresh')} up to ${duration(FRESH_SECONDS)},
            ${badge('warn', 'ageing')} up to ${duration(STALE_SECONDS)}, ${badge('bad', 'stale')} beyond. A
            run is running only while its pool lease is live; one whose lease expired was interrupted and left
            the pool behind.
          </p>
        </header>
        <main>${body}</main>
        <footer>vmss-prototype status page. The same data: <code>vmss-prototype status --json</code>.</footer>
      </body>
    </html> `;
  return page.text;
}
