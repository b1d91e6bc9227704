/**
 * The schema of a PoolImagePolicy's spec (docs/pool-policy.md): the same fields, limits and messages as the
 * pool settings they override (settings.ts, retirement-settings.ts), so that a value is accepted in the
 * cluster exactly when it would be in the settings. The CRD's OpenAPI schema
 * (infra/kubernetes/pool-image-policy.crd.yaml) states the same shape to the API server;
 * tests/infra/pool-policy-crd.test.ts keeps the two equal. `parsePoolPolicySpec` reports every problem at
 * once, each naming its field (`spec.canary.soak`) and what is accepted.
 */
import { z } from 'zod';

import { definedOnly } from '../domain/optional.js';
import type { PolicyProblem, PoolPolicySpec } from '../domain/pool-policy.js';
import { IDENTIFIER_RULE } from './names.js';
import { Budget, RETIREMENT_FIELDS, Window } from './retirement-settings.js';
import { duration, Flag, strictObject } from './schema-blocks.js';
import { CANARY_FIELDS, CAPTURE_MODES, CAPTURE_MODES_ACCEPTED, GENERATION_FIELDS } from './settings.js';
import { formatIssue, fromZodIssue } from './settings-issues.js';

const VERSION_ACCEPTS = 'a gallery image version name: Major.Minor.Patch, e.g. 2026.1123.101500 (see status)';
const VersionName = z
  .string({ error: VERSION_ACCEPTS })
  .regex(/^\d{1,10}\.\d{1,10}\.\d{1,10}$/, { error: VERSION_ACCEPTS });

const GENERATION_ACCEPTS = `${VERSION_ACCEPTS}, or "unknown" for the nodes built from the pool's original image`;

/** The spec's fields, as the CRD names them (durations as the settings write them: "5m", "14d"). */
export const POOL_POLICY_SPEC_FIELDS = {
  paused: Flag,
  capture: strictObject(
    { mode: z.enum(CAPTURE_MODES, { error: CAPTURE_MODES_ACCEPTED }).optional() },
    'capture: { "mode" }',
  ),
  pinVersion: Flag,
  canary: strictObject(
    {
      enabled: CANARY_FIELDS.enabled.optional(),
      instances: CANARY_FIELDS.instances.optional(),
      soak: CANARY_FIELDS.soak.optional(),
      deadline: CANARY_FIELDS.deadline.optional(),
      afterPass: CANARY_FIELDS.afterPass.optional(),
      afterFail: CANARY_FIELDS.afterFail.optional(),
    },
    'the canary gate: { enabled, instances, soak, deadline, afterPass, afterFail }, all optional (the check pod stays in the settings)',
  ),
  generations: strictObject(
    {
      maxGenerationsBehind: GENERATION_FIELDS.maxGenerationsBehind.optional(),
      taintEffect: GENERATION_FIELDS.taintEffect.optional(),
    },
    'node generations: { maxGenerationsBehind, taintEffect }, all optional',
  ),
  retirement: strictObject(
    {
      enabled: RETIREMENT_FIELDS.enabled.optional(),
      olderThan: RETIREMENT_FIELDS.olderThan.optional(),
      keepGenerations: RETIREMENT_FIELDS.keepGenerations.optional(),
      budget: Budget.optional(),
      windows: z
        .array(Window, { error: 'a list of retirement windows' })
        .max(20, { error: 'at most 20 windows' })
        .optional(),
      surge: RETIREMENT_FIELDS.surge.optional(),
      drainTimeout: duration(60, 6 * 3_600).optional(),
    },
    'retirement: { enabled, olderThan, keepGenerations, budget, windows, surge, drainTimeout }, all optional',
  ),
  rollbackTo: VersionName,
  retire: strictObject(
    {
      generation: z
        .string({ error: GENERATION_ACCEPTS })
        .regex(/^(\d{1,10}\.\d{1,10}\.\d{1,10}|unknown)$/, { error: GENERATION_ACCEPTS }),
    },
    'retire: { "generation" }: the generation whose nodes to retire',
  ),
};

const SpecSchema = strictObject(
  {
    paused: POOL_POLICY_SPEC_FIELDS.paused.default(false),
    capture: POOL_POLICY_SPEC_FIELDS.capture.optional(),
    pinVersion: POOL_POLICY_SPEC_FIELDS.pinVersion.optional(),
    canary: POOL_POLICY_SPEC_FIELDS.canary.optional(),
    generations: POOL_POLICY_SPEC_FIELDS.generations.optional(),
    retirement: POOL_POLICY_SPEC_FIELDS.retirement.optional(),
    rollbackTo: POOL_POLICY_SPEC_FIELDS.rollbackTo.optional(),
    retire: POOL_POLICY_SPEC_FIELDS.retire.optional(),
  },
  `a PoolImagePolicy spec: { ${Object.keys(POOL_POLICY_SPEC_FIELDS).join(', ')} }, all optional`,
);

export type ParsedPoolPolicySpec =
  | { readonly ok: true; readonly spec: PoolPolicySpec }
  | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

/** The object's name: its pool's, as the settings name pools. */
export function poolPolicyNameProblem(name: string): PolicyProblem | undefined {
  if (IDENTIFIER_RULE.test(name)) return undefined;
  return {
    field: 'metadata.name',
    message: `got "${name}"; expected the pool's name, ${IDENTIFIER_RULE.accepts}: create the object again under its pool's name`,
  };
}

/** Validates a spec as the API server stored it; every problem at once. */
export function parsePoolPolicySpec(raw: unknown): ParsedPoolPolicySpec {
  const result = SpecSchema.safeParse(raw ?? {}, { reportInput: true });
  if (!result.success) {
    return {
      ok: false,
      problems: result.error.issues.flatMap((issue) =>
        fromZodIssue(issue, ['spec']).map((rawIssue) => {
          const field = rawIssue.path
            .map((segment, index) =>
              typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${segment}`,
            )
            .join('');
          return { field, message: formatIssue({ ...rawIssue, path: field }).slice(field.length + 2) };
        }),
      ),
    };
  }
  const value = result.data;
  const c = value.canary;
  const g = value.generations;
  const r = value.retirement;
  return {
    ok: true,
    spec: {
      paused: value.paused,
      ...definedOnly({
        captureMode: value.capture?.mode,
        pinVersion: value.pinVersion,
        rollbackTo: value.rollbackTo,
      }),
      ...(c === undefined
        ? {}
        : {
            canary: definedOnly({
              enabled: c.enabled,
              instances: c.instances,
              soakSeconds: c.soak,
              deadlineSeconds: c.deadline,
              afterPass: c.afterPass,
              afterFail: c.afterFail,
            }),
          }),
      ...(g === undefined
        ? {}
        : {
            generations: definedOnly({
              maxGenerationsBehind: g.maxGenerationsBehind,
              taintEffect: g.taintEffect,
            }),
          }),
      ...(r === undefined
        ? {}
        : {
            retirement: definedOnly({
              enabled: r.enabled,
              olderThanSeconds: r.olderThan,
              keepGenerations: r.keepGenerations,
              budget: r.budget,
              windows: r.windows?.map((window) => ({
                schedule: window.schedule,
                durationSeconds: window.duration,
              })),
              surge: r.surge,
              drainTimeoutSeconds: r.drainTimeout,
            }),
          }),
      ...(value.retire === undefined ? {} : { retire: { generation: value.retire.generation } }),
    },
  };
}
