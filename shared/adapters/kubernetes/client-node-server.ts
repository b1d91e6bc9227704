/**
 * The API server itself over @kubernetes/client-node: its version, and the access and rules reviews of
 * the product's service account.
 */
import { AuthorizationV1Api, VersionApi } from '@kubernetes/client-node';

import { describeAccess, type KubernetesAccess } from '../../domain/kubernetes-access.js';
import { definedOnly } from '../../domain/optional.js';
import type { AccessDecision, RulesReview, ServerPort } from '../../ports/kubernetes/index.js';
import type { KubeConnection } from './client-node-connection.js';

export class ClientNodeServer implements ServerPort {
  readonly #connection: KubeConnection;
  readonly #authorization: AuthorizationV1Api;
  readonly #version: VersionApi;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#authorization = new AuthorizationV1Api(connection.configuration);
    this.#version = new VersionApi(connection.configuration);
  }

  async version(): Promise<string> {
    const info = await this.#connection.call({ action: 'reading the server version', kind: 'Version' }, () =>
      this.#version.getCode(),
    );
    return info.gitVersion;
  }

  async reviewAccess(accesses: readonly KubernetesAccess[]): Promise<AccessDecision[]> {
    // One review per access, all at once: each is a small request the server answers from memory.
    return Promise.all(
      accesses.map(async (access): Promise<AccessDecision> => {
        const review = await this.#connection.call(
          { action: `reviewing access (${describeAccess(access)})`, kind: 'SelfSubjectAccessReview' },
          () =>
            this.#authorization.createSelfSubjectAccessReview({
              body: {
                apiVersion: 'authorization.k8s.io/v1',
                kind: 'SelfSubjectAccessReview',
                spec: {
                  resourceAttributes: {
                    verb: access.verb,
                    group: access.group,
                    resource: access.resource,
                    ...definedOnly({ subresource: access.subresource, namespace: access.namespace }),
                  },
                },
              },
            }),
        );
        const allowed = review.status?.allowed === true && review.status.denied !== true;
        const reason = review.status?.reason;
        return reason === undefined || reason === '' ? { allowed } : { allowed, reason };
      }),
    );
  }

  async reviewRules(namespace: string): Promise<RulesReview> {
    const review = await this.#connection.call(
      { action: `reviewing the rules in namespace ${namespace}`, kind: 'SelfSubjectRulesReview' },
      () =>
        this.#authorization.createSelfSubjectRulesReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectRulesReview',
            spec: { namespace },
          },
        }),
    );
    return {
      resourceRules: (review.status?.resourceRules ?? []).map((rule) => ({
        verbs: rule.verbs,
        ...definedOnly({
          apiGroups: rule.apiGroups,
          resources: rule.resources,
          resourceNames: rule.resourceNames,
        }),
      })),
      incomplete: review.status?.incomplete === true,
    };
  }
}
