/**
 * The API server itself: its version, and what it lets the product's service account do
 * (shared/ports/kubernetes/index.ts has the contract every port keeps).
 */
import type { KubernetesAccess, ResourceRule } from '../../domain/kubernetes-access.js';

/** What the API server answered to a SelfSubjectAccessReview. */
export interface AccessDecision {
  readonly allowed: boolean;
  /** The authorizer's explanation, when it gave one. */
  readonly reason?: string;
}

/** What a SelfSubjectRulesReview answered for a namespace. */
export interface RulesReview {
  readonly resourceRules: readonly ResourceRule[];
  /** The server could not list every rule (an authorizer that cannot enumerate, e.g. a webhook). */
  readonly incomplete: boolean;
}

export interface ServerPort {
  /** `GET /version`: the server answers over TLS verified with the configured CA, the token is accepted. */
  version(): Promise<string>;
  /**
   * SelfSubjectAccessReview per access, in order. An API server without the authorization API answers
   * NotFoundError (then `reviewRules` is the fallback).
   */
  reviewAccess(accesses: readonly KubernetesAccess[]): Promise<AccessDecision[]>;
  /** SelfSubjectRulesReview: the service account's rules in `namespace` (cluster-wide rules included). */
  reviewRules(namespace: string): Promise<RulesReview>;
}
