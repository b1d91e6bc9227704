/**
 * Authentication (bearer token table) and RBAC authorization for the simulated API server. The
 * authorizer evaluates the same ClusterRole/Role/binding YAML the product is deployed with and records
 * which rules were needed, so missing and excess permissions both show up in tests.
 */
import { readFileSync } from 'node:fs';

import { z } from 'zod';

import { messageOf } from '../errors.js';
import { manifestDocuments } from './rbac-manifests.js';

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

/**
 * The default policy every API server bootstraps (kube-apiserver's bootstrappolicy): any authenticated
 * user may ask what it may do (self subject access/rules reviews, `kubectl auth can-i`, `whoami`) and
 * read the discovery and health endpoints.
 */
export const BOOTSTRAP_POLICY: readonly unknown[] = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:basic-user' },
    rules: [
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:discovery' },
    rules: [
      {
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
        verbs: ['get'],
      },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:public-info-viewer' },
    rules: [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }],
  },
  ...['system:basic-user', 'system:discovery', 'system:public-info-viewer'].map((name) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' },
      ...(name === 'system:public-info-viewer'
        ? [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }]
        : []),
    ],
  })),
];

/** What `SelfSubjectRulesReview` reports: the rules that apply to a user in a namespace. */
export interface SubjectRules {
  resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[];
}

/** Authorization with explanations, non-resource URLs and rule listing, for the review endpoints. */
export interface ReviewingAuthorizer extends KubeAuthorizer {
  /** Like `authorize`, but not counted as a use, and an allowed decision names the binding. */
  check(user: KubeUser, attributes: ResourceAttributes): { allowed: boolean; reason: string };
  checkNonResource(user: KubeUser, path: string, verb: string): { allowed: boolean; reason: string };
  rules(user: KubeUser, namespace: string): SubjectRules;
}

export function isReviewingAuthorizer(authorizer: KubeAuthorizer): authorizer is ReviewingAuthorizer {
  return 'check' in authorizer && 'rules' in authorizer;
}

function nonResourceMatches(rule: PolicyRule, path: string, verb: string): boolean {
  if (!rule.verbs.includes('*') && !rule.verbs.includes(verb)) return false;
  return (rule.nonResourceURLs ?? []).some((url) =>
    url === '*' ? true : url.endsWith('*') ? path.startsWith(url.slice(0, -1)) : url === path,
  );
}

/** RBAC over already-parsed documents (plus the bootstrap policy); non-RBAC documents are ignored. */
export function createRbacAuthorizerFromDocuments(
  documents: readonly unknown[],
): RbacAuthorizer & ReviewingAuthorizer {
  const roles = new Map<string, RoleDocument>();
  const bindings: BindingDocument[] = [];
  /** Roles that came from the manifests (the bootstrap policy is not reported by `ruleUsage`). */
  const manifestRoles = new Set<string>();
  const load = (document: unknown, fromManifest: boolean): void => {
    const kind = (document as { kind?: unknown } | null)?.kind;
    if (kind === 'ClusterRole' || kind === 'Role') {
      const role = RoleDocument.parse(document);
      const key = roleKey(role.kind, role.metadata.name, role.metadata.namespace);
      if (!fromManifest && roles.has(key)) return;
      roles.set(key, role);
      if (fromManifest) manifestRoles.add(key);
    } else if (kind === 'ClusterRoleBinding' || kind === 'RoleBinding') {
      bindings.push(BindingDocument.parse(document));
    }
  };
  for (const document of documents) load(document, true);
  for (const document of BOOTSTRAP_POLICY) load(document, false);
  const uses = new Map<string, number>();

  interface BoundRules {
    key: string;
    rules: PolicyRule[];
    binding: BindingDocument;
  }

  function rulesFor(user: KubeUser, namespace: string | undefined): BoundRules[] {
    const found: BoundRules[] = [];
    for (const binding of bindings) {
      const bindingNamespace = binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined;
      // A RoleBinding grants only inside its own namespace, even when it refers to a ClusterRole.
      if (binding.kind === 'RoleBinding' && bindingNamespace !== namespace) continue;
      if (!(binding.subjects ?? []).some((subject) => subjectMatches(subject, user, bindingNamespace)))
        continue;
      const key = roleKey(binding.roleRef.kind, binding.roleRef.name, bindingNamespace);
      const role = roles.get(key);
      if (role) found.push({ key, rules: role.rules ?? [], binding });
    }
    return found;
  }

  /** RBAC's reason for an allowed request, e.g. `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to ServiceAccount "ns/sa"`. */
  function allowedBy(bound: BoundRules, user: KubeUser): string {
    const { binding } = bound;
    const subject = (binding.subjects ?? []).find((candidate) =>
      subjectMatches(
        candidate,
        user,
        binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined,
      ),
    );
    const who =
      subject?.kind === 'ServiceAccount'
        ? `ServiceAccount "${subject.namespace ?? binding.metadata.namespace ?? ''}/${subject.name}"`
        : `${subject?.kind ?? 'User'} "${subject?.name ?? user.name}"`;
    const where =
      binding.kind === 'RoleBinding'
        ? `RoleBinding "${binding.metadata.name}/${binding.metadata.namespace ?? ''}"`
        : `ClusterRoleBinding "${binding.metadata.name}"`;
    return `RBAC: allowed by ${where} of ${binding.roleRef.kind} "${binding.roleRef.name}" to ${who}`;
  }

  function find(
    user: KubeUser,
    attributes: ResourceAttributes,
  ): { bound: BoundRules; index: number } | undefined {
    for (const bound of rulesFor(user, attributes.namespace)) {
      const index = bound.rules.findIndex((rule) => ruleMatches(rule, attributes));
      if (index >= 0) return { bound, index };
    }
    return undefined;
  }

  return {
    authorize(user, attributes) {
      if (user.groups.includes('system:masters')) return { allowed: true };
      const found = find(user, attributes);
      if (found) {
        const id = `${found.bound.key}#${found.index}`;
        uses.set(id, (uses.get(id) ?? 0) + 1);
        return { allowed: true };
      }
      return { allowed: false, reason: forbiddenMessage(user, attributes) };
    },

    check(user, attributes) {
      if (user.groups.includes('system:masters')) return { allowed: true, reason: '' };
      const found = find(user, attributes);
      return found ? { allowed: true, reason: allowedBy(found.bound, user) } : { allowed: false, reason: '' };
    },

    checkNonResource(user, path, verb) {
      if (user.groups.includes('system:masters')) return { allowed: true, reason: '' };
      for (const bound of rulesFor(user, undefined)) {
        if (bound.rules.some((rule) => nonResourceMatches(rule, path, verb))) {
          return { allowed: true, reason: allowedBy(bound, user) };
        }
      }
      return { allowed: false, reason: '' };
    },

    rules(user, namespace) {
      if (user.groups.includes('system:masters')) return ALLOW_ALL_RULES;
      const clusterWide = rulesFor(user, undefined);
      const namespaced = rulesFor(user, namespace).filter((bound) => bound.binding.kind === 'RoleBinding');
      const resourceRules: SubjectRules['resourceRules'] = [];
      const nonResourceRules: SubjectRules['nonResourceRules'] = [];
      for (const bound of [...clusterWide, ...namespaced]) {
        for (const rule of bound.rules) {
          if (rule.nonResourceURLs && rule.nonResourceURLs.length > 0) {
            if (bound.binding.kind === 'ClusterRoleBinding') {
              nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
            }
            continue;
          }
          resourceRules.push({
            verbs: [...rule.verbs],
            apiGroups: [...(rule.apiGroups ?? [])],
            resources: [...(rule.resources ?? [])],
            ...(rule.resourceNames && rule.resourceNames.length > 0
              ? { resourceNames: [...rule.resourceNames] }
              : {}),
          });
        }
      }
      return { resourceRules, nonResourceRules };
    },

    ruleUsage() {
      const usage: RuleUsage[] = [];
      for (const [key, role] of roles) {
        if (!manifestRoles.has(key)) continue;
        (role.rules ?? []).forEach((rule, index) => {
          usage.push({ role: key, index, rule, uses: uses.get(`${key}#${index}`) ?? 0 });
        });
      }
      return usage;
    },
  };
}

/** What cluster-admin (system:masters) sees in a rules review. */
const ALLOW_ALL_RULES: SubjectRules = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

/** Loads every YAML document of the given files (e.g. the manifests in infra/kubernetes/). */
export function createRbacAuthorizer(files: readonly string[]): RbacAuthorizer & ReviewingAuthorizer {
  const documents: unknown[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`reading RBAC manifest ${file}: ${messageOf(error)}`, { cause: error });
    }
    documents.push(...manifestDocuments(file, text));
  }
  return createRbacAuthorizerFromDocuments(documents);
}

/** Allows everything (cluster-admin for everyone); for worlds that do not test permissions. */
export const ALLOW_ALL: ReviewingAuthorizer = {
  authorize: () => ({ allowed: true }),
  check: () => ({ allowed: true, reason: '' }),
  checkNonResource: () => ({ allowed: true, reason: '' }),
  rules: () => ALLOW_ALL_RULES,
};
