/**
 * Validation of the timer trigger's NCRONTAB schedule (six fields, seconds first), so a bad schedule fails
 * at settings load with the offending field named instead of when the host indexes the timer.
 */

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

// NCrontab (the library the Functions timer uses): day of week 0–6 with 0 = Sunday; names allowed.
const FIELDS: readonly FieldSpec[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { name: 'day of week', min: 0, max: 6, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

export const NCRONTAB_FORMAT =
  'an NCRONTAB expression with 6 fields "{second} {minute} {hour} {day} {month} {day-of-week}" (e.g. "0 0 3 * * *"); each field *, a value, a range a-b, a list a,b or a step */n or a-b/n';

/** Returns a description of the problem, or undefined when the expression is valid. */
export function ncrontabProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (/^\d+(\.\d+)?:\d{2}:\d{2}$/.test(expression.trim())) {
    return 'TimeSpan schedules (hh:mm:ss) only work on App Service plans, not on Flex Consumption';
  }
  if (fields.length !== 6) return `it has ${fields.length} field${fields.length === 1 ? '' : 's'}, not 6`;
  for (const [index, field] of fields.entries()) {
    const spec = FIELDS[index];
    if (spec === undefined) break;
    const problem = fieldProblem(field, spec);
    if (problem !== undefined) return `${spec.name} field "${field}": ${problem}`;
  }
  return undefined;
}

function fieldProblem(field: string, spec: FieldSpec): string | undefined {
  for (const item of field.split(',')) {
    if (item.length === 0) return 'a list has an empty entry';
    const [range = '', step, ...extra] = item.split('/');
    if (extra.length > 0) return 'more than one "/"';
    if (step !== undefined && !/^[1-9]\d*$/.test(step)) return `step "${step}" is not a positive integer`;
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `"${range}" is not a value or a range`;
    const values: number[] = [];
    for (const bound of bounds) {
      const value = valueOf(bound, spec);
      if (value === undefined) return `"${bound}" is not a value in ${spec.min}–${spec.max}`;
      values.push(value);
    }
    const [low = 0, high = low] = values;
    if (high < low) return `range "${range}" runs backwards`;
  }
  return undefined;
}

function valueOf(text: string, spec: FieldSpec): number | undefined {
  if (/^\d{1,2}$/.test(text)) {
    const value = Number(text);
    return value >= spec.min && value <= spec.max ? value : undefined;
  }
  const index = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  return index < 0 ? undefined : index + spec.min;
}
