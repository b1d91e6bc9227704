/**
 * RFC 3339 date-times, the one parser: kured's annotations, Kubernetes condition times, our version tags
 * and ARM's publication dates all go through it, so "valid" means the same everywhere.
 */

/**
 * Parses an RFC 3339 date-time with a mandatory offset (`Z` or `±hh:mm`), as Go's `time.RFC3339`
 * writes it, into epoch milliseconds; undefined for anything else (dates only, no zone, out-of-range
 * fields). Fractions beyond milliseconds are truncated.
 */
export function parseRfc3339(value: string): number | undefined {
  const match = RFC3339.exec(value);
  if (match === null) {
    return undefined;
  }
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHour, offsetMinute] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour);
  const mi = Number(minute);
  const s = Number(second);
  const oh = Number(offsetHour ?? 0);
  const om = Number(offsetMinute ?? 0);
  if (
    mo < 1 ||
    mo > 12 ||
    d < 1 ||
    d > daysInMonth(y, mo) ||
    h > 23 ||
    mi > 59 ||
    s > 59 ||
    oh > 23 ||
    om > 59
  ) {
    return undefined;
  }
  const ms = fraction === undefined ? 0 : Number(fraction.slice(1, 4).padEnd(3, '0'));
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms));
  date.setUTCFullYear(y); // Date.UTC maps years 0–99 to 1900–1999
  const offsetMs = zulu === undefined ? (sign === '-' ? -1 : 1) * (oh * 60 + om) * 60_000 : 0;
  return date.getTime() - offsetMs;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** True for an RFC 3339 date-time with a time zone that names a real instant. */
export function isRfc3339(value: string): boolean {
  return parseRfc3339(value) !== undefined;
}
