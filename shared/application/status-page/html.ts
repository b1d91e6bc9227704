/**
 * The status page's HTML building blocks (render-status-page.ts, convergence-chart.ts): the `html` tagged
 * template, which escapes every interpolated text and keeps what is already rendered, and small elements
 * several sections share. Pure.
 */
import { formatDuration } from '../../domain/duration-text.js';
import { parseRfc3339 } from '../../domain/rfc3339.js';
import type { Tone } from './view-model.js';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replaceAll(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

/** Tagged template: interpolated strings are escaped; `Html` values (already rendered) are kept. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Part = Html | string | number | undefined | readonly Html[];

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  for (const [index, value] of values.entries()) {
    out += partText(value) + (strings[index + 1] ?? '');
  }
  return new Html(out);
}

function partText(value: Part): string {
  if (value === undefined) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly Html[]).map((item) => item.text).join('');
  return escapeHtml(String(value));
}

/** An RFC 3339 time as `2026-11-23 20:15:03 UTC` in a <time> element. */
export function time(value: string | undefined): Html {
  if (value === undefined) return html`<span class="muted">unknown</span>`;
  const ms = parseRfc3339(value);
  if (ms === undefined) return html`${value}`;
  const text = `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return html`<time datetime="${new Date(ms).toISOString()}">${text}</time>`;
}

export function shortDate(value: string | undefined): string {
  const ms = value === undefined ? undefined : parseRfc3339(value);
  return ms === undefined ? '' : new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** An empty state, in words. */
export function empty(text: string): Html {
  return html`<p class="empty">${text}</p>`;
}

/** A duration in words, `unknown` when absent. */
export function duration(seconds: number | undefined): string {
  return seconds === undefined || !Number.isFinite(seconds) ? 'unknown' : formatDuration(Math.round(seconds));
}

/** A status label: always text, the colour (its tone) only repeats it. */
export function badge(tone: Tone, text: string): Html {
  return html`<span class="badge ${tone}">${text}</span>`;
}

/** A table that collapses to labelled rows on a narrow screen (each cell carries its column's name). */
export function table(
  caption: string,
  header: readonly string[],
  rows: readonly (readonly Part[])[],
  /** A class per row (e.g. `attention`), by index; none when absent. */
  rowClass?: (index: number) => string,
): Html {
  const head = header.map((title) => html`<th scope="col">${title}</th>`);
  const body = rows.map(
    (row, index) =>
      html`<tr${rowClass === undefined || rowClass(index) === '' ? '' : html` class="${rowClass(index)}"`}>
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
