/**
 * RBAC for the simulated ARM: an authorizer decides whether the caller may perform an action on a
 * scope. `createActionListAuthorizer` grants exactly the actions of infra/azure/compute-actions.json
 * (the list the custom role is built from) and records which ones were used and denied.
 */
import { readFileSync } from 'node:fs';

import { z } from 'zod';

/** Decides whether `action` (e.g. `Microsoft.Compute/snapshots/write`) is allowed on `scope` (a resource id). */
export type ArmAuthorizer = (action: string, scope: string) => boolean;

export interface ActionListAuthorizer extends ArmAuthorizer {
  /** The actions the file grants, as written. */
  readonly allowed: readonly string[];
  /** Distinct granted actions that requests used, sorted. */
  used(): string[];
  /** Distinct actions that were denied, sorted. */
  denied(): string[];
}

export const ComputeActionEntry = z.object({
  action: z.string().regex(
    // Beyond Microsoft.Compute only the linked checks of creating a scale set (scale-set-links.ts): join
    // on a subnet or backend pool, assign on an identity; never a read, write or delete there.
    /^(Microsoft\.Compute\/[A-Za-z]+(\/[A-Za-z]+)*\/(read|write|delete|action)|Microsoft\.Network\/[A-Za-z]+(\/[A-Za-z]+)*\/join\/action|Microsoft\.ManagedIdentity\/userAssignedIdentities\/assign\/action)$/,
    'must be a Microsoft.Compute action without wildcards, or a linked check of a scale set creation ' +
      '(Microsoft.Network …/join/action, Microsoft.ManagedIdentity/userAssignedIdentities/assign/action)',
  ),
  why: z.string().min(10),
});
export type ComputeActionEntry = z.infer<typeof ComputeActionEntry>;

export const ComputeActions = z.array(ComputeActionEntry).superRefine((entries, context) => {
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const key = entry.action.toLowerCase();
    if (seen.has(key))
      context.addIssue({
        code: 'custom',
        path: [index, 'action'],
        message: `duplicate action ${entry.action}`,
      });
    seen.add(key);
  }
});
export type ComputeActions = z.infer<typeof ComputeActions>;

/** Reads and validates an actions file; throws with every problem listed. */
export function loadComputeActions(actionsFile: string): ComputeActions {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(actionsFile, 'utf8'));
  } catch (error) {
    throw new Error(`reading compute actions ${actionsFile}: ${String(error)}`, { cause: error });
  }
  const parsed = ComputeActions.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`reading compute actions ${actionsFile}: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Authorizer that allows exactly the listed actions (case-insensitively, as Azure RBAC compares them). */
export function createActionListAuthorizer(actionsFile: string): ActionListAuthorizer {
  const actions = loadComputeActions(actionsFile).map((entry) => entry.action);
  return actionListAuthorizer(actions);
}

export function actionListAuthorizer(actions: readonly string[]): ActionListAuthorizer {
  // Lower-cased action → the spelling in the list, so `used()` reads like the role file.
  const granted = new Map(actions.map((action) => [action.toLowerCase(), action]));
  const used = new Set<string>();
  const denied = new Set<string>();
  function authorize(action: string, _scope: string): boolean {
    const listed = granted.get(action.toLowerCase());
    if (listed !== undefined) {
      used.add(listed);
      return true;
    }
    denied.add(action);
    return false;
  }
  return Object.assign(authorize, {
    allowed: [...actions],
    used: () => [...used].sort(),
    denied: () => [...denied].sort(),
  });
}

/** Authorizer for worlds that do not check RBAC. */
export function allowAllAuthorizer(): ArmAuthorizer {
  return () => true;
}
