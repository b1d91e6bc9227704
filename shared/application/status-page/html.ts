/**
 * The status page's HTML building blocks (render-status-page.ts, convergence-chart.ts): the `html` tagged
 * template, which escapes every interpolated text and keeps what is already rendered, and small elements
 * several sections share. Pure.
 */
import { parseRfc3339 } from '../../domain/rfc3339.js';

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
