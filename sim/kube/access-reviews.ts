/**
 * The self-review endpoints kubectl and clients use to ask what they may do: SelfSubjectAccessReview
 * (`kubectl auth can-i VERB RESOURCE`), SelfSubjectRulesReview (`kubectl auth can-i --list`) and
 * SelfSubjectReview (`kubectl auth whoami`). They are answered from the same RBAC the server enforces
 * (the manifests plus the bootstrap policy), for the user who asks; nothing is stored.
 */
import { z } from 'zod';

import type { KubeAuthorizer, KubeUser, ReviewingAuthorizer } from './rbac.js';
import { ALLOW_ALL, isReviewingAuthorizer } from './rbac.js';
import type { ReviewKind } from './resources.js';
import { badRequest } from './status.js';

const AccessReview = z.looseObject({
  spec: z.looseObject({
    resourceAttributes: z
      .looseObject({
        namespace: z.string().optional(),
        verb: z.string().optional(),
        group: z.string().optional(),
        version: z.string().optional(),
        resource: z.string().optional(),
        subresource: z.string().optional(),
        name: z.string().optional(),
      })
      .optional(),
    nonResourceAttributes: z
      .looseObject({ path: z.string().optional(), verb: z.string().optional() })
      .optional(),
  }),
});

const RulesReview = z.looseObject({
  spec: z.looseObject({ namespace: z.string().optional() }).optional(),
});

function reviewer(authorizer: KubeAuthorizer): ReviewingAuthorizer {
  if (isReviewingAuthorizer(authorizer)) return authorizer;
  // An authorizer that cannot explain itself (a test double) is asked plainly; it lists nothing.
  return {
    authorize: (user, attributes) => authorizer.authorize(user, attributes),
    check: (user, attributes) => ({ allowed: authorizer.authorize(user, attributes).allowed, reason: '' }),
    checkNonResource: () => ({ allowed: false, reason: '' }),
    rules: () => ({ resourceRules: [], nonResourceRules: [] }),
  };
}

/** Answers a review for `user`: the request echoed back with its `status` filled in, 201 Created. */
export function serveReview(
  kind: ReviewKind,
  body: unknown,
  user: KubeUser,
  authorizer: KubeAuthorizer,
): Record<string, unknown> {
  const rbac = authorizer === ALLOW_ALL ? ALLOW_ALL : reviewer(authorizer);
  const group = kind === 'SelfSubjectReview' ? 'authentication.k8s.io' : 'authorization.k8s.io';
  const envelope = { kind, apiVersion: `${group}/v1`, metadata: { creationTimestamp: null } };
  if (kind === 'SelfSubjectReview') {
    return { ...envelope, status: { userInfo: { username: user.name, groups: user.groups } } };
  }
  if (kind === 'SelfSubjectRulesReview') {
    const parsed = RulesReview.safeParse(body);
    if (!parsed.success) throw badRequest(`decoding SelfSubjectRulesReview: ${parsed.error.message}`);
    const namespace = parsed.data.spec?.namespace ?? '';
    const rules = rbac.rules(user, namespace);
    return { ...envelope, spec: { namespace }, status: { ...rules, incomplete: false } };
  }
  const parsed = AccessReview.safeParse(body);
  if (!parsed.success) throw badRequest(`decoding SelfSubjectAccessReview: ${parsed.error.message}`);
  const { resourceAttributes, nonResourceAttributes } = parsed.data.spec;
  if (!resourceAttributes === !nonResourceAttributes) {
    throw badRequest(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  }
  const decision = resourceAttributes
    ? rbac.check(user, {
        verb: resourceAttributes.verb ?? '',
        apiGroup: resourceAttributes.group ?? '',
        resource: resourceAttributes.resource ?? '',
        ...(resourceAttributes.subresource ? { subresource: resourceAttributes.subresource } : {}),
        ...(resourceAttributes.name ? { name: resourceAttributes.name } : {}),
        // An empty namespace asks about all namespaces (the cluster scope).
        ...(resourceAttributes.namespace ? { namespace: resourceAttributes.namespace } : {}),
      })
    : rbac.checkNonResource(user, nonResourceAttributes?.path ?? '', nonResourceAttributes?.verb ?? '');
  return {
    ...envelope,
    spec: parsed.data.spec,
    status: { allowed: decision.allowed, ...(decision.reason === '' ? {} : { reason: decision.reason }) },
  };
}
