/**
 * One pool's section of the status page (render-status-page.ts lays out the page): its facts, convergence
 * and freshness charts, versions, runs with their timelines, canary, held nodes and nodes. Every verdict
 * (plan, run state, generation labels) comes from the view model (view-model.ts). Pure.
 */
import { describeNewNodes } from '../../domain/bootstrap-flavour.js';
import type { RunRecord, RunStep, VersionEntry } from '../../domain/pool-history.js';
import { parseRfc3339 } from '../../domain/rfc3339.js';
import type { PoolStatus } from '../pool-status.js';
import { convergenceSection } from './convergence-chart.js';
import { freshnessChart } from './freshness-chart.js';
import type { Html } from './html.js';
import { badge, duration, empty, html, table, time } from './html.js';
import type { PoolView, RunView, Tone } from './view-model.js';
import { runOutcomeTone } from './view-model.js';

const VERSION_TONE: Readonly<Record<VersionEntry['state'], Tone>> = {
  current: 'good',
  usable: 'info',
  hidden: 'neutral',
  building: 'neutral',
  rejected: 'bad',
  abandoned: 'warn',
  failed: 'bad',
};

/** The patch age in words with its label. */
export function freshnessText(view: PoolView['freshness'], big: boolean): Html {
  const label = badge(view.tone, view.label);
  if (view.ageSeconds === undefined) return label;
  const age = duration(view.ageSeconds);
  return html`${big ? html`<strong class="big">${age}</strong>` : age} ${label}`;
}

/** The run now (or last) in a few words: state, run, since or end, and the way out of a dead one. */
export function runText(run: RunView, long: boolean): Html {
  if (run.state === 'none') return html`<span class="muted">none recorded</span>`;
  const when =
    run.endedAt !== undefined
      ? html`, ended ${time(run.endedAt)}`
      : run.endedBy !== undefined
        ? html`, ended by ${time(run.endedBy)}`
        : run.since === undefined
          ? ''
          : html`, since ${time(run.since)}`;
  const detail = long && run.detail !== undefined ? html`<br /><span class="muted">${run.detail}</span>` : '';
  const wayOut = run.wayOut === undefined ? '' : html`<br />way out: <code>${run.wayOut}</code>`;
  return html`${badge(run.tone, run.label)}
    <span class="id">${run.runId ?? ''}</span>${when}${detail}${wayOut}`;
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
  const openText = run.endedBy === undefined ? html`end not recorded` : html`ended by ${time(run.endedBy)}`;
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
        <strong>${step.seconds === undefined ? openText : duration(step.seconds)}</strong> (from
        ${time(step.from)})</span
      >
    </li>`;
  };
  return html`<ol class="timeline" aria-label="steps of run ${run.runId}">
    ${run.steps.map(bar)}
  </ol>`;
}

function took(run: RunRecord): Html | string {
  if (run.seconds !== undefined) return duration(run.seconds);
  if (run.outcome === 'running') return 'running';
  if (run.endedBy !== undefined && run.secondsAtMost !== undefined) {
    return html`at most ${duration(run.secondsAtMost)} (ended by ${time(run.endedBy)}, when the next run
    started)`;
  }
  return 'end not recorded';
}

function fact(title: string, body: Html | string, wide = false): Html {
  return html`<div class="${wide ? 'wide' : ''}">
    <dt>${title}</dt>
    <dd>${body}</dd>
  </div>`;
}

function summary(pool: PoolStatus, view: PoolView): Html {
  const current = pool.currentVersion;
  const plan = view.eligibility;
  return html`<dl class="facts">
    ${fact(
      'Current version',
      current === undefined
        ? html`<span class="muted">none of ours</span>`
        : html`<strong>${current.name}</strong>`,
    )}
    ${fact('Donor', current?.sourceNode ?? html`<span class="muted">unknown</span>`)}
    ${fact('Built', time(current?.builtAt))}
    ${fact(
      'Freshness',
      html`${freshnessText(view.freshness, true)}<br /><span class="muted">${pool.freshness.detail}</span>`,
    )}
    ${fact(
      'Model image',
      html`${pool.pointsAtOurImage ? badge('good', pool.pinned ? 'ours, pinned' : 'ours, latest') : badge('warn', 'not ours')}
        <span class="id">${pool.modelImage}</span>`,
      true,
    )}
    ${fact(
      'New nodes',
      current === undefined
        ? html`<span class="muted">no version of ours yet</span>`
        : describeNewNodes(current.newNodes ?? 'boot-from-image'),
      true,
    )}
    ${
      pool.capz === undefined
        ? ''
        : fact(
            'CAPZ MachinePool',
            html`<span class="id">${pool.capz.machinePool}</span><br /><span class="muted"
                >${pool.capz.rollout}</span
              >`,
            true,
          )
    }
    ${
      pool.imagePolicy === undefined
        ? ''
        : fact(
            'PoolImagePolicy',
            pool.imagePolicy.valid
              ? html`${badge(pool.imagePolicy.paused ? 'warn' : 'good', pool.imagePolicy.paused ? 'paused' : 'valid')}
                  <span class="muted"
                    >${
                      pool.imagePolicy.overridden.length === 0
                        ? 'overrides no setting'
                        : `overrides ${pool.imagePolicy.overridden.join(', ')}`
                    }</span
                  >`
              : html`${badge('bad', 'invalid')}
                ${pool.imagePolicy.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ')}`,
            true,
          )
    }
    ${fact('Plan', html`${badge(plan.tone, plan.label)} ${plan.reason ?? ''}`, true)}
    ${fact('Run', runText(view.run, true), true)}
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
      html`${badge(runOutcomeTone(run.outcome), run.outcome)}${run.reason === undefined ? '' : html` ${run.reason}`}`,
      run.version ?? '-',
      run.donor ?? '-',
      took(run),
      timeline(run),
    ]),
  );
}

function canarySection(pool: PoolStatus): Html {
  const canary = pool.canary;
  if (canary === undefined) return empty('No canary is running.');
  if (canary.state === 'damaged') return html`<p>${badge('bad', 'damaged')} ${canary.problem}</p>`;
  return html`<p>
    ${badge('info', 'running')} version <strong>${canary.version}</strong>, run
    <span class="id">${canary.runId}</span>, since ${time(canary.startedAt)}: ${canary.count}
    canar${canary.count === 1 ? 'y' : 'ies'}${canary.instances.length === 0 ? '' : html` (${canary.instances.join(', ')})`}
  </p>`;
}

/** Held nodes with their run, since when, and whether that run still runs. */
export function heldNodesTable(view: PoolView, caption: string): Html {
  return table(
    caption,
    ['Node', 'Run', 'Since', 'State', 'Cordoned', 'VM'],
    view.heldNodes.map((node) => [
      node.node,
      html`<span class="id">${node.runId}</span>`,
      time(node.since),
      node.state === 'running' ? badge('info', 'held, running') : badge('bad', 'left behind'),
      node.cordoned ? badge('warn', 'cordoned') : badge('good', 'schedulable'),
      node.vm,
    ]),
  );
}

function holdingsSection(pool: PoolStatus, view: PoolView): Html {
  const ownership = pool.ownership;
  if (ownership === undefined) return empty('Who holds the pool is unknown.');
  const parts: Html[] = [
    view.heldNodes.length === 0 ? empty('No node is held by a run.') : heldNodesTable(view, 'Held nodes'),
  ];
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

function nodesTable(view: PoolView): Html {
  if (view.nodes.length === 0) return empty('The pool has no nodes in the cluster.');
  return table(
    'Node generations',
    ['Node', 'Generation', 'Ready', 'Schedulable'],
    view.nodes.map((node) => [
      node.node,
      html`${node.generation ?? ''} ${badge(node.tone, node.label)}`,
      node.ready ? badge('good', 'ready') : badge('bad', 'not ready'),
      node.cordoned ? badge('warn', 'cordoned') : badge('good', 'yes'),
    ]),
  );
}

export function poolSection(pool: PoolStatus, view: PoolView, id: string): Html {
  return html`<section class="pool" aria-labelledby="${id}">
    <h3 id="${id}">Pool ${pool.pool} <span class="muted small">scale set ${pool.scaleSet}</span></h3>
    ${summary(pool, view)}
    <h4>Freshness</h4>
    ${freshnessChart(pool.history.freshness, `pool ${pool.pool}`, `${id}-freshness`)}
    <h4>Convergence</h4>
    ${convergenceSection(pool.convergence, pool.pool, `${id}-convergence`)}
    <h4>Runs</h4>
    ${runsSection(pool)}
    <h4>Held nodes and leftovers</h4>
    ${holdingsSection(pool, view)}
    <h4>Versions</h4>
    ${versionsTable(pool)}
    <h4>Canary</h4>
    ${canarySection(pool)}
    <h4>Nodes</h4>
    ${nodesTable(view)}
  </section>`;
}
