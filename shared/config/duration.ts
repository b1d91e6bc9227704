/**
 * Durations in settings (`90`, `90s`, `15m`, `1h30m`, `1.5h`, `2d`) parsed to whole seconds, with messages
 * that say what is accepted.
 */

import {
  DURATION_UNIT_ORDER as UNIT_ORDER,
  DURATION_UNIT_SECONDS as UNIT_SECONDS,
  type DurationUnit as Unit,
  formatDuration,
} from '../domain/duration-text.js';

export { formatDuration };

/** Upper bound of any duration: int32 seconds (68 years) keeps every consumer's arithmetic exact. */
export const MAX_DURATION_SECONDS = 2_147_483_647;

export const DURATION_FORMAT =
  'a duration: whole seconds (90) or a number with unit s, m, h or d (90s, 15m, 1.5h, 2d), units combined largest first (1h30m)';

export type DurationResult =
  { readonly ok: true; readonly seconds: number } | { readonly ok: false; readonly problem: string };

const TERM = /(\d+(?:\.\d+)?)([a-z]+)/gy;

/**
 * Parses a duration to whole seconds. A bare number is seconds. Decimals are accepted when the total is a
 * whole number of seconds (`1.5h` yes, `1.5s` no): rounding would silently change the operator's value.
 * Rejects empty input, signs, unknown units (`ms`, `w`), units out of order or repeated, and totals above
 * {@link MAX_DURATION_SECONDS}.
 */
export function parseDuration(input: string | number): DurationResult {
  if (typeof input === 'number') return fromSecondsNumber(input);
  const text = input.trim();
  if (text.length === 0) return failure('it is empty');
  if (/^-/.test(text)) return failure('it is negative');
  if (/^\d+(\.\d+)?$/.test(text)) return fromSecondsNumber(Number(text));

  TERM.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  let previousRank = -1;
  for (let match = TERM.exec(text); match !== null; match = TERM.exec(text)) {
    const [whole, amountText = '', unitText = ''] = match;
    const rank = UNIT_ORDER.indexOf(unitText as Unit);
    if (rank < 0) return failure(`unit "${unitText}" is not one of s, m, h, d`);
    if (rank <= previousRank) return failure('units must appear once each, largest first (1h30m, not 30m1h)');
    previousRank = rank;
    total += Number(amountText) * UNIT_SECONDS[unitText as Unit];
    consumed += whole.length;
  }
  if (consumed !== text.length || consumed === 0) return failure('it is not a number with an optional unit');
  return checkTotal(total);
}

function fromSecondsNumber(value: number): DurationResult {
  if (!Number.isFinite(value)) return failure('it is not a finite number');
  if (value < 0) return failure('it is negative');
  return checkTotal(value);
}

function checkTotal(total: number): DurationResult {
  // Decimal steps like 0.1h accumulate binary error; anything within a microsecond of a whole second is whole.
  const rounded = Math.round(total);
  if (Math.abs(total - rounded) > 1e-6) return failure('it is not a whole number of seconds');
  if (rounded > MAX_DURATION_SECONDS) return failure(`it exceeds ${MAX_DURATION_SECONDS} seconds`);
  return { ok: true, seconds: rounded };
}

function failure(reason: string): DurationResult {
  return { ok: false, problem: reason };
}
