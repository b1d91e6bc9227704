/**
 * The building blocks of the settings schema (settings.ts, retirement-settings.ts): every schema carries
 * the sentence "what is accepted" as its error message; the issue formatter adds the field path and the
 * (redacted, truncated) value received.
 */
import { z } from 'zod';

import { DURATION_FORMAT, formatDuration, parseDuration } from './duration.js';
import type { NameRule } from './names.js';
import { INLINE_SECRET_HINT, secretKind } from './secret-reference.js';
import { FIELDS_MARKER } from './settings-issues.js';

/** A strict object (unknown keys are errors, typos must not be ignored) whose messages name its fields. */
export function strictObject<T extends z.ZodRawShape>(shape: T, accepts: string) {
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') return `${FIELDS_MARKER}${Object.keys(shape).join(',')}`;
      if (
        issue.code === 'invalid_type' &&
        typeof issue.input === 'string' &&
        secretKind(issue.input) !== undefined
      ) {
        return INLINE_SECRET_HINT;
      }
      return accepts;
    },
  });
}

export function named(rule: NameRule) {
  return z.string({ error: rule.accepts }).refine(rule.test, { error: rule.accepts });
}

export function integer(min: number, max: number) {
  const accepts = `an integer from ${min} to ${max}`;
  return z.union([z.number(), z.string()], { error: accepts }).transform((value, ctx) => {
    const number = typeof value === 'number' ? value : /^\s*\d{1,10}\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(number) || number < min || number > max) {
      ctx.issues.push({ code: 'custom', message: accepts, input: value });
      return z.NEVER;
    }
    return number;
  });
}

/** A duration in settings, parsed to whole seconds. */
export function duration(minSeconds: number, maxSeconds: number) {
  const accepts = `${DURATION_FORMAT}; from ${formatDuration(minSeconds)} to ${formatDuration(maxSeconds)}`;
  return z.union([z.string(), z.number()], { error: accepts }).transform((value, ctx) => {
    const parsed = parseDuration(value);
    if (!parsed.ok) {
      ctx.issues.push({ code: 'custom', message: `${accepts} (${parsed.problem})`, input: value });
      return z.NEVER;
    }
    if (parsed.seconds < minSeconds || parsed.seconds > maxSeconds) {
      ctx.issues.push({
        code: 'custom',
        message: `${accepts} (it is ${formatDuration(parsed.seconds)})`,
        input: value,
      });
      return z.NEVER;
    }
    return parsed.seconds;
  });
}

export function uniqueList<T extends z.ZodType>(item: T, accepts: string, max: number) {
  return z
    .array(item, { error: accepts })
    .max(max, { error: `${accepts}, at most ${max}` })
    .superRefine((values, ctx) => {
      const seen = new Set<string>();
      for (const [index, value] of values.entries()) {
        const key = String(value).toLowerCase();
        if (seen.has(key))
          ctx.issues.push({ code: 'custom', message: `${accepts}, each once`, input: value, path: [index] });
        seen.add(key);
      }
    });
}

export const Flag = z.boolean({ error: 'true or false' });
