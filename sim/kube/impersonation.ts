/**
 * User impersonation (`kubectl --as`, `--as-group`, `--as-uid`), as the API server's impersonation
 * filter does it between authentication and authorization: every `Impersonate-*` header is first
 * authorized as the verb `impersonate` on `users`, `serviceaccounts`, `groups`, `uids` or
 * `userextras/<key>` for the requester (403 naming that resource if not), then the request runs as the
 * impersonated user.
 *
 * Upstream: kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`
 * (`WithImpersonation`, `buildImpersonationRequests`) and
 * https://kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation.
 */
import type { KubeAuthorizer, KubeUser, ResourceAttributes } from './rbac.js';
import { forbiddenMessage } from './rbac.js';
import { KubeApiError } from './status.js';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const EXTRA_PREFIX = 'impersonate-extra-';

/**
 * Impersonation headers that do not name a user. The upstream filter answers these with
 * `responsewriters.InternalError`: a plain-text 500 `Internal Server Error: "<uri>": <message>`.
 */
export class ImpersonationHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImpersonationHeaderError';
  }
}

/** Headers as Node gives them with `request.headersDistinct`: lower-case names, every value kept. */
export type DistinctHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/** Whether the request asks to act as someone else. */
export function wantsImpersonation(headers: DistinctHeaders): boolean {
  return Object.keys(headers).some((name) => name.startsWith('impersonate-'));
}

function check(authorizer: KubeAuthorizer, requester: KubeUser, attributes: ResourceAttributes): void {
  const decision = authorizer.authorize(requester, attributes);
  if (decision.allowed) return;
  // responsewriters.Forbidden words it from the attributes, like any other RBAC refusal.
  throw new KubeApiError('Forbidden', forbiddenMessage(requester, attributes), {
    ...(attributes.name === undefined ? {} : { name: attributes.name }),
    ...(attributes.apiGroup === '' ? {} : { group: attributes.apiGroup }),
    kind: attributes.resource,
  });
}

/**
 * The user a request acts as: the requester itself without `Impersonate-*` headers, else the
 * impersonated user once the requester may impersonate every part of it (else 403). Groups, a uid
 * or extras without `Impersonate-User` throw `ImpersonationHeaderError`.
 */
export function impersonatedUser(
  requester: KubeUser,
  headers: DistinctHeaders,
  authorizer: KubeAuthorizer,
): KubeUser {
  if (!wantsImpersonation(headers)) return requester;
  const userName = headers['impersonate-user']?.[0];
  const groups = [...(headers['impersonate-group'] ?? [])];
  const uid = headers['impersonate-uid']?.[0];
  const extras = Object.entries(headers)
    .filter(([name]) => name.startsWith(EXTRA_PREFIX))
    .map(([name, values]) => ({
      key: decodeURIComponent(name.slice(EXTRA_PREFIX.length)),
      values: values ?? [],
    }));
  if (userName === undefined || userName === '') {
    // fmt's %v of the v1.ObjectReference list: {Kind Namespace Name UID APIVersion ResourceVersion FieldPath}.
    const reference = (kind: string, name: string, apiVersion = '', fieldPath = ''): string =>
      `{${[kind, '', name, '', apiVersion, '', fieldPath].join(' ')}}`;
    const asked = [
      ...groups.map((group) => reference('Group', group)),
      ...extras.flatMap((extra) =>
        extra.values.map((value) => reference('UserExtra', value, 'authentication.k8s.io/v1', extra.key)),
      ),
      ...(uid === undefined ? [] : [reference('UID', uid, 'authentication.k8s.io/v1')]),
    ];
    throw new ImpersonationHeaderError(`requested [${asked.join(' ')}] without impersonating a user`);
  }
  const impersonate = { verb: 'impersonate' } as const;
  let impersonatedGroups = groups;
  if (userName.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [namespace = '', name = ''] = userName.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
    check(authorizer, requester, {
      ...impersonate,
      apiGroup: '',
      resource: 'serviceaccounts',
      namespace,
      name,
    });
    // A service account's groups are a fixed mapping; the filter adds them when none were asked for.
    if (groups.length === 0)
      impersonatedGroups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
  } else {
    check(authorizer, requester, { ...impersonate, apiGroup: '', resource: 'users', name: userName });
  }
  for (const group of groups) {
    check(authorizer, requester, { ...impersonate, apiGroup: '', resource: 'groups', name: group });
  }
  if (uid !== undefined) {
    check(authorizer, requester, {
      ...impersonate,
      apiGroup: 'authentication.k8s.io',
      resource: 'uids',
      name: uid,
    });
  }
  for (const extra of extras) {
    for (const value of extra.values) {
      check(authorizer, requester, {
        ...impersonate,
        apiGroup: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: extra.key,
        name: value,
      });
    }
  }
  // Not anonymous: system:authenticated is added unless the caller named it or system:unauthenticated.
  if (userName === 'system:anonymous') {
    if (!impersonatedGroups.includes('system:unauthenticated'))
      impersonatedGroups = [...impersonatedGroups, 'system:unauthenticated'];
  } else if (
    !impersonatedGroups.includes('system:authenticated') &&
    !impersonatedGroups.includes('system:unauthenticated')
  ) {
    impersonatedGroups = [...impersonatedGroups, 'system:authenticated'];
  }
  return { name: userName, groups: impersonatedGroups };
}
