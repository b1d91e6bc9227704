/**
 * Schedule windows: an NCRONTAB schedule (six fields, seconds first, as the Functions timer's)
 * that opens a window of a given duration at each of its firings, like Karpenter's disruption budget
 * `schedule` + `duration`. Pure: whether a window is open at `now`, and when the next one opens. Only
 * valid expressions are given (settings validate them with shared/config/ncrontab.ts).
 */

export interface ScheduleWindow {
  /** NCRONTAB, e.g. `0 0 2 * * sat` (Saturdays 02:00 UTC). */
  readonly schedule: string;
  readonly durationSeconds: number;
}

interface FieldRange {
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const RANGES: readonly FieldRange[] = [
  { min: 0, max: 59 },
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  {
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { min: 0, max: 6, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

type Fields = readonly [ReadonlySet<number>, ...ReadonlySet<number>[]];

function valueOf(text: string, min: number, names: readonly string[] | undefined): number {
  const index = names?.indexOf(text.toLowerCase()) ?? -1;
  return index >= 0 ? index + min : Number(text);
}

/** The values each field allows. */
export function parseSchedule(expression: string): Fields {
  const parts = expression.trim().split(/\s+/);
  const fields = RANGES.map(({ min, max, names }, index) => {
    const allowed = new Set<number>();
    for (const item of (parts[index] ?? '*').split(',')) {
      const [range = '*', stepText] = item.split('/');
      const step = stepText === undefined ? 1 : Number(stepText);
      const [lowText = '', highText] = range.split('-');
      const low = range === '*' ? min : valueOf(lowText, min, names);
      const high =
        range === '*'
          ? max
          : highText === undefined
            ? stepText === undefined
              ? low
              : max
            : valueOf(highText, min, names);
      for (let value = low; value <= high; value += step) allowed.add(value);
    }
    return allowed;
  });
  const [first, ...rest] = fields;
  if (first === undefined) throw new Error(`parsing schedule "${expression}": no fields`);
  return [first, ...rest];
}

/** Whether the schedule fires at this second (UTC); day of month and day of week must both match. */
export function firesAt(fields: Fields, at: Date): boolean {
  const values = [
    at.getUTCSeconds(),
    at.getUTCMinutes(),
    at.getUTCHours(),
    at.getUTCDate(),
    at.getUTCMonth() + 1,
    at.getUTCDay(),
  ];
  return values.every((value, index) => fields[index]?.has(value) === true);
}

/** Minutes are the resolution: a schedule that fires within a minute fires at that minute's first allowed second. */
function firesInMinute(fields: Fields, minuteStartMs: number): boolean {
  const [seconds] = fields;
  const first = Math.min(...seconds);
  return firesAt(fields, new Date(minuteStartMs + first * 1000));
}

const MINUTE_MS = 60_000;

/** The window open at `now` (its end), if any: the latest firing within `durationSeconds` before now. */
export function openWindowAt(
  windows: readonly ScheduleWindow[],
  now: Date,
): { readonly window: ScheduleWindow; readonly closesAt: Date } | undefined {
  let best: { window: ScheduleWindow; closesAt: Date } | undefined;
  const nowMinute = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
  for (const window of windows) {
    const fields = parseSchedule(window.schedule);
    const lookBack = Math.ceil(window.durationSeconds / 60);
    for (let minutes = 0; minutes <= lookBack; minutes++) {
      const start = nowMinute - minutes * MINUTE_MS;
      if (!firesInMinute(fields, start)) continue;
      const openedAt = start + Math.min(...fields[0]) * 1000;
      const closesAt = openedAt + window.durationSeconds * 1000;
      if (
        openedAt <= now.getTime() &&
        now.getTime() < closesAt &&
        (best === undefined || closesAt > best.closesAt.getTime())
      ) {
        best = { window, closesAt: new Date(closesAt) };
      }
      break;
    }
  }
  return best;
}

/** When the next window opens after `now`, within `horizonDays` (undefined when none does). */
export function nextWindowAt(
  windows: readonly ScheduleWindow[],
  now: Date,
  horizonDays = 8,
): Date | undefined {
  let next: number | undefined;
  const startMinute = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
  for (const window of windows) {
    const fields = parseSchedule(window.schedule);
    for (let minutes = 0; minutes <= horizonDays * 1440; minutes++) {
      const start = startMinute + minutes * MINUTE_MS;
      if (next !== undefined && start >= next) break;
      if (!firesInMinute(fields, start)) continue;
      const openedAt = start + Math.min(...fields[0]) * 1000;
      if (openedAt <= now.getTime()) continue;
      next = openedAt;
      break;
    }
  }
  return next === undefined ? undefined : new Date(next);
}
