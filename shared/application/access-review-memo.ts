/**
 * The API server's access reviews remembered for a short while on a cluster handle. A CLI refresh asks
 * the same SelfSubjectAccessReviews twice within a second: the command's preflight (cli/doctor.ts
 * `requirePermissions`), then the run's planning (plan-pool.ts `requireKubernetesAccess`), each one
 * request per permission. Within `ACCESS_REVIEW_TTL_MS` of the handle's clock an access the server
 * allowed is answered from memory; a denied one is asked again every time, so that a role applied after a
 * refusal counts at once. Versions and rules reviews are not remembered.
 */
import { type KubernetesAccess } from '../domain/kubernetes-access.js';
import type { AccessDecision, ServerPort } from '../ports/kubernetes/index.js';

/** How long an allowed access is taken as still allowed without asking again (ms of the handle's clock). */
export const ACCESS_REVIEW_TTL_MS = 60_000;

/** One access as the server is asked it (`grantedBy` is ours, not part of the question). */
function keyOf(access: KubernetesAccess): string {
  return JSON.stringify([
    access.verb,
    access.group,
    access.resource,
    access.subresource ?? '',
    access.namespace ?? '',
  ]);
}

/**
 * `server` with its access reviews remembered: `reviewAccess` asks the server only the accesses not
 * allowed within the last `ttlMs` (by `now`), in one call, and answers in the order asked. A failure of
 * that call (NotFoundError on a server without access reviews) is the caller's, as before.
 */
export function rememberAccessReviews(
  server: ServerPort,
  now: () => Date,
  ttlMs: number = ACCESS_REVIEW_TTL_MS,
): ServerPort {
  const allowedAt = new Map<string, { readonly at: number; readonly decision: AccessDecision }>();
  return {
    version: () => server.version(),
    reviewRules: (namespace) => server.reviewRules(namespace),
    async reviewAccess(accesses) {
      const askedAt = now().getTime();
      const known = accesses.map((access) => {
        const memo = allowedAt.get(keyOf(access));
        // A clock that went back (a simulator reset) is not trusted either.
        return memo !== undefined && askedAt >= memo.at && askedAt - memo.at < ttlMs
          ? memo.decision
          : undefined;
      });
      const unknown = accesses.filter((_, index) => known[index] === undefined);
      const answers = unknown.length === 0 ? [] : await server.reviewAccess(unknown);
      let next = 0;
      return accesses.map((access, index) => {
        const remembered = known[index];
        if (remembered !== undefined) return remembered;
        const decision = answers[next++] ?? { allowed: false };
        if (decision.allowed) allowedAt.set(keyOf(access), { at: askedAt, decision });
        return decision;
      });
    },
  };
}
