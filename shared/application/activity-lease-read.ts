/**
 * One pool-lease read per activity. An activity that carries a cancel watch (pool-cancel.ts)
 * reads the pool's lease before its work; the fence in the same activity (pool-lease.ts `checkFence`, the
 * check that the run still holds the pool before a change to Azure or the cluster) reads the same lease
 * again a moment later. Here the watch's read is shared: the activity's dependencies answer the first
 * read of that lease with it, so both decisions stand on one GET, made within the activity before the
 * change it guards. Any later read goes to the server, and a lease write drops the shared read (it is
 * stale once written). A read that failed is not shared: the fence reads again and decides on its own.
 */
import type { PoolLease } from '../domain/ownership.js';
import type { KubernetesPorts, LeasesPort } from '../ports/kubernetes/index.js';
import type { ClusterHandle, RefreshDependencies } from './refresh-dependencies.js';

/** Which lease, of which cluster. */
export interface SharedLeaseRef {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
}

/** The lease read once, and the dependencies whose first read of it is answered with that read. */
export interface SharedLeaseRead {
  readonly read: () => Promise<PoolLease | undefined>;
  readonly deps: RefreshDependencies;
}

/** A view of `target` with `overrides`; its own members bound to it (class instances keep their #fields). */
function overlay<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(overrides, key)) return (overrides as Record<PropertyKey, unknown>)[key];
      const value: unknown = Reflect.get(object, key, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

export function shareLeaseRead(deps: RefreshDependencies, ref: SharedLeaseRef): SharedLeaseRead {
  let first: Promise<PoolLease | undefined> | undefined;
  /** The read not yet used by the activity's own code (undefined once used or stale). */
  let unused: Promise<PoolLease | undefined> | undefined;
  const kubeOf = async (): Promise<KubernetesPorts> => (await deps.cluster(ref.cluster)).kube;
  const read = (): Promise<PoolLease | undefined> => {
    if (first === undefined) {
      first = kubeOf().then((kube) => kube.leases.get(ref.namespace, ref.name));
      unused = first;
      // Not handled here: whoever awaits it sees the failure; an unawaited failure is no crash.
      first.catch(() => undefined);
    }
    return first;
  };
  const leasesOf = (inner: LeasesPort): LeasesPort =>
    overlay(inner, {
      get: (namespace: string, name: string) => {
        const shared = namespace === ref.namespace && name === ref.name ? unused : undefined;
        unused = undefined;
        return shared === undefined
          ? inner.get(namespace, name)
          : shared.catch(() => inner.get(namespace, name));
      },
      create: (lease) => {
        unused = undefined;
        return inner.create(lease);
      },
      replace: (lease, resourceVersion) => {
        unused = undefined;
        return inner.replace(lease, resourceVersion);
      },
    });
  const handleOf = (handle: ClusterHandle): ClusterHandle =>
    overlay(handle, { kube: overlay(handle.kube, { leases: leasesOf(handle.kube.leases) }) });
  return {
    read,
    deps: overlay(deps, {
      cluster: async (name: string) => {
        const handle = await deps.cluster(name);
        return name === ref.cluster ? handleOf(handle) : handle;
      },
    }),
  };
}
