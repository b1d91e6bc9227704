/**
 * The fake API server's version and reviews: access reviews allow everything but what `deny` took away
 * (the rules review lists a wildcard rule then, or the grants of `grant`).
 */
import { NotFoundError } from '../../../domain/errors.js';
import {
  describeAccess,
  type KubernetesAccess,
  type ResourceRule,
  rulesAllow,
} from '../../../domain/kubernetes-access.js';
import type { AccessDecision, KubernetesMethod, RulesReview, ServerPort } from '../../kubernetes/index.js';
import type { CallLog } from '../recording-fake.js';

export class FakeServer implements ServerPort {
  #denied = new Set<string>();
  #rules: ResourceRule[] | undefined;
  #accessReviews = true;

  constructor(private readonly log: CallLog<KubernetesMethod>) {}

  // ---- test controls -----------------------------------------------------------------------------

  /** Reviews (and the run's permission check) find this access missing (`describeAccess` form). */
  deny(access: string): void {
    this.#denied.add(access);
  }

  /** What the rules review lists (default: one rule allowing everything); access reviews follow it. */
  grant(rules: readonly ResourceRule[]): void {
    this.#rules = [...rules];
  }

  /** The API server has no SelfSubjectAccessReview (404): callers must fall back to the rules review. */
  withoutAccessReviews(): void {
    this.#accessReviews = false;
  }

  reset(): void {
    this.#denied = new Set();
    this.#rules = undefined;
    this.#accessReviews = true;
  }

  // ---- the port ----------------------------------------------------------------------------------

  version(): Promise<string> {
    return this.log.call('server.version', [], () => 'v1.30.6');
  }

  reviewAccess(accesses: readonly KubernetesAccess[]): Promise<AccessDecision[]> {
    return this.log.call('server.reviewAccess', [accesses], () => {
      if (!this.#accessReviews) {
        throw new NotFoundError(
          'KubeNotFound',
          'reviewing access: the server could not find the requested resource (selfsubjectaccessreviews)',
        );
      }
      return accesses.map((access): AccessDecision => {
        const allowed = this.#allows(access);
        return allowed ? { allowed } : { allowed, reason: 'no RBAC rule allows it' };
      });
    });
  }

  reviewRules(namespace: string): Promise<RulesReview> {
    return this.log.call('server.reviewRules', [namespace], () => ({
      resourceRules: this.#rules ?? [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      incomplete: false,
    }));
  }

  #allows(access: KubernetesAccess): boolean {
    if (this.#denied.has(describeAccess(access))) return false;
    return this.#rules === undefined || rulesAllow(this.#rules, access);
  }
}
