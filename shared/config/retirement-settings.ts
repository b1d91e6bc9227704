/**
 * `promotion.retirement` (docs/retirement.md): retiring nodes of older generations at the
 * operator's pace. Off by default; a cluster's fields are the defaults of its pools, a pool's override
 * them field by field (its `windows` replace the cluster's as a whole). `retire --generation V` uses the
 * budget, surge and drain timeout whether or not scheduled retirement is enabled.
 */
import { z } from 'zod';

import { definedOnly } from '../domain/optional.js';
import type { RetirementSettings } from '../domain/retirement.js';
import { NCRONTAB_FORMAT, ncrontabProblem } from './ncrontab.js';
import { duration, Flag, integer, strictObject } from './schema-blocks.js';

export type { RetirementSettings };

const BUDGET_ACCEPTS =
  'how many nodes a window may retire: a number of nodes (e.g. 1) or a percentage of the pool\'s capacity, rounded up (e.g. "20%")';

export const Budget = z.union([z.number(), z.string()], { error: BUDGET_ACCEPTS }).transform((value, ctx) => {
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 1 && value <= 1_000) return { nodes: value };
  } else {
    const percent = /^\s*(\d{1,3})\s*%\s*$/.exec(value);
    const number = percent?.[1] === undefined ? NaN : Number(percent[1]);
    if (number >= 1 && number <= 100) return { percent: number };
    if (/^\s*\d{1,4}\s*$/.test(value) && Number(value) >= 1 && Number(value) <= 1_000) {
      return { nodes: Number(value) };
    }
  }
  ctx.issues.push({ code: 'custom', message: `${BUDGET_ACCEPTS}; from 1 node or 1% up`, input: value });
  return z.NEVER;
});

const Schedule = z.string({ error: NCRONTAB_FORMAT }).superRefine((expression, ctx) => {
  const problem = ncrontabProblem(expression);
  if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: expression });
});

export const Window = strictObject(
  { schedule: Schedule, duration: duration(60, 7 * 86_400) },
  'a retirement window: { "schedule": NCRONTAB (UTC, e.g. "0 0 2 * * sat"), "duration": e.g. "4h" }',
);

export const RETIREMENT_FIELDS = {
  enabled: Flag,
  olderThan: duration(3_600, 365 * 86_400),
  keepGenerations: integer(1, 50),
  budget: Budget,
  windows: z
    .array(Window, { error: 'a list of retirement windows' })
    .max(20, { error: 'at most 20 windows' }),
  surge: Flag,
  drainTimeout: duration(60, 6 * 3_600),
};
const ACCEPTS = `retirement: { ${Object.keys(RETIREMENT_FIELDS).join(', ')} }, all optional`;

export const DEFAULT_RETIREMENT = {
  enabled: false,
  budget: { nodes: 1 },
  windows: [],
  surge: true,
  drainTimeout: 15 * 60,
} as const;

/** Scheduled retirement needs to know which generations are due. */
function enabledNeedsARule(
  retirement: { enabled?: boolean; olderThan?: number; keepGenerations?: number },
  ctx: z.RefinementCtx<{ enabled?: boolean; olderThan?: number; keepGenerations?: number }>,
): void {
  if (
    retirement.enabled === true &&
    retirement.olderThan === undefined &&
    retirement.keepGenerations === undefined
  ) {
    ctx.issues.push({
      code: 'custom',
      path: ['enabled'],
      input: true,
      message:
        'scheduled retirement needs "olderThan" (e.g. "14d") or "keepGenerations" (e.g. 2): which generations are due',
    });
  }
}

export const ClusterRetirement = strictObject(
  {
    enabled: RETIREMENT_FIELDS.enabled.default(DEFAULT_RETIREMENT.enabled),
    olderThan: RETIREMENT_FIELDS.olderThan.optional(),
    keepGenerations: RETIREMENT_FIELDS.keepGenerations.optional(),
    budget: RETIREMENT_FIELDS.budget.default({ ...DEFAULT_RETIREMENT.budget }),
    windows: RETIREMENT_FIELDS.windows.default([]),
    surge: RETIREMENT_FIELDS.surge.default(DEFAULT_RETIREMENT.surge),
    drainTimeout: RETIREMENT_FIELDS.drainTimeout.default(DEFAULT_RETIREMENT.drainTimeout),
  },
  ACCEPTS,
)
  .superRefine(enabledNeedsARule)
  .prefault({});

export const PoolRetirement = strictObject(
  {
    enabled: RETIREMENT_FIELDS.enabled.optional(),
    olderThan: RETIREMENT_FIELDS.olderThan.optional(),
    keepGenerations: RETIREMENT_FIELDS.keepGenerations.optional(),
    budget: RETIREMENT_FIELDS.budget.optional(),
    windows: RETIREMENT_FIELDS.windows.optional(),
    surge: RETIREMENT_FIELDS.surge.optional(),
    drainTimeout: RETIREMENT_FIELDS.drainTimeout.optional(),
  },
  `a pool's ${ACCEPTS}`,
);

type ClusterRetirementValue = z.output<typeof ClusterRetirement>;
type PoolRetirementValue = z.output<typeof PoolRetirement>;

/** The pool's retirement fields over the cluster's; an issue when enabled without a rule. */
export function resolveRetirement(
  cluster: ClusterRetirementValue,
  pool: PoolRetirementValue | undefined,
): RetirementSettings | { readonly problem: string } {
  const merged = {
    ...cluster,
    ...Object.fromEntries(Object.entries(pool ?? {}).filter(([, value]) => value !== undefined)),
  };
  if (merged.enabled && merged.olderThan === undefined && merged.keepGenerations === undefined) {
    return {
      problem:
        'scheduled retirement needs "olderThan" (e.g. "14d") or "keepGenerations" (e.g. 2): which generations are due',
    };
  }
  return {
    enabled: merged.enabled,
    policy: {
      ...definedOnly({ olderThanSeconds: merged.olderThan, keepGenerations: merged.keepGenerations }),
      budget: merged.budget,
      windows: merged.windows.map((window) => ({
        schedule: window.schedule,
        durationSeconds: window.duration,
      })),
      surge: merged.surge,
    },
    drainTimeoutSeconds: merged.drainTimeout,
  };
}
