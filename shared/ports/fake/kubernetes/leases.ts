/**
 * The fake cluster's pool leases, with the API server's optimistic concurrency (resourceVersion) and, given a
 * server clock, its time on every answer (`serverTime`, the `Date` header); without one, answers carry none.
 */
import type { PoolLease } from '../../../domain/ownership.js';
import type { KubernetesMethod, LeasesPort, LeaseWrite } from '../../kubernetes/index.js';
import type { CallLog } from '../recording-fake.js';

export class FakeLeases implements LeasesPort {
  #leases = new Map<string, PoolLease>();
  #version = 0;

  constructor(
    private readonly log: CallLog<KubernetesMethod>,
    private readonly serverNow?: () => number,
  ) {}

  /** A copy of `lease` as the server answers it: with the server's time, when it has a clock. */
  #answer(lease: PoolLease): PoolLease {
    return this.serverNow === undefined
      ? lease
      : { ...lease, serverTime: new Date(this.serverNow()).toISOString() };
  }

  // ---- test controls -----------------------------------------------------------------------------

  /** A lease as it is now (test setup and assertions). */
  lease(namespace: string, name: string): PoolLease | undefined {
    return this.#leases.get(`${namespace}/${name}`);
  }

  /** Writes a lease as another runner would, bypassing the port. */
  put(lease: LeaseWrite): PoolLease {
    this.#version += 1;
    const { serverTime: _serverTime, ...written } = structuredClone(lease as PoolLease);
    const stored: PoolLease = { ...written, resourceVersion: String(this.#version) };
    this.#leases.set(`${lease.namespace}/${lease.name}`, stored);
    return stored;
  }

  reset(): void {
    this.#leases = new Map();
  }

  // ---- the port ----------------------------------------------------------------------------------

  get(namespace: string, name: string): Promise<PoolLease | undefined> {
    return this.log.call('leases.get', [namespace, name], () => {
      const lease = this.lease(namespace, name);
      return lease === undefined ? undefined : this.#answer(lease);
    });
  }

  create(lease: LeaseWrite): Promise<PoolLease | 'exists'> {
    return this.log.call('leases.create', [lease], () =>
      this.lease(lease.namespace, lease.name) === undefined ? this.#answer(this.put(lease)) : 'exists',
    );
  }

  replace(lease: LeaseWrite, resourceVersion: string): Promise<PoolLease | 'conflict' | 'gone'> {
    return this.log.call('leases.replace', [lease, resourceVersion], () => {
      const existing = this.lease(lease.namespace, lease.name);
      if (existing === undefined) return 'gone';
      if (existing.resourceVersion !== resourceVersion) return 'conflict';
      return this.#answer(this.put(lease));
    });
  }
}
