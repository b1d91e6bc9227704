/**
 * A pool's freshness over time on the status page: how old the patches were that a new node booted with,
 * at every moment of the last versions' service — a sawtooth that rises while a version serves and drops
 * when a fresher one replaces it, against the stale line. Each version's donor patch time and the ages are
 * also a text legend (and the SVG's <title> and <desc>), so nothing depends on seeing the picture. Pure.
 */
import type { FreshnessSegment } from '../../domain/pool-history.js';
import { parseRfc3339 } from '../../domain/rfc3339.js';
import type { Html } from './html.js';
import { duration, empty, html, shortDate, time } from './html.js';
import { STALE_SECONDS } from './view-model.js';

const WIDTH = 320;
const HEIGHT = 96;
const PAD = { left: 6, right: 6, top: 10, bottom: 14 } as const;

/** Patch age over time from the versions' freshness segments (oldest first). */
export function freshnessChart(segments: readonly FreshnessSegment[], title: string, id: string): Html {
  if (segments.length === 0) {
    return empty('No freshness history yet: no version of ours with a recorded donor patch time.');
  }
  const startMs = parseRfc3339(segments[0]?.from ?? '') ?? 0;
  const endMs = parseRfc3339(segments.at(-1)?.to ?? '') ?? startMs;
  const spanMs = Math.max(1, endMs - startMs);
  const maxSeen = Math.max(1, ...segments.map((s) => s.ageToSeconds));
  // The stale line is drawn when the ages come near it, so a pool far from stale keeps a readable scale.
  const showStale = maxSeen >= STALE_SECONDS / 2;
  const maxAge = showStale ? Math.max(maxSeen, STALE_SECONDS * 1.1) : maxSeen;
  const x = (value: string): number =>
    PAD.left + (((parseRfc3339(value) ?? startMs) - startMs) / spanMs) * (WIDTH - PAD.left - PAD.right);
  const y = (age: number): number => PAD.top + (1 - age / maxAge) * (HEIGHT - PAD.top - PAD.bottom);
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
  const now = segments.at(-1);
  const label = `${title}: patch age over the last ${segments.length} version${segments.length === 1 ? '' : 's'}, now ${duration(now?.ageToSeconds)}, at most ${duration(maxSeen)}`;
  const description = segments
    .map(
      (s) =>
        `${s.version} served from ${shortDate(s.from)} to ${shortDate(s.to)} UTC, patches ${duration(s.ageFromSeconds)} to ${duration(s.ageToSeconds)} old`,
    )
    .join('; ');
  const staleY = y(STALE_SECONDS).toFixed(1);
  return html`<figure class="chart freshness">
    <svg
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      role="img"
      aria-labelledby="${id}-title ${id}-desc"
      aria-label="${label}"
      preserveAspectRatio="none"
    >
      <title id="${id}-title">${label}</title>
      <desc id="${id}-desc">${description}</desc>
      <line
        x1="${PAD.left}"
        y1="${HEIGHT - PAD.bottom}"
        x2="${WIDTH - PAD.right}"
        y2="${HEIGHT - PAD.bottom}"
        class="axis"
      />
      ${showStale ? html`<line x1="${PAD.left}" y1="${staleY}" x2="${WIDTH - PAD.right}" y2="${staleY}" class="stale-line" />` : ''}
      <polyline points="${points}" class="line" />
      ${dots}
      <text x="${PAD.left}" y="${HEIGHT - 2}" class="tick">${shortDate(segments[0]?.from)}</text>
      <text x="${WIDTH - PAD.right}" y="${HEIGHT - 2}" class="tick end">now</text>
      <text x="${PAD.left}" y="${PAD.top - 2}" class="tick">${duration(maxAge)}</text>
    </svg>
    <figcaption>
      Patch age of a new node over time: it rises while a version serves and drops when a fresher one replaces
      it${showStale ? html`; the dashed line is stale (${duration(STALE_SECONDS)})` : ''}.
    </figcaption>
    <ul class="legend freshness-legend">
      ${[...segments]
        .reverse()
        .map(
          (s) =>
            html`<li>
              <strong>${s.version}</strong>: donor patched ${time(patchedAtOf(s))}; served from
              ${shortDate(s.from)} UTC${s === now ? ' until now' : html` to ${shortDate(s.to)} UTC`}, patches
              ${duration(s.ageFromSeconds)} to ${duration(s.ageToSeconds)} old
            </li>`,
        )}
    </ul>
  </figure>`;
}

/** The donor's patch time of a segment: its start less the age then. */
function patchedAtOf(segment: FreshnessSegment): string | undefined {
  const fromMs = parseRfc3339(segment.from);
  return fromMs === undefined ? undefined : new Date(fromMs - segment.ageFromSeconds * 1000).toISOString();
}

export const FRESHNESS_STYLE = `
.chart .stale-line{stroke:#c0392b;stroke-dasharray:4 3;vector-effect:non-scaling-stroke}
.freshness-legend{margin:.3rem 0 0;padding-left:1.1rem;font-size:.82rem}
`;
