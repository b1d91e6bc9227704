/**
 * The status page (issue 16): one self-contained HTML document (inline CSS, inline SVG, no script, nothing
 * fetched) rendered from the same status `vmss-prototype status --json` prints. Pure: the time comes in.
 * Every text from outside (node names, reasons, versions) goes through `escapeHtml`; the page is served
 * with a Content-Security-Policy that allows nothing but its own inline styles and data: images.
 */
import { describeNewNodes } from '../../domain/bootstrap-flavour.js';
import { formatDuration } from '../../domain/duration-text.js';
import type { FreshnessSegment, RunRecord, RunStep, VersionEntry } from '../../domain/pool-history.js';
import { parseRfc3339 } from '../../domain/rfc3339.js';
import type { PoolStatus } from '../pool-status.js';
import { CONVERGENCE_STYLE, convergenceSection } from './convergence-chart.js';
import type { Part } from './html.js';
import { empty, Html, html, shortDate, time } from './html.js';

export { escapeHtml } from './html.js';

export interface StatusPageCluster {
  readonly cluster: string;
  readonly pools: readonly PoolStatus[];
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

/** Below this patch age a pool is labelled fresh; below STALE_SECONDS ageing; stale above. */
export const FRESH_SECONDS = 7 * 86_400;
export const STALE_SECONDS = 30 * 86_400;

function duration(seconds: number | undefined): string {
  return seconds === undefined || !Number.isFinite(seconds) ? 'unknown' : formatDuration(Math.round(seconds));
}

type Tone = 'good' | 'warn' | 'bad' | 'info' | 'neutral';

/** A status label: always text, the colour only repeats it. */
function badge(tone: Tone, text: string): Html {
  return html`<span class="badge ${tone}">${text}</span>`;
}

function freshnessBadge(ageSeconds: number | undefined): Html {
  if (ageSeconds === undefined) return badge('neutral', 'unknown');
  if (ageSeconds <= FRESH_SECONDS) return badge('good', 'fresh');
  if (ageSeconds <= STALE_SECONDS) return badge('warn', 'ageing');
  return badge('bad', 'stale');
}

/** The patch age in words with its label; only the label when the age is unknown. */
function freshnessText(ageSeconds: number | undefined, big: boolean): Html {
  if (ageSeconds === undefined) return freshnessBadge(undefined);
  const age = duration(ageSeconds);
  return html`${big ? html`<strong class="big">${age}</strong>` : age} ${freshnessBadge(ageSeconds)}`;
}

const VERSION_TONE: Readonly<Record<VersionEntry['state'], Tone>> = {
  current: 'good',
  usable: 'info',
  hidden: 'neutral',
  building: 'neutral',
  rejected: 'bad',
  abandoned: 'warn',
  failed: 'bad',
};

const RUN_TONE: Readonly<Record<RunRecord['outcome'], Tone>> = {
  running: 'info',
  refreshed: 'good',
  building: 'neutral',
  rejected: 'bad',
  abandoned: 'warn',
  failed: 'bad',
};

/** A table that collapses to labelled rows on a narrow screen (each cell carries its column's name). */
function table(caption: string, header: readonly string[], rows: readonly (readonly Part[])[]): Html {
  const head = header.map((title) => html`<th scope="col">${title}</th>`);
  const body = rows.map(
    (row) =>
      html`<tr>
        ${row.map((cell, column) =>
          column === 0
            ? html`<th scope="row" data-label="${header[column] ?? ''}">${cell}</th>`
            : html`<td data-label="${header[column] ?? ''}">${cell}</td>`,
        )}
      </tr>`,
  );
  return html`<table>
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        ${head}
      </tr>
    </thead>
    <tbody>
      ${body}
    </tbody>
  </table>`;
}

/** A small sawtooth of patch age over the last versions: rises while a version serves, drops at the next. */
export function freshnessChart(segments: readonly FreshnessSegment[], title: string): Html {
  if (segments.length === 0) {
    return empty('No freshness history yet: no version of ours with a recorded donor patch time.');
  }
  const width = 320;
  const height = 96;
  const pad = { left: 6, right: 6, top: 10, bottom: 14 };
  const startMs = parseRfc3339(segments[0]?.from ?? '') ?? 0;
  const endMs = parseRfc3339(segments.at(-1)?.to ?? '') ?? startMs;
  const spanMs = Math.max(1, endMs - startMs);
  const maxAge = Math.max(1, ...segments.map((s) => s.ageToSeconds));
  const x = (value: string): number =>
    pad.left + (((parseRfc3339(value) ?? startMs) - startMs) / spanMs) * (width - pad.left - pad.right);
  const y = (age: number): number => pad.top + (1 - age / maxAge) * (height - pad.top - pad.bottom);
  const points = segments
    .flatMap((s) => [
      `${x(s.from).toFixed(1)},${y(s.ageFromSeconds).toFixed(1)}`,
      `${x(s.to).toFixed(1)},${y(s.ageToSeconds).toFixed(1)}`,
    ])
    .join(' ');
  const dots = segments.map(
    (s) =>
      html`<circle cx="${x(s.from).toFixed(1)}" cy="${y(s.ageFromSeconds).toFixed(1)}" r="3"
        ><title>${s.version}: patches ${duration(s.ageFromSeconds)} old when created</title></circle
      >`,
  );
  const label = `${title}: patch age over the last ${segments.length} version${segments.length === 1 ? '' : 's'}, now ${duration(segments.at(-1)?.ageToSeconds)}, at most ${duration(maxAge)}`;
  return html`<figure class="chart">
    <svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${label}" preserveAspectRatio="none">
      <title>${label}</title>
      <line
        x1="${pad.left}"
        y1="${height - pad.bottom}"
        x2="${width - pad.right}"
        y2="${height - pad.bottom}"
        class="axis"
      />
      <polyline points="${points}" class="line" />
      ${dots}
      <text x="${pad.left}" y="${height - 2}" class="tick">${shortDate(segments[0]?.from)}</text>
      <text x="${width - pad.right}" y="${height - 2}" class="tick end">now</text>
      <text x="${pad.left}" y="${pad.top - 2}" class="tick">${duration(maxAge)}</text>
    </svg>
    <figcaption>
      Patch age of a new node over time (rises while a version serves, drops when a fresher one replaces it).
    </figcaption>
  </figure>`;
}

/** One run's steps as proportional bars, each with its name and duration in text. */
function timeline(run: RunRecord): Html {
  if (run.steps.length === 0) return html`<span class="muted">no step times recorded</span>`;
  const starts = run.steps.map((step) => parseRfc3339(step.from) ?? 0);
  const startMs = Math.min(...starts);
  const closedEnd = Math.max(
    ...starts,
    ...run.steps.flatMap((step) => (step.to === undefined ? [] : [parseRfc3339(step.to) ?? startMs])),
  );
  // A step whose end was not recorded is drawn open (dashed) to a margin past the last recorded moment.
  const open = run.steps.some((step) => step.to === undefined);
  const endMs = open ? closedEnd + Math.max(1, (closedEnd - startMs) / 4) : closedEnd;
  const ends = run.steps.map((step) => (step.to === undefined ? endMs : (parseRfc3339(step.to) ?? startMs)));
  const spanMs = Math.max(1, endMs - startMs);
  const bar = (step: RunStep, index: number): Html => {
    const left = Math.min(98, (((starts[index] ?? startMs) - startMs) / spanMs) * 100);
    const width = Math.max(2, (((ends[index] ?? startMs) - (starts[index] ?? startMs)) / spanMs) * 100);
    const openClass = step.to === undefined ? ' open' : '';
    return html`<li class="step ${step.step}${openClass}">
      <span
        class="bar"
        style="margin-left:${left.toFixed(1)}%;width:${Math.min(100 - left, width).toFixed(1)}%"
      ></span
      ><span class="step-text"
        >${step.label}:
        <strong>${step.seconds === undefined ? 'end not recorded' : duration(step.seconds)}</strong> (from
        ${time(step.from)})</span
      >
    </li>`;
  };
  return html`<ol class="timeline" aria-label="steps of run ${run.runId}">
    ${run.steps.map(bar)}
  </ol>`;
}

function summary(pool: PoolStatus): Html {
  const current = pool.currentVersion;
  const lease = pool.ownership?.lease;
  const leaseText =
    lease === undefined
      ? html`<span class="muted">unknown</span>`
      : lease.state === 'free'
        ? html`${badge('good', 'free')}${lease.lastHolder === undefined ? '' : html` last held by ${lease.lastHolder}${lease.releasedAt === undefined ? '' : html`, released ${time(lease.releasedAt)}`}`}`
        : html`${badge(lease.state === 'held' ? 'info' : 'warn', lease.state)}
          ${lease.description}${lease.cancelRequested === undefined ? '' : html` (cancel requested: ${lease.cancelRequested})`}`;
  return html`<dl class="facts">
    <div>
      <dt>Current version</dt>
      <dd>
        ${current === undefined ? html`<span class="muted">none of ours</span>` : html`<strong>${current.name}</strong>`}
      </dd>
    </div>
    <div>
      <dt>Donor</dt>
      <dd>${current?.sourceNode ?? html`<span class="muted">unknown</span>`}</dd>
    </div>
    <div>
      <dt>Built</dt>
      <dd>${time(current?.builtAt)}</dd>
    </div>
    <div>
      <dt>Freshness</dt>
      <dd>
        ${freshnessText(pool.freshness.ageSeconds, true)}<br /><span class="muted"
          >${pool.freshness.detail}</span
        >
      </dd>
    </div>
    <div class="wide">
      <dt>Model image</dt>
      <dd>
        ${pool.pointsAtOurImage ? badge('good', pool.pinned ? 'ours, pinned' : 'ours, latest') : badge('warn', 'not ours')}
        <span class="id">${pool.modelImage}</span>
      </dd>
    </div>
    <div class="wide">
      <dt>New nodes</dt>
      <dd>
        ${current === undefined ? html`<span class="muted">no version of ours yet</span>` : describeNewNodes(current.newNodes ?? 'boot-from-image')}
      </dd>
    </div>
    ${
      pool.capz === undefined
        ? ''
        : html`<div class="wide">
            <dt>CAPZ MachinePool</dt>
            <dd>
              <span class="id">${pool.capz.machinePool}</span><br /><span class="muted"
                >${pool.capz.rollout}</span
              >
            </dd>
          </div>`
    }
    <div class="wide">
      <dt>Eligible</dt>
      <dd>
        ${pool.eligible ? badge('good', 'yes') : html`${badge('bad', 'refused')} ${pool.refusal ?? 'no reason given'}`}
      </dd>
    </div>
    <div>
      <dt>Lease</dt>
      <dd>${leaseText}</dd>
    </div>
  </dl>`;
}

function versionsTable(pool: PoolStatus): Html {
  const versions = pool.history.versions;
  if (versions.length === 0) return empty('No image versions of ours in the gallery yet.');
  return table(
    'Last versions',
    ['Version', 'State', 'Donor', 'Built', 'Patch age at build', 'Run'],
    versions.map((v) => [
      v.name,
      html`${badge(VERSION_TONE[v.state], v.state)}${v.reason === undefined ? '' : html` ${v.reason}`}${v.rejectedAt === undefined ? '' : html` (${time(v.rejectedAt)})`}`,
      v.sourceNode ?? '-',
      time(v.builtAt),
      duration(v.patchAgeAtBuildSeconds),
      html`<span class="id">${v.runId ?? '-'}</span>`,
    ]),
  );
}

function runsSection(pool: PoolStatus): Html {
  const runs = pool.history.runs;
  if (runs.length === 0)
    return empty('No runs recorded yet: no version of ours names its run, and no run holds the pool.');
  return table(
    'Last runs',
    ['Run', 'Outcome', 'Version', 'Donor', 'Took', 'Timeline'],
    runs.map((run) => [
      html`<span class="id">${run.runId}</span>`,
      html`${badge(RUN_TONE[run.outcome], run.outcome)}${run.reason === undefined ? '' : html` ${run.reason}`}`,
      run.version ?? '-',
      run.donor ?? '-',
      run.seconds === undefined
        ? run.outcome === 'running'
          ? 'running'
          : 'end not recorded'
        : duration(run.seconds),
      timeline(run),
    ]),
  );
}

function canarySection(pool: PoolStatus): Html {
  const rejections = pool.history.versions.filter((v) => v.state === 'rejected' || v.state === 'abandoned');
  const parts: Html[] = [];
  const canary = pool.canary;
  if (canary === undefined) parts.push(empty('No canary is running.'));
  else if (canary.state === 'damaged') parts.push(html`<p>${badge('bad', 'damaged')} ${canary.problem}</p>`);
  else {
    parts.push(
      html`<p>
        ${badge('info', 'running')} version <strong>${canary.version}</strong>, run
        <span class="id">${canary.runId}</span>, since ${time(canary.startedAt)}: ${canary.count}
        canar${canary.count === 1 ? 'y' : 'ies'}${canary.instances.length === 0 ? '' : html` (${canary.instances.join(', ')})`}
      </p>`,
    );
  }
  parts.push(
    rejections.length === 0
      ? empty('No version was rejected or abandoned.')
      : table(
          'Rejected and abandoned versions',
          ['Version', 'Verdict', 'Reason', 'When'],
          rejections.map((v) => [
            v.name,
            badge(VERSION_TONE[v.state], v.state),
            v.reason ?? '-',
            time(v.rejectedAt),
          ]),
        ),
  );
  return html`${parts}`;
}

function holdingsSection(pool: PoolStatus): Html {
  const ownership = pool.ownership;
  if (ownership === undefined) return empty('Who holds the pool is unknown.');
  const parts: Html[] = [];
  parts.push(
    ownership.heldNodes.length === 0
      ? empty('No node is held by a run.')
      : table(
          'Held nodes',
          ['Node', 'Run', 'By a live run', 'Cordoned', 'VM'],
          ownership.heldNodes.map((node) => [
            node.node,
            html`<span class="id">${node.runId}</span>`,
            node.byLiveRun ? badge('info', 'yes, running') : badge('warn', 'no, left behind'),
            node.cordoned ? badge('warn', 'cordoned') : badge('good', 'schedulable'),
            node.vm,
          ]),
        ),
  );
  if (ownership.leftovers.length > 0) {
    parts.push(
      html`<p>
          Left by runs that are not alive (<code>vmss-prototype release --pool ${pool.pool}</code> gives them
          back):
        </p>
        <ul>
          ${ownership.leftovers.map((item) => html`<li>${item}</li>`)}
        </ul>`,
    );
  }
  if (ownership.kept.length > 0) {
    parts.push(
      html`<ul>
        ${ownership.kept.map((kept) => html`<li>kept: ${kept.what}: ${kept.reason}</li>`)}
      </ul>`,
    );
  }
  return html`${parts}`;
}

function nodesTable(pool: PoolStatus): Html {
  if (pool.nodes.length === 0) return empty('The pool has no nodes in the cluster.');
  const current = pool.currentVersion?.name;
  return table(
    'Node generations',
    ['Node', 'Generation', 'Ready', 'Schedulable'],
    pool.nodes.map((node) => [
      node.name,
      node.generation === undefined
        ? html`<span class="muted">no label yet</span>`
        : html`${node.generation}
          ${node.generation === current ? badge('good', 'current') : node.olderGeneration ? badge('warn', 'older, tainted') : badge('neutral', node.generation === 'unknown' ? 'unknown' : 'older')}`,
      node.ready ? badge('good', 'ready') : badge('bad', 'not ready'),
      node.cordoned ? badge('warn', 'cordoned') : badge('good', 'yes'),
    ]),
  );
}

function poolSection(pool: PoolStatus, index: string): Html {
  const id = `pool-${index}`;
  return html`<section class="pool" aria-labelledby="${id}">
    <h3 id="${id}">Pool ${pool.pool} <span class="muted small">scale set ${pool.scaleSet}</span></h3>
    ${summary(pool)}
    <h4>Convergence</h4>
    ${convergenceSection(pool.convergence, pool.pool, `${id}-convergence`)}
    <h4>Freshness</h4>
    ${freshnessChart(pool.history.freshness, `pool ${pool.pool}`)}
    <h4>Versions</h4>
    ${versionsTable(pool)}
    <h4>Runs</h4>
    ${runsSection(pool)}
    <h4>Canary</h4>
    ${canarySection(pool)}
    <h4>Held nodes and leases</h4>
    ${holdingsSection(pool)}
    <h4>Nodes</h4>
    ${nodesTable(pool)}
  </section>`;
}

/** One row per pool, linking to its section: the page at a glance. */
function overview(pools: readonly PoolStatus[], index: number): Html {
  return table(
    'Pools at a glance',
    ['Pool', 'Current version', 'Freshness', 'Eligible', 'Last run'],
    pools.map((pool, poolIndex) => {
      const run = pool.history.runs[0];
      return [
        html`<a href="#pool-${index}-${poolIndex}">${pool.pool}</a>`,
        pool.currentVersion?.name ?? html`<span class="muted">none of ours</span>`,
        freshnessText(pool.freshness.ageSeconds, false),
        pool.eligible ? badge('good', 'yes') : badge('bad', 'refused'),
        run === undefined
          ? html`<span class="muted">none recorded</span>`
          : html`${badge(RUN_TONE[run.outcome], run.outcome)}
            ${run.version ?? ''}${run.seconds === undefined ? '' : html` in ${duration(run.seconds)}`}`,
      ];
    }),
  );
}

function clusterSection(cluster: StatusPageCluster, index: number): Html {
  const id = `cluster-${index}`;
  const body =
    cluster.error !== undefined
      ? html`<p role="alert">${badge('bad', 'error')} Reading this cluster failed: ${cluster.error}</p>`
      : cluster.pools.length === 0
        ? empty('No pools: no scale set of this cluster has nodes, or none is configured.')
        : html`<div class="overview">${overview(cluster.pools, index)}</div>
            ${cluster.pools.map((pool, poolIndex) => poolSection(pool, `${index}-${poolIndex}`))}`;
  return html`<section class="cluster" aria-labelledby="${id}">
    <h2 id="${id}">Cluster ${cluster.cluster}</h2>
    ${body}
  </section>`;
}

const STYLE = `
:root{color-scheme:light;--fg:#1a1a1a;--muted:#555;--bg:#fff;--panel:#f6f7f9;--line:#d0d4da;--accent:#0b5cad}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header,main{max-width:72rem;margin:0 auto;padding:0 1rem}
header{padding-top:1rem;border-bottom:1px solid var(--line)}
h1{font-size:1.5rem;margin:.5rem 0}
h2{font-size:1.3rem;margin:1.5rem 0 .5rem}
h3{font-size:1.15rem;margin:0 0 .5rem}
h4{font-size:1rem;margin:1.25rem 0 .4rem;color:#333}
.pool{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1.25rem}
.muted{color:var(--muted)}
.small{font-size:.85rem;font-weight:normal}
.big{font-size:1.25rem}
.id,code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere}
.empty{color:var(--muted);font-style:italic;margin:.25rem 0}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.5rem 1rem;margin:0}
.facts div{min-width:0}
.facts .wide{grid-column:span 2}
.overview{margin:0 0 1.25rem}
.overview a{color:var(--accent)}
.facts dt{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.8rem;font-weight:600;border:1px solid;white-space:nowrap}
.good{background:#e3f4e8;color:#14532d;border-color:#86c59b}
.warn{background:#fff4d6;color:#6b4400;border-color:#e0b54c}
.bad{background:#fde7e7;color:#8a1414;border-color:#e39a9a}
.info{background:#e4eefb;color:#0b3d7a;border-color:#8fb3e3}
.neutral{background:#eceef1;color:#333;border-color:#b9bec6}
table{width:100%;border-collapse:collapse;background:var(--bg);font-size:.92rem}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line);overflow-wrap:break-word}
thead th{background:#e9ecf0;font-size:.8rem;text-transform:uppercase;letter-spacing:.03em}
tbody th{font-weight:600}
.chart{margin:0;max-width:26rem}
.chart svg{width:100%;height:6rem;display:block;background:var(--bg);border:1px solid var(--line);border-radius:4px}
.chart .line{fill:none;stroke:var(--accent);stroke-width:2;vector-effect:non-scaling-stroke}
.chart circle{fill:var(--accent)}
.chart .axis{stroke:var(--line)}
.chart .tick{font-size:9px;fill:var(--muted)}
.chart .end{text-anchor:end}
figcaption{font-size:.8rem;color:var(--muted)}
.timeline{list-style:none;margin:0;padding:0;min-width:10rem}
.step{margin:0 0 .3rem}
.bar{display:block;height:.55rem;border-radius:3px;background:#5b8fd1}
.step.capture .bar{background:#c77c02}
.step.build-and-canary .bar,.step.build-and-publish .bar{background:#8e5cc2}
.step.running .bar{background:#0b5cad}
.step.open .bar{background:repeating-linear-gradient(90deg,#5b8fd1 0 6px,transparent 6px 10px)}
.step-text{font-size:.82rem}
footer{max-width:72rem;margin:0 auto;padding:1rem;color:var(--muted);font-size:.85rem}
@media (max-width:40rem){
 header,main{padding:0 .6rem}
 .facts .wide{grid-column:auto}
 caption{display:block}
 .pool{padding:.6rem}
 table,thead,tbody,tr,th,td{display:block;width:100%}
 thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 tr{border:1px solid var(--line);border-radius:6px;margin:0 0 .5rem;padding:.25rem .5rem;background:var(--bg)}
 th,td{border:0;padding:.15rem 0}
 tbody th::before,td::before{content:attr(data-label);display:block;font-size:.72rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
}
`;

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
          ${new Html(STYLE + CONVERGENCE_STYLE)}
        </style>
      </head>
      <body>
        <header>
          <h1>Node pool images</h1>
          <p class="muted">
            ${input.clusters.length} cluster${input.clusters.length === 1 ? '' : 's'}, ${pools}
            pool${pools === 1 ? '' : 's'}; read ${time(input.generatedAt)}. Freshness is the age of the
            patches a new node boots with: ${badge('good', 'fresh')} up to ${duration(FRESH_SECONDS)},
            ${badge('warn', 'ageing')} up to ${duration(STALE_SECONDS)}, ${badge('bad', 'stale')} beyond.
          </p>
        </header>
        <main>${body}</main>
        <footer>vmss-prototype status page. The same data: <code>vmss-prototype status --json</code>.</footer>
      </body>
    </html> `;
  return page.text;
}
