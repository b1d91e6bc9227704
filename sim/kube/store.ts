/**
 * In-memory Kubernetes object store behind the simulated API server: deep copies in and out, one global
 * resourceVersion counter, uid/creationTimestamp assignment and synchronous change subscribers.
 */
import { randomUUID } from 'node:crypto';

import type { KubeObject, KubeResource, KubeStore, KubeWatchEvent, SimClock } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { deepCopy } from '../deep-copy.js';

/** Resources that live outside namespaces; everything else needs `metadata.namespace`. */
const CLUSTER_SCOPED: ReadonlySet<KubeResource> = new Set<KubeResource>([
  'namespaces',
  'nodes',
  'customresourcedefinitions',
]);

export function isClusterScoped(resource: KubeResource): boolean {
  return CLUSTER_SCOPED.has(resource);
}

/**
 * A custom resource (`<plural>.<group>`): its scope is its CustomResourceDefinition's, which the API
 * server enforces; the store keys it by the namespace the object has, if any.
 */
function isCustomResource(resource: KubeResource): boolean {
  return resource.includes('.');
}

export interface InMemoryKubeStoreOptions {
  clock: SimClock;
  /** uid generator; defaults to random UUIDs. Tests pass a counter for stable output. */
  newUid?: () => string;
}

function keyOf(resource: KubeResource, namespace: string | undefined, name: string): string {
  if (isCustomResource(resource)) return namespace === undefined ? name : `${namespace}/${name}`;
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
  return deepCopy(value);
}

/** Singular kind for error messages, in the API server's wording (`nodes "x" not found`). */
function describe(resource: KubeResource, namespace: string | undefined, name: string): string {
  return isClusterScoped(resource) || namespace === undefined
    ? `${resource} "${name}"`
    : `${resource} "${name}" in namespace "${namespace}"`;
}

/**
 * The contract plus reads that copy only what they return: list pages and control loops of large
 * clusters (20 000 nodes) would otherwise deep-copy every object on every read.
 */
export interface InMemoryKubeStore extends KubeStore {
  /**
   * Objects in list order for which `predicate` holds; copies at most `limit` of them and counts all.
   * `predicate` sees the stored object and must not change it. With `after` (`<namespace>/<name>`, the
   * namespace empty for cluster-scoped resources), only objects sorting after that key, found by a
   * binary search: a page of a continued list costs the page, not the objects before it.
   */
  select(
    resource: KubeResource,
    namespace: string | undefined,
    predicate: (object: Readonly<KubeObject>) => boolean,
    limit?: number,
    after?: string,
  ): { items: KubeObject[]; matched: number };
  /**
   * `select` without the copies: the stored objects themselves, on the same terms as `view` (a list page
   * serialised at once: copying 500 nodes only to serialise them cost most of a page's time).
   */
  selectStored(
    resource: KubeResource,
    namespace: string | undefined,
    predicate: (object: Readonly<KubeObject>) => boolean,
    limit?: number,
    after?: string,
  ): { items: Readonly<KubeObject>[]; matched: number };
  /**
   * The stored objects themselves, in list order, not copies: for readers that only look (the control
   * loops). A caller must not change them nor keep them past its turn (a write replaces the object).
   */
  view(resource: KubeResource, namespace?: string): readonly Readonly<KubeObject>[];
  /** The stored object itself (not a copy), on the same terms as `view`. */
  peek(resource: KubeResource, namespace: string | undefined, name: string): Readonly<KubeObject> | undefined;
}

export function isInMemoryKubeStore(store: KubeStore): store is InMemoryKubeStore {
  return typeof (store as Partial<InMemoryKubeStore>).select === 'function';
}

/** Objects to look at, not to change: the in-memory store's own (no copy), else a listed copy. */
export function viewOf(
  store: KubeStore,
  resource: KubeResource,
  namespace?: string,
): readonly Readonly<KubeObject>[] {
  return isInMemoryKubeStore(store) ? store.view(resource, namespace) : store.list(resource, namespace);
}

/** An object to look at, not to change: the in-memory store's own (no copy), else a copy. */
export function peekOf(
  store: KubeStore,
  resource: KubeResource,
  namespace: string | undefined,
  name: string,
): Readonly<KubeObject> | undefined {
  return isInMemoryKubeStore(store)
    ? store.peek(resource, namespace, name)
    : store.get(resource, namespace, name);
}

/** A store key (`name`, or `namespace/name`) as the pair list order sorts by. */
function splitKey(key: string): readonly [string, string] {
  const slash = key.indexOf('/');
  return slash < 0 ? ['', key] : [key.slice(0, slash), key.slice(slash + 1)];
}

function compareKeys(a: string, b: string): number {
  const [namespaceA, nameA] = splitKey(a);
  const [namespaceB, nameB] = splitKey(b);
  return compare(namespaceA, namespaceB) || compare(nameA, nameB);
}

/** Index of the first key in `order` (sorted) that sorts after `after` (`<namespace>/<name>`). */
function firstAfter(order: readonly string[], after: string): number {
  const [namespace, name] = splitKey(after);
  const target = namespace === '' ? name : after;
  let low = 0;
  let high = order.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareKeys(order[middle] ?? '', target) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
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
    if (isCustomResource(resource)) return object.metadata.namespace || undefined;
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
    // Each listener gets its own copy so one cannot corrupt what the next sees, made when it first reads
    // the object: most listeners look at the resource and go (a node's lease renewal every 10 simulated
    // seconds reached a dozen listeners, each copy unread). The stored object is never changed in place
    // (a write stores a new one), so a later copy is the object as it was emitted.
    for (const listener of [...listeners]) {
      let copied: KubeObject | undefined;
      listener({
        type,
        resource,
        ...(object.metadata.resourceVersion === undefined
          ? {}
          : { resourceVersion: object.metadata.resourceVersion }),
        get object() {
          copied ??= copy(object);
          return copied;
        },
      });
    }
  }

  /** Keys in list order (namespace, then name); cached until an object is added or removed. */
  function orderOf(resource: KubeResource): string[] {
    let order = orders.get(resource);
    if (!order) {
      order = [...table(resource).keys()].sort(compareKeys);
      orders.set(resource, order);
    }
    return order;
  }

  /** Stored objects in list order from position `from`, in `namespace` when given. */
  function* inOrder(resource: KubeResource, namespace: string | undefined, from = 0): Generator<KubeObject> {
    const order = orderOf(resource);
    const objects = table(resource);
    for (let index = from; index < order.length; index++) {
      const object = objects.get(order[index] ?? '');
      if (object !== undefined && inNamespace(resource, object, namespace)) yield object;
    }
  }

  function store(resource: KubeResource, key: string, object: KubeObject): KubeObject {
    if (!table(resource).has(key)) orders.delete(resource);
    object.metadata.resourceVersion = nextVersion();
    table(resource).set(key, object);
    return object;
  }

  function selectStored(
    resource: KubeResource,
    namespace: string | undefined,
    predicate: (object: Readonly<KubeObject>) => boolean,
    limit?: number,
    after?: string,
  ): { items: KubeObject[]; matched: number } {
    const items: KubeObject[] = [];
    let matched = 0;
    const from = after === undefined ? 0 : firstAfter(orderOf(resource), after);
    for (const object of inOrder(resource, namespace, from)) {
      if (!predicate(object)) continue;
      matched += 1;
      if (limit === undefined || items.length < limit) items.push(object);
    }
    return { items, matched };
  }

  return {
    get(resource, namespace, name) {
      const found = table(resource).get(keyOf(resource, namespace, name));
      return found ? copy(found) : undefined;
    },

    list(resource, namespace) {
      return [...inOrder(resource, namespace)].map(copy);
    },

    select(resource, namespace, predicate, limit, after) {
      const { items, matched } = selectStored(resource, namespace, predicate, limit, after);
      return { items: items.map(copy), matched };
    },

    selectStored,

    peek(resource, namespace, name) {
      return table(resource).get(keyOf(resource, namespace, name));
    },

    view(resource, namespace) {
      return [...inOrder(resource, namespace)];
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
      // A delete is a write too: watchers see the final object with a fresh resourceVersion (on a new
      // object: an earlier event's copy, made when its listener reads it, must not see this one's version).
      emit('DELETED', resource, {
        ...existing,
        metadata: { ...existing.metadata, resourceVersion: nextVersion() },
      });
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
