/**
 * Durations as operators write them (`2d2h5m8s`, `1h30m`, `0s`): one format for every message, table and
 * setting, so that what the product prints can be pasted back into the settings.
 */

/** Units largest first, the order they appear in a compound duration. */
export const DURATION_UNIT_SECONDS = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
export type DurationUnit = keyof typeof DURATION_UNIT_SECONDS;
export const DURATION_UNIT_ORDER: readonly DurationUnit[] = ['d', 'h', 'm', 's'];

/** Renders whole seconds (`5400` → `1h30m`, `0` → `0s`); fractions are rounded, negatives read as 0. */
export function formatDuration(seconds: number): string {
  let rest = Math.max(0, Math.round(seconds));
  if (rest === 0) return '0s';
  let text = '';
  for (const unit of DURATION_UNIT_ORDER) {
    const amount = Math.floor(rest / DURATION_UNIT_SECONDS[unit]);
    if (amount > 0) {
      text += `${amount}${unit}`;
      rest -= amount * DURATION_UNIT_SECONDS[unit];
    }
  }
  return text;
}
