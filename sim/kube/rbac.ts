/**
 * Authentication (bearer token table) and RBAC authorization for the simulated API server. The
 * authorizer evaluates the same ClusterRole/Role/binding YAML the product is deployed with and records
 * which rules were needed, so missing and excess permissions both show up in tests.
 */
import { readFileSync } from 'node:fs';

import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

export interface KubeUser {
  name: string;
  groups: string[];
}

export interface KubeAuthenticator {
  /** Maps an `Authorization` header to a user; undefined means 401. */
  authenticate(authorization: string | undefined): KubeUser | undefined;
}

export interface ResourceAttributes {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  name?: string;
  /** Undefined for cluster-scoped requests and cluster-wide lists. */
  namespace?: string;
}

export type AuthorizationDecision = { allowed: true } | { allowed: false; reason: string };

export interface KubeAuthorizer {
  authorize(user: KubeUser, attributes: ResourceAttributes): AuthorizationDecision;
}

/** Static token table: token → user. Every authenticated user also gets `system:authenticated`. */
export function createTokenAuthenticator(tokens: Readonly<Record<string, KubeUser>>): KubeAuthenticator {
  return {
    authenticate(authorization) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
      const user = match?.[1] === undefined ? undefined : tokens[match[1]];
      if (!user) return undefined;
      return { name: user.name, groups: [...new Set([...user.groups, 'system:authenticated'])] };
    },
  };
}

export function serviceAccountUser(namespace: string, name: string): KubeUser {
  return {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
}

const PolicyRule = z.object({
  verbs: z.array(z.string()),
  apiGroups: z.array(z.string()).optional(),
  resources: z.array(z.string()).optional(),
  resourceNames: z.array(z.string()).optional(),
  nonResourceURLs: z.array(z.string()).optional(),
});
type PolicyRule = z.infer<typeof PolicyRule>;

const Metadata = z.object({ name: z.string(), namespace: z.string().optional() });

const RoleDocument = z.object({
  apiVersion: z.literal('rbac.authorization.k8s.io/v1'),
  kind: z.enum(['ClusterRole', 'Role']),
  metadata: Metadata,
  rules: z.array(PolicyRule).nullish(),
});
type RoleDocument = z.infer<typeof RoleDocument>;

const Subject = z.object({
  kind: z.enum(['User', 'Group', 'ServiceAccount']),
  name: z.string(),
  namespace: z.string().optional(),
  apiGroup: z.string().optional(),
});
type Subject = z.infer<typeof Subject>;

const BindingDocument = z.object({
  apiVersion: z.literal('rbac.authorization.k8s.io/v1'),
  kind: z.enum(['ClusterRoleBinding', 'RoleBinding']),
  metadata: Metadata,
  subjects: z.array(Subject).nullish(),
  roleRef: z.object({ apiGroup: z.string(), kind: z.enum(['ClusterRole', 'Role']), name: z.string() }),
});
type BindingDocument = z.infer<typeof BindingDocument>;

export interface RuleUsage {
  /** `ClusterRole/<name>` or `Role/<namespace>/<name>`. */
  role: string;
  index: number;
  rule: PolicyRule;
  /** Requests this rule allowed (the first matching rule is credited). */
  uses: number;
}

export interface RbacAuthorizer extends KubeAuthorizer {
  /** Every rule of every loaded role with its use count, for "every permission is needed" checks. */
  ruleUsage(): RuleUsage[];
}

function roleKey(kind: 'ClusterRole' | 'Role', name: string, namespace: string | undefined): string {
  return kind === 'ClusterRole' ? `ClusterRole/${name}` : `Role/${namespace ?? ''}/${name}`;
}

function subjectMatches(subject: Subject, user: KubeUser, bindingNamespace: string | undefined): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount':
      return (
        user.name === `system:serviceaccount:${subject.namespace ?? bindingNamespace ?? ''}:${subject.name}`
      );
  }
}

function ruleMatches(rule: PolicyRule, attributes: ResourceAttributes): boolean {
  const verbs = rule.verbs;
  if (!verbs.includes('*') && !verbs.includes(attributes.verb)) return false;
  const groups = rule.apiGroups ?? [];
  if (!groups.includes('*') && !groups.includes(attributes.apiGroup)) return false;
  const resources = rule.resources ?? [];
  const wanted =
    attributes.subresource === undefined
      ? attributes.resource
      : `${attributes.resource}/${attributes.subresource}`;
  const resourceOk =
    resources.includes('*') ||
    resources.includes(wanted) ||
    (attributes.subresource !== undefined && resources.includes(`*/${attributes.subresource}`));
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attributes.name !== undefined && names.includes(attributes.name));
}

/** Builds the Forbidden message exactly as the API server words it. */
export function forbiddenMessage(user: KubeUser, attributes: ResourceAttributes): string {
  const resource =
    attributes.subresource === undefined
      ? attributes.resource
      : `${attributes.resource}/${attributes.subresource}`;
  const qualified =
    attributes.apiGroup === '' ? attributes.resource : `${attributes.resource}.${attributes.apiGroup}`;
  const subject =
    attributes.name === undefined
      ? `${qualified} is forbidden`
      : `${qualified} "${attributes.name}" is forbidden`;
  const scope =
    attributes.namespace === undefined
      ? 'at the cluster scope'
      : `in the namespace "${attributes.namespace}"`;
  return `${subject}: User "${user.name}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" ${scope}`;
}

/** RBAC over already-parsed documents; non-RBAC documents are ignored. */
export function createRbacAuthorizerFromDocuments(documents: readonly unknown[]): RbacAuthorizer {
  const roles = new Map<string, RoleDocument>();
  const bindings: BindingDocument[] = [];
  for (const document of documents) {
    const kind = (document as { kind?: unknown } | null)?.kind;
    if (kind === 'ClusterRole' || kind === 'Role') {
      const role = RoleDocument.parse(document);
      roles.set(roleKey(role.kind, role.metadata.name, role.metadata.namespace), role);
    } else if (kind === 'ClusterRoleBinding' || kind === 'RoleBinding') {
      bindings.push(BindingDocument.parse(document));
    }
  }
  const uses = new Map<string, number>();

  function rulesFor(user: KubeUser, namespace: string | undefined): { key: string; rules: PolicyRule[] }[] {
    const found: { key: string; rules: PolicyRule[] }[] = [];
    for (const binding of bindings) {
      const bindingNamespace = binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined;
      // A RoleBinding grants only inside its own namespace, even when it refers to a ClusterRole.
      if (binding.kind === 'RoleBinding' && bindingNamespace !== namespace) continue;
      if (!(binding.subjects ?? []).some((subject) => subjectMatches(subject, user, bindingNamespace)))
        continue;
      const key = roleKey(binding.roleRef.kind, binding.roleRef.name, bindingNamespace);
      const role = roles.get(key);
      if (role) found.push({ key, rules: role.rules ?? [] });
    }
    return found;
  }

  return {
    authorize(user, attributes) {
      if (user.groups.includes('system:masters')) return { allowed: true };
      for (const { key, rules } of rulesFor(user, attributes.namespace)) {
        const index = rules.findIndex((rule) => ruleMatches(rule, attributes));
        if (index >= 0) {
          const id = `${key}#${index}`;
          uses.set(id, (uses.get(id) ?? 0) + 1);
          return { allowed: true };
        }
      }
      return { allowed: false, reason: forbiddenMessage(user, attributes) };
    },

    ruleUsage() {
      const usage: RuleUsage[] = [];
      for (const [key, role] of roles) {
        (role.rules ?? []).forEach((rule, index) => {
          usage.push({ role: key, index, rule, uses: uses.get(`${key}#${index}`) ?? 0 });
        });
      }
      return usage;
    },
  };
}

/** Loads every YAML document of the given files (e.g. the manifests in infra/kubernetes/). */
export function createRbacAuthorizer(files: readonly string[]): RbacAuthorizer {
  const documents: unknown[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`reading RBAC manifest ${file}: ${(error as Error).message}`, { cause: error });
    }
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) {
        throw new Error(`parsing RBAC manifest ${file}: ${document.errors[0]?.message ?? 'invalid YAML'}`);
      }
      const value: unknown = document.toJS();
      if (value !== null && value !== undefined) documents.push(value);
    }
  }
  return createRbacAuthorizerFromDocuments(documents);
}

/** Allows everything; for worlds that do not test permissions. */
export const ALLOW_ALL: KubeAuthorizer = { authorize: () => ({ allowed: true }) };
