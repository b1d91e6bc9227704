import { definedOnly } from './optional.js';
/**
 * The Kubernetes permissions the product needs, derived from the RBAC manifests it is deployed with
 * (infra/kubernetes/, generated into kubernetes-rbac.generated.ts: one list, not two), and how an answer
 * of the API server is read: a SelfSubjectAccessReview per permission, or the rules of a
 * SelfSubjectRulesReview where the server has no access reviews. Pure.
 */

/** A role of infra/kubernetes/ as the generator reads it. */
export interface RbacRole {
  readonly kind: 'ClusterRole' | 'Role';
  readonly name: string;
  /** Roles only: the namespace the manifest puts it in (the product's namespace). */
  readonly namespace?: string;
  /**
   * Annotation `vmss-prototype.io/capture-modes` (comma-separated): the role is only needed with these
   * capture modes. Absent: always.
   */
  readonly captureModes?: readonly string[];
  readonly rules: readonly RbacRule[];
}

export interface RbacRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** One permission, as a SelfSubjectAccessReview asks it. */
export interface KubernetesAccess {
  readonly verb: string;
  /** API group; '' is the core group. */
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** Undefined: cluster-wide (a cluster-scoped resource, or every namespace). */
  readonly namespace?: string;
  /** The role that grants it in infra/kubernetes/ (for the fix). */
  readonly grantedBy: string;
}

export interface AccessContext {
  readonly captureMode: string;
  /** Where the product's namespaced roles apply (`capture.prepNamespace`). */
  readonly namespace: string;
  /**
   * The namespace the manifests put those roles in (default MANIFESTS_NAMESPACE; the management
   * cluster's manifests use `default`): a Role there applies in `namespace`, one elsewhere stays put.
   */
  readonly manifestsNamespace?: string;
}

/**
 * Every permission the deployed roles grant that a run with this capture mode needs: ClusterRole rules
 * cluster-wide, Role rules in the product's namespace (or the one their manifest names, MANIFESTS_NAMESPACE). A role annotated for other capture modes is left
 * out (the prep pod's role is not needed when Run Command prepares the disk).
 */
export function requiredKubernetesAccess(
  roles: readonly RbacRole[],
  context: AccessContext,
): KubernetesAccess[] {
  const accesses: KubernetesAccess[] = [];
  const seen = new Set<string>();
  for (const role of roles) {
    if (role.captureModes !== undefined && !role.captureModes.includes(context.captureMode)) continue;
    for (const rule of role.rules) {
      if (rule.resourceNames !== undefined && rule.resourceNames.length > 0) continue;
      for (const group of rule.apiGroups) {
        for (const qualified of rule.resources) {
          const [resource = '', subresource] = qualified.split('/');
          for (const verb of rule.verbs) {
            const access: KubernetesAccess = {
              verb,
              group,
              resource,
              ...definedOnly({ subresource }),
              ...(role.kind === 'Role' ? { namespace: roleNamespace(role, context) } : {}),
              grantedBy: `${role.kind} ${role.name}`,
            };
            const key = describeAccess(access);
            if (seen.has(key)) continue;
            seen.add(key);
            accesses.push(access);
          }
        }
      }
    }
  }
  return accesses;
}

/**
 * The namespace the manifests of infra/kubernetes/ put the product's Roles in. Those Roles apply where
 * the settings say the product works (`capture.prepNamespace`); a Role the manifests put elsewhere (the
 * policy Events' Role in `default`, where the API server keeps events of cluster-scoped objects) stays there.
 */
export const MANIFESTS_NAMESPACE = 'vmss-prototype';

function roleNamespace(role: RbacRole, context: AccessContext): string {
  const moved = context.manifestsNamespace ?? MANIFESTS_NAMESPACE;
  return role.namespace === undefined || role.namespace === moved ? context.namespace : role.namespace;
}

/** `create pods/eviction (cluster-wide)`, `get daemonsets.apps (cluster-wide)`, `create pods in vmss-prototype`. */
export function describeAccess(access: KubernetesAccess): string {
  const resource = `${access.resource}${access.subresource === undefined ? '' : `/${access.subresource}`}`;
  const qualified = access.group === '' ? resource : `${resource}.${access.group}`;
  const where = access.namespace === undefined ? '(cluster-wide)' : `in namespace ${access.namespace}`;
  return `${access.verb} ${qualified} ${where}`;
}

/** A rule of a SelfSubjectRulesReview answer. */
export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
}

/**
 * Whether a rules review's rules allow the access, with Kubernetes RBAC's matching: `*` for any verb,
 * group or resource, `*\/<subresource>` for that subresource of any resource, and a rule naming
 * resources applies to those objects only (the product asks about none in particular).
 */
export function rulesAllow(rules: readonly ResourceRule[], access: KubernetesAccess): boolean {
  const requested =
    access.subresource === undefined ? access.resource : `${access.resource}/${access.subresource}`;
  return rules.some((rule) => {
    if (rule.resourceNames !== undefined && rule.resourceNames.length > 0) return false;
    const verbs = rule.verbs;
    if (!verbs.includes('*') && !verbs.includes(access.verb)) return false;
    const groups = rule.apiGroups ?? [];
    if (!groups.includes('*') && !groups.includes(access.group)) return false;
    return (rule.resources ?? []).some(
      (resource) =>
        resource === '*' ||
        resource === requested ||
        (access.subresource !== undefined && resource === `*/${access.subresource}`),
    );
  });
}

/** The annotation on a role of infra/kubernetes/ that limits it to some capture modes. */
export const CAPTURE_MODES_ANNOTATION = 'vmss-prototype.io/capture-modes';

/**
 * The roles among parsed manifest documents (what `kubectl apply -k infra/kubernetes` creates), in file
 * order; anything that is not a ClusterRole or Role is skipped. Used by the generator of
 * kubernetes-rbac.generated.ts and by the test that keeps it equal to the manifests.
 */
export function rbacRolesFromManifests(documents: readonly unknown[]): RbacRole[] {
  const roles: RbacRole[] = [];
  for (const document of documents) {
    if (typeof document !== 'object' || document === null) continue;
    const { kind, metadata, rules } = document as {
      kind?: unknown;
      metadata?: { name?: unknown; namespace?: unknown; annotations?: Record<string, unknown> };
      rules?: unknown;
    };
    if (kind !== 'ClusterRole' && kind !== 'Role') continue;
    const name = typeof metadata?.name === 'string' ? metadata.name : '';
    const modes = metadata?.annotations?.[CAPTURE_MODES_ANNOTATION];
    roles.push({
      kind,
      name,
      ...(kind === 'Role' && typeof metadata?.namespace === 'string'
        ? { namespace: metadata.namespace }
        : {}),
      ...(typeof modes === 'string'
        ? {
            captureModes: modes
              .split(',')
              .map((mode) => mode.trim())
              .filter((mode) => mode !== ''),
          }
        : {}),
      rules: (Array.isArray(rules) ? (rules as Record<string, unknown>[]) : []).map((rule) => ({
        apiGroups: strings(rule['apiGroups']),
        resources: strings(rule['resources']),
        verbs: strings(rule['verbs']),
        ...(Array.isArray(rule['resourceNames']) ? { resourceNames: strings(rule['resourceNames']) } : {}),
      })),
    });
  }
  return roles;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
