/**
 * In-memory Kubernetes object store behind the simulated API server: deep copies in and out, one global
 * resourceVersion counter, uid/creationTimestamp assignment and synchronous change subscribers.
 */
import { randomUUID } from 'node:crypto';

import type { KubeObject, KubeResource, KubeStore, KubeWatchEvent, SimClock } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';

/** Resources that live outside namespaces; everything else needs `metadata.namespace`. */
const CLUSTER_SCOPED: ReadonlySet<KubeResource> = new Set<KubeResource>(['namespaces', 'nodes']);

export function isClusterScoped(resource: KubeResource): boolean {
  return CLUSTER_SCOPED.has(resource);
}

export interface InMemoryKubeStoreOptions {
  clock: SimClock;
  /** uid generator; defaults to random UUIDs. Tests pass a counter for stable output. */
  newUid?: () => string;
}

function keyOf(resource: KubeResource, namespace: string | undefined, name: string): string {
  return isClusterScoped(resource) ? name : `${namespace ?? ''}/${name}`;
}

function inNamespace(resource: KubeResource, object: KubeObject, namespace: string | undefined): boolean {
  return namespace === undefined || isClusterScoped(resource) || object.metadata.namespace === namespace;
}

/** Byte-order comparison: Kubernetes lists sort by key, not by locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function copy<T>(value: T): T {
  return structuredClone(value);
}

/** Singular kind for error messages, in the API server's wording (`nodes "x" not found`). */
function describe(resource: KubeResource, namespace: string | undefined, name: string): string {
  return isClusterScoped(resource) || namespace === undefined
    ? `${resource} "${name}"`
    : `${resource} "${name}" in namespace "${namespace}"`;
}

/** The contract plus a filtered read that copies only what it returns (list pages of large clusters). */
export interface InMemoryKubeStore extends KubeStore {
  /**
   * Objects in list order for which `predicate` holds; copies at most `limit` of them and counts all.
   * `predicate` sees the stored object and must not change it.
   */
  select(
    resource: KubeResource,
    namespace: string | undefined,
    predicate: (object: Readonly<KubeObject>) => boolean,
    limit?: number,
  ): { items: KubeObject[]; matched: number };
}

export function isInMemoryKubeStore(store: KubeStore): store is InMemoryKubeStore {
  return typeof (store as Partial<InMemoryKubeStore>).select === 'function';
}

export function createInMemoryKubeStore(options: InMemoryKubeStoreOptions): InMemoryKubeStore {
  const { clock } = options;
  const newUid = options.newUid ?? randomUUID;
  const tables = new Map<KubeResource, Map<string, KubeObject>>();
  const listeners = new Set<(event: KubeWatchEvent) => void>();
  const orders = new Map<KubeResource, string[]>();
  let version = 0;

  function table(resource: KubeResource): Map<string, KubeObject> {
    let found = tables.get(resource);
    if (!found) {
      found = new Map();
      tables.set(resource, found);
    }
    return found;
  }

  function namespaceOf(resource: KubeResource, object: KubeObject): string | undefined {
    if (isClusterScoped(resource)) return undefined;
    const namespace = object.metadata.namespace;
    if (!namespace) {
      throw new Error(`storing ${resource} "${object.metadata.name}": metadata.namespace is required`);
    }
    return namespace;
  }

  function nextVersion(): string {
    version += 1;
    return String(version);
  }

  function emit(type: KubeWatchEvent['type'], resource: KubeResource, object: KubeObject): void {
    // Each listener gets its own copy so one cannot corrupt what the next sees.
    for (const listener of [...listeners]) listener({ type, resource, object: copy(object) });
  }

  /** Objects in list order (namespace, then name); cached until an object is added or removed. */
  function sorted(resource: KubeResource): KubeObject[] {
    let order = orders.get(resource);
    if (!order) {
      order = [...table(resource).keys()].sort((a, b) => {
        const [namespaceA = '', nameA = ''] = a.includes('/') ? a.split('/') : ['', a];
        const [namespaceB = '', nameB = ''] = b.includes('/') ? b.split('/') : ['', b];
        return compare(namespaceA, namespaceB) || compare(nameA, nameB);
      });
      orders.set(resource, order);
    }
    const objects = table(resource);
    return order.map((key) => objects.get(key)).filter((object) => object !== undefined);
  }

  function store(resource: KubeResource, key: string, object: KubeObject): KubeObject {
    if (!table(resource).has(key)) orders.delete(resource);
    object.metadata.resourceVersion = nextVersion();
    table(resource).set(key, object);
    return object;
  }

  return {
    get(resource, namespace, name) {
      const found = table(resource).get(keyOf(resource, namespace, name));
      return found ? copy(found) : undefined;
    },

    list(resource, namespace) {
      return sorted(resource)
        .filter((object) => inNamespace(resource, object, namespace))
        .map(copy);
    },

    select(resource, namespace, predicate, limit) {
      const items: KubeObject[] = [];
      let matched = 0;
      for (const object of sorted(resource)) {
        if (!inNamespace(resource, object, namespace) || !predicate(object)) continue;
        matched += 1;
        if (limit === undefined || items.length < limit) items.push(copy(object));
      }
      return { items, matched };
    },

    create(resource, object) {
      const incoming = copy(object);
      if (!incoming.metadata.name) throw new Error(`creating ${resource}: metadata.name is required`);
      const namespace = namespaceOf(resource, incoming);
      if (isClusterScoped(resource)) delete incoming.metadata.namespace;
      const key = keyOf(resource, namespace, incoming.metadata.name);
      if (table(resource).has(key)) {
        throw new KubeStoreError(
          'AlreadyExists',
          `${describe(resource, namespace, incoming.metadata.name)} already exists`,
        );
      }
      incoming.metadata.uid = newUid();
      incoming.metadata.creationTimestamp = new Date(Math.floor(clock.nowMs() / 1000) * 1000)
        .toISOString()
        .replace('.000Z', 'Z');
      incoming.metadata.generation ??= 1;
      const stored = store(resource, key, incoming);
      emit('ADDED', resource, stored);
      return copy(stored);
    },

    update(resource, object) {
      const incoming = copy(object);
      const namespace = namespaceOf(resource, incoming);
      const key = keyOf(resource, namespace, incoming.metadata.name);
      const existing = table(resource).get(key);
      if (!existing) {
        throw new KubeStoreError(
          'NotFound',
          `${describe(resource, namespace, incoming.metadata.name)} not found`,
        );
      }
      const expected = incoming.metadata.resourceVersion;
      if (expected !== undefined && expected !== '' && expected !== existing.metadata.resourceVersion) {
        throw new KubeStoreError(
          'Conflict',
          `Operation cannot be fulfilled on ${resource} "${incoming.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      }
      // Identity fields belong to the server, whatever the client sent.
      incoming.metadata.uid = existing.metadata.uid;
      incoming.metadata.creationTimestamp = existing.metadata.creationTimestamp;
      if (isClusterScoped(resource)) delete incoming.metadata.namespace;
      const stored = store(resource, key, incoming);
      emit('MODIFIED', resource, stored);
      return copy(stored);
    },

    mutate(resource, namespace, name, change) {
      const key = keyOf(resource, namespace, name);
      const existing = table(resource).get(key);
      if (!existing) throw new KubeStoreError('NotFound', `${describe(resource, namespace, name)} not found`);
      const working = copy(existing);
      change(working);
      working.metadata.name = existing.metadata.name;
      working.metadata.uid = existing.metadata.uid;
      working.metadata.creationTimestamp = existing.metadata.creationTimestamp;
      if (!isClusterScoped(resource)) working.metadata.namespace = existing.metadata.namespace;
      const stored = store(resource, key, working);
      emit('MODIFIED', resource, stored);
      return copy(stored);
    },

    remove(resource, namespace, name) {
      const key = keyOf(resource, namespace, name);
      const existing = table(resource).get(key);
      if (!existing) return false;
      table(resource).delete(key);
      orders.delete(resource);
      // A delete is a write too: watchers see the final object with a fresh resourceVersion.
      existing.metadata.resourceVersion = nextVersion();
      emit('DELETED', resource, existing);
      return true;
    },

    resourceVersion() {
      return String(version);
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
