/**
 * What to do with one pool on this run: refresh it from a node, leave it (up to date or skipped), or
 * refuse it. Combines scale-set eligibility, the prototype selection and an operator-named node.
 */

import type { BootstrapFlavour, FlavourChoice } from './bootstrap-flavour.js';
import { chooseCaptureFlavour } from './bootstrap-flavour.js';
import type { ClusterNode } from './cluster-node.js';
import { definedOnly } from './optional.js';
import type { PrototypeSelection, RejectionCode } from './prototype-selection.js';
import type { ScaleSetRef } from './resource-id.js';
import type { Ineligibility, ScaleSetEligibility } from './scale-set.js';

export type SkipCode =
  | 'pool-disabled'
  | 'requested-node-not-in-pool'
  | 'requested-node-not-ready'
  | 'requested-node-being-deleted'
  | 'too-few-candidates'
  | 'no-eligible-node';

/** How the prototype was chosen: by the rules, by the rules with patch rules waived, or by the operator. */
export type RefreshTrigger = 'auto' | 'fallback' | 'requested';

interface PlanBase {
  readonly pool: ScaleSetRef;
  /** `now` as ISO 8601, so dry-run output says when the decision was made. */
  readonly plannedAt: string;
}

export type RefreshPlan =
  | (PlanBase & {
      readonly kind: 'refresh';
      readonly node: string;
      readonly trigger: RefreshTrigger;
      readonly why: string;
      /** Things the operator should know but that do not block (advisory rules for a named node). */
      readonly warnings: readonly string[];
      /** How the donor's disk is de-identified (applyBootstrapFlavour); absent until decided. */
      readonly flavour?: Extract<FlavourChoice, { kind: 'capture' }>;
    })
  | (PlanBase & {
      readonly kind: 'up-to-date';
      readonly reason: string;
      readonly warnings: readonly string[];
    })
  | (PlanBase & { readonly kind: 'skip'; readonly code: SkipCode; readonly reason: string })
  | (PlanBase & {
      readonly kind: 'refused';
      readonly reason: string;
      readonly refusals: readonly Ineligibility[];
    });

export interface PoolRefreshInput {
  readonly eligibility: ScaleSetEligibility;
  readonly selection: PrototypeSelection;
  /** False when configuration turned this pool off; default true. */
  readonly enabled?: boolean;
  /** Why the pool is disabled, when not by `pools[].enabled` (a PoolImagePolicy's `spec.paused`). */
  readonly disabledReason?: string;
  /** Node the operator asked to use (HTTP/CLI request) instead of auto selection. */
  readonly requestedNode?: string;
  readonly now: Date;
}

/** Rules that make any capture fail or hit the wrong machine, even when an operator names the node. */
const MEMBERSHIP_RULES: readonly RejectionCode[] = [
  'no-provider-id',
  'unparsable-provider-id',
  'not-in-pool',
];

/**
 * Decides the plan for one pool. Precedence: a disabled pool is skipped; an ineligible scale set is
 * refused (whatever node was named); an operator-named node must be in the pool, Ready, and not being
 * removed by cluster-autoscaler, while every other rule (cordoned, too recently Ready, not patched
 * after the image, control-plane, excluded…) is advisory and becomes a warning, because naming a node
 * is an explicit override; otherwise the auto selection decides.
 */
export function planPoolRefresh(input: PoolRefreshInput): RefreshPlan {
  const { selection } = input;
  const base: PlanBase = { pool: selection.pool, plannedAt: input.now.toISOString() };

  if (input.enabled === false) {
    return {
      ...base,
      kind: 'skip',
      code: 'pool-disabled',
      reason: input.disabledReason ?? 'the pool is disabled in configuration',
    };
  }
  if (!input.eligibility.eligible) {
    const refusals = input.eligibility.reasons;
    return {
      ...base,
      kind: 'refused',
      refusals,
      reason: refusals.map((refusal) => refusal.reason).join('; '),
    };
  }
  if (input.requestedNode !== undefined) {
    return planRequestedNode(base, selection, input.requestedNode);
  }

  switch (selection.outcome) {
    case 'chosen': {
      const node = selection.chosen?.name;
      if (node === undefined) {
        return { ...base, kind: 'skip', code: 'no-eligible-node', reason: selection.reason };
      }
      return {
        ...base,
        kind: 'refresh',
        node,
        trigger: selection.fallback.used ? 'fallback' : 'auto',
        why: selection.reason,
        warnings: [],
      };
    }
    case 'too-few-candidates':
      return { ...base, kind: 'skip', code: 'too-few-candidates', reason: selection.reason };
    case 'no-newer-patch':
      return {
        ...base,
        kind: 'up-to-date',
        reason: selection.reason,
        warnings: untrustedPatchWarnings(selection),
      };
    case 'no-eligible-node':
      return { ...base, kind: 'skip', code: 'no-eligible-node', reason: selection.reason };
  }
}

function planRequestedNode(base: PlanBase, selection: PrototypeSelection, name: string): RefreshPlan {
  const verdict = selection.verdicts.find((candidate) => candidate.name === name);
  if (verdict === undefined) {
    return {
      ...base,
      kind: 'skip',
      code: 'requested-node-not-in-pool',
      reason: `requested node ${name} is not a member of this pool (${selection.poolNodeCount} member node(s))`,
    };
  }
  if (verdict.status === 'candidate') {
    const warnings = verdict.waived === undefined ? [] : [`${verdict.waived.rule}: ${verdict.waived.reason}`];
    return {
      ...base,
      kind: 'refresh',
      node: name,
      trigger: 'requested',
      why: `requested by the operator; the node also passes the selection rules`,
      warnings,
    };
  }
  const failed = [verdict.rule, ...verdict.alsoFailed];
  if (MEMBERSHIP_RULES.includes(verdict.rule)) {
    return {
      ...base,
      kind: 'skip',
      code: 'requested-node-not-in-pool',
      reason: `requested node ${name}: ${verdict.reason}`,
    };
  }
  if (failed.includes('not-ready')) {
    return {
      ...base,
      kind: 'skip',
      code: 'requested-node-not-ready',
      reason:
        `requested node ${name} is not Ready` + (verdict.rule === 'not-ready' ? `: ${verdict.reason}` : ''),
    };
  }
  if (failed.includes('autoscaler-deletion')) {
    return {
      ...base,
      kind: 'skip',
      code: 'requested-node-being-deleted',
      reason:
        `requested node ${name} is being removed by cluster-autoscaler` +
        (verdict.rule === 'autoscaler-deletion' ? `: ${verdict.reason}` : ''),
    };
  }
  const warnings = [`${verdict.rule}: ${verdict.reason}`];
  if (verdict.alsoFailed.length > 0) {
    warnings.push(`also fails advisory rules: ${verdict.alsoFailed.join(', ')}`);
  }
  return {
    ...base,
    kind: 'refresh',
    node: name,
    trigger: 'requested',
    why: 'requested by the operator; selection rules other than membership and readiness are advisory',
    warnings,
  };
}

/** An up-to-date verdict is only as good as the timestamps: flag nodes whose patch time we could not use. */
function untrustedPatchWarnings(selection: PrototypeSelection): string[] {
  const warnings: string[] = [];
  const malformed = selection.rejectionCounts['malformed-patch-timestamp'] ?? 0;
  const future = selection.rejectionCounts['patch-in-future'] ?? 0;
  if (malformed > 0) {
    warnings.push(
      `${malformed} node(s) have a malformed last-patch timestamp and may be patched after the image`,
    );
  }
  if (future > 0) {
    warnings.push(`${future} node(s) have a last-patch timestamp in the future (clock skew)`);
  }
  return warnings;
}

/**
 * Adds the bootstrap flavour to a plan: a plan that would refresh takes the configured flavour or the one
 * its donor shows, and is refused when neither says (the flavour is unknown). The reason says what was
 * seen and what to do. A refused, disabled or node-less
 * plan is returned as it is.
 */
export function applyBootstrapFlavour(
  plan: RefreshPlan,
  input: {
    readonly configured?: BootstrapFlavour;
    readonly donor?: Pick<ClusterNode, 'name' | 'labels' | 'annotations'>;
  },
): RefreshPlan {
  if (plan.kind === 'refused' || (plan.kind === 'skip' && plan.code === 'pool-disabled')) return plan;
  const choice = chooseCaptureFlavour({
    ...definedOnly({ configured: input.configured }),
    ...(plan.kind === 'refresh' && input.donor !== undefined ? { donor: input.donor } : {}),
  });
  if (choice === undefined) return plan;
  if (choice.kind === 'refuse') {
    return {
      pool: plan.pool,
      plannedAt: plan.plannedAt,
      kind: 'refused',
      reason: choice.reason,
      refusals: [
        {
          code: 'bootstrap-flavour',
          reason: choice.reason,
          remedy: "set pools[].bootstrapFlavour to how the pool's nodes get kubelet credentials",
        },
      ],
    };
  }
  return plan.kind === 'refresh' ? { ...plan, flavour: choice } : plan;
}
