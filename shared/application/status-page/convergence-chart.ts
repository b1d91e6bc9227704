/**
 * A pool's convergence on the status page: a small inline SVG stacked chart of its nodes per
 * generation over time — the readings its runs left on the pool lease (shared/domain/generation-samples.ts)
 * and the nodes as `status` read them now — with a text legend that reads without colour, and one line
 * on retirement's pace. The generation new nodes get is one strong colour at the bottom of the stack,
 * older ones progressively greyer above it, `unknown` (the pool's original image) and `unlabelled`
 * hatched. Nothing fetched, no script: the page's CSP holds. Pure.
 */
import type { PoolConvergence } from '../../domain/convergence.js';
import {
  describeGenerationCounts,
  describeRetirementPace,
  generationOrder,
} from '../../domain/convergence.js';
import type { GenerationSample } from '../../domain/generation-samples.js';
import { UNLABELLED_GENERATION } from '../../domain/generation-samples.js';
import { UNKNOWN_GENERATION } from '../../domain/generations.js';
import { parseRfc3339 } from '../../domain/rfc3339.js';
import type { Html } from './html.js';
import { empty, html, shortDate } from './html.js';

const WIDTH = 320;
const HEIGHT = 120;
const PAD = { left: 6, right: 6, top: 14, bottom: 16 } as const;

/** Older generations beyond these all get the last, palest grey. */
const OLDER_SHADES = 4;

/** The CSS class of a generation's band and legend swatch: `newest`, `older-1`…, `unknown`, `unlabelled`. */
export function bandClass(generation: string, order: readonly string[], newest: string | undefined): string {
  if (generation === UNKNOWN_GENERATION) return 'unknown';
  if (generation === UNLABELLED_GENERATION) return 'unlabelled';
  if (generation === newest) return 'newest';
  const older = order.filter((name) => name !== newest && name !== UNKNOWN_GENERATION);
  return `older-${Math.min(OLDER_SHADES, older.indexOf(generation) + 1)}`;
}

function nodes(count: number): string {
  return `${count} node${count === 1 ? '' : 's'}`;
}

interface Point {
  /** Epoch ms. */
  readonly ms: number;
  readonly counts: Readonly<Record<string, number>>;
}

/** The readings and then the nodes now. */
function pointsOf(convergence: PoolConvergence): { readings: Point[]; now: Point } {
  const nowMs = parseRfc3339(convergence.now.at) ?? 0;
  const readings = convergence.samples.map((sample: GenerationSample) => ({
    // A reading stamped after `now` (another runner's clock ahead) is drawn at now.
    ms: Math.min(nowMs, parseRfc3339(sample.at) ?? nowMs),
    counts: sample.counts,
  }));
  return { readings, now: { ms: nowMs, counts: convergence.now.counts } };
}

function countOf(point: Point, generation: string): number {
  return point.counts[generation] ?? 0;
}

/**
 * The chart, its legend and the retirement line for one pool; `id` makes the SVG's ids unique on the
 * page. Between two readings the bands are straight lines: the record knows the counts only at each.
 */
export function convergenceSection(convergence: PoolConvergence, pool: string, id: string): Html {
  const { readings, now } = pointsOf(convergence);
  const newest = convergence.newest;
  const points = [...readings, now];
  const order = generationOrder(
    [...points.flatMap((point) => Object.keys(point.counts)), ...(newest === undefined ? [] : [newest])],
    newest,
  );
  const retirement = html`<p class="retirement">
    ${describeRetirementPace(convergence.retirement, new Date(convergence.now.at))}
  </p>`;
  const below = (point: Point, index: number): number =>
    order.slice(0, index).reduce((sum, name) => sum + countOf(point, name), 0);
  const maxNodes = Math.max(0, ...points.map((point) => below(point, order.length)));
  if (maxNodes === 0) return html`${empty('No nodes now and no readings recorded yet.')}${retirement}`;

  // Only the nodes now (or every reading at this moment): drawn across the whole width.
  const startMs = points[0]?.ms ?? now.ms;
  const drawn = startMs < now.ms ? points : [{ ms: now.ms - 1, counts: now.counts }, now];
  const fromMs = drawn[0]?.ms ?? now.ms;
  const x = (ms: number): string =>
    (PAD.left + ((ms - fromMs) / Math.max(1, now.ms - fromMs)) * (WIDTH - PAD.left - PAD.right)).toFixed(1);
  const y = (count: number): string =>
    (PAD.top + (1 - count / maxNodes) * (HEIGHT - PAD.top - PAD.bottom)).toFixed(1);

  const bands = order.flatMap((generation, index) => {
    if (drawn.every((point) => countOf(point, generation) === 0)) return [];
    const top = drawn.map((point) => `${x(point.ms)},${y(below(point, index) + countOf(point, generation))}`);
    const bottom = drawn.map((point) => `${x(point.ms)},${y(below(point, index))}`).reverse();
    const kind = bandClass(generation, order, newest);
    const hatched = kind === 'unknown' || kind === 'unlabelled';
    return [
      html`<polygon
        class="band ${kind}"
        data-generation="${generation}"
        points="${[...top, ...bottom].join(' ')}"
        ${hatched ? html`fill="url(#${id}-${kind})"` : ''}
      >
        <title>${generation}: ${nodes(countOf(now, generation))} now</title>
      </polygon>`,
    ];
  });
  const ticks = readings.map(
    (point) =>
      html`<line
        class="reading"
        x1="${x(point.ms)}"
        x2="${x(point.ms)}"
        y1="${HEIGHT - PAD.bottom}"
        y2="${HEIGHT - PAD.bottom + 3}"
      />`,
  );
  const nowText = describeGenerationCounts(now.counts, order);
  const title = `pool ${pool}: nodes per generation over time; now ${nowText}`;
  const first = convergence.samples[0];
  const desc =
    first === undefined
      ? `No earlier readings recorded; now ${nowText}.`
      : `${readings.length} reading${readings.length === 1 ? '' : 's'} from ${shortDate(first.at)} UTC; ` +
        `at the first ${describeGenerationCounts(first.counts, order)}; now ${nowText}.`;
  const legend = order.map((generation) => {
    const count = countOf(now, generation);
    return html`<li>
      <span class="swatch ${bandClass(generation, order, newest)}" aria-hidden="true"></span
      >${generation}${generation === newest ? ' (new nodes get it)' : ''}:
      ${nodes(count)}${count === 0 ? ' now' : ''}
    </li>`;
  });
  return html`<figure class="chart convergence">
      <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc">
        <title id="${id}-title">${title}</title>
        <desc id="${id}-desc">${desc}</desc>
        <defs>
          <pattern
            id="${id}-unknown"
            width="6"
            height="6"
            patternUnits="userSpaceOnUse"
            patternTransform="rotate(45)"
          >
            <rect width="6" height="6" class="hatch-ground" />
            <line x1="0" y1="0" x2="0" y2="6" class="hatch" />
          </pattern>
          <pattern
            id="${id}-unlabelled"
            width="6"
            height="6"
            patternUnits="userSpaceOnUse"
            patternTransform="rotate(-45)"
          >
            <rect width="6" height="6" class="hatch-ground light" />
            <line x1="0" y1="0" x2="0" y2="6" class="hatch light" />
          </pattern>
        </defs>
        ${bands}
        <line
          x1="${PAD.left}"
          y1="${HEIGHT - PAD.bottom}"
          x2="${WIDTH - PAD.right}"
          y2="${HEIGHT - PAD.bottom}"
          class="axis"
        />
        ${ticks}
        <text x="${PAD.left}" y="${PAD.top - 4}" class="tick">${nodes(maxNodes)}</text>
        <text x="${PAD.left}" y="${HEIGHT - 3}" class="tick">
          ${first === undefined ? '' : shortDate(first.at)}
        </text>
        <text x="${WIDTH - PAD.right}" y="${HEIGHT - 3}" class="tick end">now</text>
      </svg>
      <figcaption>
        Nodes per
        generation${first === undefined ? ' now (no earlier readings: each run that holds the pool records one)' : ', as the runs that held the pool counted them, and now'}:
        <ul class="legend">
          ${legend}
        </ul>
      </figcaption>
    </figure>
    ${retirement}`;
}

/** The chart's styles, added to the page's. */
export const CONVERGENCE_STYLE = `
.chart.convergence svg{height:auto;aspect-ratio:${WIDTH}/${HEIGHT}}
.convergence .band{stroke:var(--bg);stroke-width:.5}
.convergence .newest{fill:#0b5cad;background:#0b5cad}
.convergence .older-1{fill:#6d7f96;background:#6d7f96}
.convergence .older-2{fill:#97a2b1;background:#97a2b1}
.convergence .older-3{fill:#b9c0ca;background:#b9c0ca}
.convergence .older-4{fill:#d3d8de;background:#d3d8de}
.convergence .hatch-ground{fill:#e9ecf0}
.convergence .hatch{stroke:#6b7280;stroke-width:2}
.convergence .hatch-ground.light{fill:#f4f5f7}
.convergence .hatch.light{stroke:#a3a9b3}
.convergence .swatch.unknown{background:repeating-linear-gradient(45deg,#6b7280 0 2px,#e9ecf0 2px 5px)}
.convergence .swatch.unlabelled{background:repeating-linear-gradient(-45deg,#a3a9b3 0 2px,#f4f5f7 2px 5px)}
.convergence .reading{stroke:var(--muted)}
.legend{list-style:none;margin:.2rem 0 0;padding:0;display:flex;flex-wrap:wrap;gap:.1rem 1rem;color:var(--fg)}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;border:1px solid var(--line);vertical-align:-.05em}
.retirement{margin:.3rem 0 0;font-size:.9rem}
`;
