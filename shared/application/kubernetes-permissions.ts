/**
 * Whether the product's service account holds every Kubernetes permission a run needs, asked of the
 * API server before anything changes: a SelfSubjectAccessReview per permission (derived from the RBAC
 * manifests, domain/kubernetes-access.ts), or, on a server without access reviews, the rules of a
 * SelfSubjectRulesReview. Used by planning (a refresh says which permission is missing before it cordons
 * anything) and by `vmss-prototype doctor`.
 */
import { isNotFound, TerminalError } from '../domain/errors.js';
import {
  type AccessContext,
  describeAccess,
  type KubernetesAccess,
  requiredKubernetesAccess,
  rulesAllow,
} from '../domain/kubernetes-access.js';
import { KUBERNETES_RBAC, MANAGEMENT_RBAC } from '../domain/kubernetes-rbac.generated.js';
import type { KubernetesPorts } from '../ports/kubernetes/index.js';

export interface AccessCheck {
  /** How the server was asked. `rules-review` is approximate for cluster-wide permissions. */
  readonly method: 'access-review' | 'rules-review';
  readonly required: readonly KubernetesAccess[];
  readonly missing: readonly KubernetesAccess[];
  /** The rules review was incomplete (an authorizer that cannot list its rules): `missing` may be wrong. */
  readonly incomplete: boolean;
}

/** The permissions of a run with this capture mode, from the manifests the product is deployed with. */
export function requiredAccessFor(context: AccessContext): KubernetesAccess[] {
  return requiredKubernetesAccess(KUBERNETES_RBAC, context);
}

/**
 * The permissions the product needs in a CAPZ management cluster (infra/kubernetes/management/), in the
 * namespace of the cluster's MachinePools (`capz.namespace`).
 */
export function requiredManagementAccessFor(namespace: string): KubernetesAccess[] {
  return requiredKubernetesAccess(MANAGEMENT_RBAC, {
    captureMode: 'any',
    namespace,
    // infra/kubernetes/management/ puts its Role in `default`: it goes where the MachinePools are.
    manifestsNamespace: 'default',
  });
}

/** What to do about permissions missing in a management cluster. */
export function managementPermissionFix(missing: readonly KubernetesAccess[], namespace: string): string {
  const roles = [...new Set(missing.map((access) => access.grantedBy))];
  return (
    `apply the product's management-cluster RBAC (kubectl apply -k infra/kubernetes/management: ${roles.join(', ')}` +
    `${namespace === 'default' ? '' : `, its Role and RoleBinding moved to namespace ${namespace}`}) and check it is ` +
    'bound to the service account the management token belongs to'
  );
}

/** `kube`: any API server's ports (the workload cluster's, or a management cluster's server). */
export async function checkKubernetesAccess(
  kube: Pick<KubernetesPorts, 'server'>,
  required: readonly KubernetesAccess[],
  namespace: string,
): Promise<AccessCheck> {
  try {
    const decisions = await kube.server.reviewAccess(required);
    return {
      method: 'access-review',
      required,
      missing: required.filter((_, index) => decisions[index]?.allowed !== true),
      incomplete: false,
    };
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  // No SelfSubjectAccessReview on this server: its rules in the product's namespace include the
  // cluster-wide ones (a namespaced grant of a cluster-wide permission would pass here). A permission in
  // another namespace (the policy Events' in `default`) is judged by that namespace's rules.
  const reviews = new Map<string, Awaited<ReturnType<typeof kube.server.reviewRules>>>();
  for (const where of new Set(required.map((access) => access.namespace ?? namespace))) {
    reviews.set(where, await kube.server.reviewRules(where));
  }
  const rulesOf = (access: KubernetesAccess) => reviews.get(access.namespace ?? namespace);
  return {
    method: 'rules-review',
    required,
    missing: required.filter((access) => !rulesAllow(rulesOf(access)?.resourceRules ?? [], access)),
    incomplete: [...reviews.values()].some((review) => review.incomplete),
  };
}

/** What to do about missing permissions: the roles of infra/kubernetes/ that grant them. */
export function kubernetesPermissionFix(missing: readonly KubernetesAccess[]): string {
  const roles = [...new Set(missing.map((access) => access.grantedBy))];
  return (
    `apply the product's RBAC (kubectl apply -k infra/kubernetes: ${roles.join(', ')}) and check it is bound to ` +
    "the service account the cluster's token belongs to"
  );
}

/**
 * The run's permission check: throws a TerminalError naming every missing permission, so the refresh
 * fails at planning with nothing changed. An incomplete rules review proves nothing missing: the run goes
 * on (a denied call then names its permission).
 */
export async function requireKubernetesAccess(
  kube: KubernetesPorts,
  cluster: string,
  context: AccessContext,
): Promise<void> {
  const check = await checkKubernetesAccess(kube, requiredAccessFor(context), context.namespace);
  if (check.missing.length === 0 || check.incomplete) return;
  throw new TerminalError(
    'KubernetesPermissionMissing',
    `checking the service account's permissions in cluster ${cluster}: it may not ` +
      `${check.missing.map(describeAccess).join(', ')}; nothing was changed`,
    { advice: kubernetesPermissionFix(check.missing) },
  );
}
