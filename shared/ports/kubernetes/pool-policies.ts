/**
 * PoolImagePolicy objects (vmss-prototype.io/v1alpha1, cluster-scoped, one per pool, named after it:
 * docs/pool-policy.md) and the Events recorded about them. shared/ports/kubernetes/index.ts has the
 * contract every port keeps.
 */
import type { PolicyEvent, PoolPolicyObject } from '../../domain/pool-policy.js';

export interface PoolPoliciesPort {
  /**
   * Every PoolImagePolicy of the cluster (paged); `not-installed` when the API server does not serve the
   * resource (its CustomResourceDefinition is not applied): then no pool has one.
   */
  list(): Promise<readonly PoolPolicyObject[] | 'not-installed'>;
  /** The pool's object; undefined when there is none (or the resource is not served). */
  get(name: string): Promise<PoolPolicyObject | undefined>;
  /**
   * Replaces the object's status (the `/status` subresource; the spec is not touched) if the object is
   * still at `resourceVersion`: `conflict` when it changed since (read again), `gone` when deleted.
   */
  replaceStatus(
    name: string,
    status: Readonly<Record<string, unknown>>,
    resourceVersion: string,
  ): Promise<PoolPolicyObject | 'conflict' | 'gone'>;
  /**
   * Records an Event about a policy (core/v1, in namespace `default`, as for every cluster-scoped
   * object). Named after the event's key: recording the same key again is a no-op.
   */
  recordEvent(event: PolicyEvent): Promise<void>;
}
