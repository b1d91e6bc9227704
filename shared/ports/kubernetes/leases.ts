/**
 * Pool leases, coordination.k8s.io/v1 Lease (shared/ports/kubernetes/index.ts has the contract every
 * port keeps).
 */
import type { PoolLease } from '../../domain/ownership.js';

/** A lease to write: everything but what the server sets (resourceVersion, its time); no holder releases it. */
export type LeaseWrite = Omit<PoolLease, 'resourceVersion' | 'serverTime'>;

/**
 * Every lease a method returns carries `serverTime`, the API server's clock when it answered (its `Date`
 * header), when the answer had one: expiry is judged on it (leaseClock in shared/domain/ownership.ts).
 */
export interface LeasesPort {
  /** The lease; undefined when absent. */
  get(namespace: string, name: string): Promise<PoolLease | undefined>;
  /** Creates the lease; `exists` when another writer created it first. */
  create(lease: LeaseWrite): Promise<PoolLease | 'exists'>;
  /**
   * Replaces the lease if it is still at `resourceVersion` (optimistic concurrency); `conflict` when
   * someone wrote it since (re-read and decide again), `gone` when it was deleted.
   */
  replace(lease: LeaseWrite, resourceVersion: string): Promise<PoolLease | 'conflict' | 'gone'>;
}
