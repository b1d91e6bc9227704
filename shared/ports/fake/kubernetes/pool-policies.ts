/**
 * The fake cluster's PoolImagePolicy objects and their Events, with the API server's semantics: the
 * generation rises when the spec changes, every write gets a new resourceVersion, a status write at a
 * stale one is a conflict, and an Event is stored once per name.
 */
import type { PolicyEvent, PoolPolicyObject } from '../../../domain/pool-policy.js';
import type { KubernetesMethod, PoolPoliciesPort } from '../../kubernetes/index.js';
import type { CallLog } from '../recording-fake.js';

export class FakePoolPolicies implements PoolPoliciesPort {
  #objects = new Map<string, PoolPolicyObject>();
  #events = new Map<string, PolicyEvent>();
  #version = 0;
  #installed = true;

  constructor(private readonly log: CallLog<KubernetesMethod>) {}

  // ---- test controls -----------------------------------------------------------------------------

  /** Creates or changes an object as `kubectl apply` would (the spec replaced, the status kept). */
  apply(name: string, spec: unknown): PoolPolicyObject {
    const existing = this.#objects.get(name);
    const changed = existing === undefined || JSON.stringify(existing.spec) !== JSON.stringify(spec);
    this.#version += 1;
    const stored: PoolPolicyObject = {
      name,
      uid: existing?.uid ?? `uid-policy-${name}`,
      generation: (existing?.generation ?? 0) + (changed ? 1 : 0),
      resourceVersion: String(this.#version),
      createdAt: existing?.createdAt ?? new Date(this.log.now()).toISOString(),
      spec: structuredClone(spec),
      status: structuredClone(existing?.status),
    };
    this.#objects.set(name, stored);
    return stored;
  }

  /** Deletes an object (`kubectl delete`). */
  remove(name: string): void {
    this.#objects.delete(name);
  }

  /** The resource is not served (its CustomResourceDefinition not applied) while false. */
  setInstalled(installed: boolean): void {
    this.#installed = installed;
  }

  /** An object as it is now. */
  object(name: string): PoolPolicyObject | undefined {
    return this.#objects.get(name);
  }

  /** The Events recorded so far, in order. */
  events(): PolicyEvent[] {
    return [...this.#events.values()];
  }

  reset(): void {
    this.#objects = new Map();
    this.#events = new Map();
    this.#installed = true;
  }

  // ---- the port ----------------------------------------------------------------------------------

  list(): Promise<readonly PoolPolicyObject[] | 'not-installed'> {
    return this.log.call('poolPolicies.list', [], () =>
      this.#installed
        ? [...this.#objects.values()].sort((a, b) => a.name.localeCompare(b.name))
        : ('not-installed' as const),
    );
  }

  get(name: string): Promise<PoolPolicyObject | undefined> {
    return this.log.call('poolPolicies.get', [name], () =>
      this.#installed ? this.#objects.get(name) : undefined,
    );
  }

  replaceStatus(
    name: string,
    status: Readonly<Record<string, unknown>>,
    resourceVersion: string,
  ): Promise<PoolPolicyObject | 'conflict' | 'gone'> {
    return this.log.call('poolPolicies.replaceStatus', [name, status, resourceVersion], () => {
      const existing = this.#installed ? this.#objects.get(name) : undefined;
      if (existing === undefined) return 'gone';
      if (existing.resourceVersion !== resourceVersion) return 'conflict';
      this.#version += 1;
      const stored = { ...existing, status: structuredClone(status), resourceVersion: String(this.#version) };
      this.#objects.set(name, stored);
      return stored;
    });
  }

  recordEvent(event: PolicyEvent): Promise<void> {
    return this.log.call('poolPolicies.recordEvent', [event], () => {
      if (!this.#events.has(event.key)) this.#events.set(event.key, structuredClone(event));
    });
  }
}
