/**
 * The read verbs of the simulated Kubernetes API server: get and list (selectors, paging, Tables for
 * kubectl) and watch (with a bounded history so a watch resuming from a list's resourceVersion misses
 * nothing, 410 Expired beyond it; streaming lists with `sendInitialEvents`, watch-list.ts).
 */
import type { ServerResponse } from 'node:http';

import type { KubeObject, KubeStore, KubeWatchEvent, Scheduler, SimClock } from '../contracts.js';
import { HttpReply, refOf, type ResourceRoute } from './api-routing.js';
import { toServedVersion } from './cluster-api-conversion.js';
import { renderCrdTable, renderCustomTable } from './crd-tables.js';
import { defaultRead } from './custom-writes.js';
import { withBudgetStatus } from './disruption.js';
import type { ResourceInfo } from './resources.js';
import { apiVersionOf } from './resources.js';
import type { FieldRequirement, Requirement } from './selectors.js';
import { matchesFields, matchesRequirements, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest, KubeApiError, notFound } from './status.js';
import { isInMemoryKubeStore } from './store.js';
import type { IncludeObject } from './tables.js';
import { renderTable } from './tables.js';
import { checkListOptions, initialEventsEndBookmark, watchStartOf } from './watch-list.js';

/** Watch events kept for resuming watches; older resourceVersions get 410 Expired. */
const WATCH_HISTORY = 5000;

function objectKey(object: Readonly<KubeObject>): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function compareKeys(a: string, b: string): number {
  const [namespaceA = '', nameA = ''] = a.split('/');
  const [namespaceB = '', nameB = ''] = b.split('/');
  const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return order(namespaceA, namespaceB) || order(nameA, nameB);
}

export interface KubeReadsOptions {
  store: KubeStore;
  clock: SimClock;
  scheduler: Scheduler;
  /** The server's version (`/version` gitVersion): whether streaming lists are on depends on it. */
  kubernetesVersion?: string;
}

export type KubeReads = ReturnType<typeof createKubeReads>;

/** The read verbs over one store; `close()` ends open watches and stops recording history. */
export function createKubeReads(options: KubeReadsOptions) {
  const { store, clock, scheduler } = options;
  const gitVersion = options.kubernetesVersion ?? 'v1.32.4';
  const watches = new Set<() => void>();
  // Recent changes, so a watch that resumes from a list's resourceVersion misses nothing.
  const history: { version: number; event: KubeWatchEvent }[] = [];
  let historyTruncated = false;
  const stopHistory = store.subscribe((event) => {
    // The version without reading `object`: the event keeps it uncopied until a watch replays it.
    const version = event.resourceVersion ?? event.object.metadata.resourceVersion;
    history.push({ version: Number(version ?? '0'), event });
    // Trim in batches so a busy store does not pay for an array shift on every write.
    if (history.length > 2 * WATCH_HISTORY) {
      history.splice(0, history.length - WATCH_HISTORY);
      historyTruncated = true;
    }
  });

  function decorate(info: ResourceInfo, object: KubeObject): KubeObject {
    // A custom resource is served in the version asked for (conversion None) with its defaults.
    if (info.custom) return { ...defaultRead(info, object), apiVersion: apiVersionOf(info), kind: info.kind };
    // MachinePool and Machine at v1beta2: converted from the stored v1beta1 (cluster-api-conversion.ts).
    const shaped = toServedVersion(info, {
      ...object,
      apiVersion: object.apiVersion || apiVersionOf(info),
      kind: object.kind || info.kind,
    });
    return info.resource === 'poddisruptionbudgets' ? withBudgetStatus(store, shaped) : shaped;
  }

  function requireObject(target: ResourceRoute): KubeObject {
    const found = store.get(target.info.resource, target.namespace, target.name ?? '');
    if (!found) throw notFound(refOf(target));
    return found;
  }

  function requireNamespace(namespace: string | undefined): void {
    if (namespace !== undefined && !store.get('namespaces', undefined, namespace)) {
      throw notFound({ resource: 'namespaces', group: '', name: namespace });
    }
  }

  /** The Table of a kind: a custom resource's printer columns, a CRD's default columns, or tables.ts. */
  function render(
    info: ResourceInfo,
    objects: KubeObject[],
    listMeta: Record<string, unknown>,
    include: IncludeObject,
    withColumns = true,
  ): object {
    if (info.custom)
      return renderCustomTable(info.custom.columns, objects, listMeta, clock.nowMs(), include, withColumns);
    if (info.resource === 'customresourcedefinitions')
      return renderCrdTable(objects, listMeta, include, withColumns);
    return renderTable(info.resource, objects, listMeta, clock.nowMs(), include, withColumns);
  }

  // --- reads ------------------------------------------------------------------------------------

  function selectorsOf(info: ResourceInfo, url: URL): { labels: Requirement[]; fields: FieldRequirement[] } {
    return {
      labels: parseLabelSelector(url.searchParams.get('labelSelector') ?? ''),
      fields: parseFieldSelector(url.searchParams.get('fieldSelector') ?? '', info.fieldSelectors),
    };
  }

  function includeObject(url: URL): IncludeObject {
    const value = url.searchParams.get('includeObject');
    return value === 'None' || value === 'Object' ? value : 'Metadata';
  }

  function serveList(target: ResourceRoute, url: URL, table: boolean): HttpReply {
    checkListOptions(url);
    const { labels, fields } = selectorsOf(target.info, url);
    const resourceVersion = store.resourceVersion();
    const token = url.searchParams.get('continue');
    let start: string | undefined;
    if (token) {
      try {
        const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { start?: unknown };
        if (typeof decoded.start !== 'string') throw new Error('no start key');
        start = decoded.start;
      } catch {
        throw badRequest('continue key is not valid: invalid continue token');
      }
    }
    const wanted = (object: Readonly<KubeObject>): boolean =>
      (start === undefined || compareKeys(objectKey(object), start) > 0) &&
      matchesRequirements(object.metadata.labels, labels) &&
      matchesFields(object, fields);
    const limitParam = Number(url.searchParams.get('limit') ?? '0');
    const limit = Number.isInteger(limitParam) && limitParam > 0 ? limitParam : undefined;
    let items: KubeObject[];
    let matched: number;
    if (isInMemoryKubeStore(store)) {
      // The store seeks to the continue key itself (binary search): a page costs the page.
      const selected = (object: Readonly<KubeObject>): boolean =>
        matchesRequirements(object.metadata.labels, labels) && matchesFields(object, fields);
      // A JSON list is serialised within this request: the stored objects, not copies (decorate only
      // spreads them); a Table keeps copies.
      const { resource } = target.info;
      ({ items, matched } = table
        ? store.select(resource, target.namespace, selected, limit, start)
        : store.selectStored(resource, target.namespace, selected, limit, start));
    } else {
      const all = store.list(target.info.resource, target.namespace).filter(wanted);
      matched = all.length;
      items = limit === undefined ? all : all.slice(0, limit);
    }
    const metadata: Record<string, unknown> = { resourceVersion };
    if (limit !== undefined && matched > limit) {
      const last = items.at(-1);
      if (last) {
        metadata.continue = Buffer.from(
          JSON.stringify({ rv: resourceVersion, start: objectKey(last) }),
        ).toString('base64url');
      }
      if (labels.length === 0 && fields.length === 0) metadata.remainingItemCount = matched - limit;
    }
    const decorated = items.map((object) => decorate(target.info, object));
    if (table) return new HttpReply(200, render(target.info, decorated, metadata, includeObject(url)));
    return new HttpReply(200, {
      kind: `${target.info.kind}List`,
      apiVersion: apiVersionOf(target.info),
      metadata,
      items: decorated,
    });
  }

  function serveGet(target: ResourceRoute, url: URL, table: boolean): HttpReply {
    const object = decorate(target.info, requireObject(target));
    if (table) {
      const listMeta = { resourceVersion: object.metadata.resourceVersion };
      return new HttpReply(200, render(target.info, [object], listMeta, includeObject(url)));
    }
    return new HttpReply(200, object);
  }

  function serveWatch(target: ResourceRoute, url: URL, response: ServerResponse, table = false): void {
    const start = watchStartOf(url, gitVersion);
    const { labels, fields } = selectorsOf(target.info, url);
    const matches = (object: KubeObject): boolean =>
      (target.namespace === undefined || object.metadata.namespace === target.namespace) &&
      matchesRequirements(object.metadata.labels, labels) &&
      matchesFields(object, fields);
    response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // Clients (client-node's Watch) wait for the headers before they consider the watch open.
    response.flushHeaders();
    let first = true;
    const write = (type: string, object: KubeObject): void => {
      const decorated = decorate(target.info, object);
      // kubectl get -w asks for Tables: each event carries a one-row Table (columns on the first only).
      const payload = table
        ? render(
            target.info,
            [decorated],
            { resourceVersion: decorated.metadata.resourceVersion },
            includeObject(url),
            first,
          )
        : decorated;
      first = false;
      response.write(`${JSON.stringify({ type, object: payload })}\n`);
    };
    const since = url.searchParams.get('resourceVersion');
    if (start.initialEvents) {
      const resourceVersion = store.resourceVersion();
      for (const object of store.list(target.info.resource, target.namespace))
        if (matches(object)) write('ADDED', object);
      if (start.initialEventsEndBookmark) {
        const bookmark = initialEventsEndBookmark(
          apiVersionOf(target.info),
          target.info.kind,
          resourceVersion,
        );
        response.write(`${JSON.stringify({ type: 'BOOKMARK', object: bookmark })}\n`);
      }
    } else if (since === null || since === '' || since === '0') {
      // sendInitialEvents=false without a resourceVersion: from the most recent state, nothing before.
    } else {
      const from = Number(since);
      const oldest = history[0]?.version ?? Number(store.resourceVersion()) + 1;
      if (!Number.isInteger(from) || (historyTruncated && from < oldest - 1)) {
        // Like etcd compaction: the client must list again (informers do this on 410).
        const expired = new KubeApiError(
          'Expired',
          `too old resource version: ${since} (${oldest - 1})`,
          undefined,
          undefined,
          410,
        );
        response.end(`${JSON.stringify({ type: 'ERROR', object: expired.toStatus() })}\n`);
        return;
      }
      for (const entry of history) {
        if (
          entry.version > from &&
          entry.event.resource === target.info.resource &&
          matches(entry.event.object)
        ) {
          write(entry.event.type, entry.event.object);
        }
      }
    }
    let cancelTimeout: (() => void) | undefined;
    const unsubscribe = store.subscribe((event) => {
      if (event.resource === target.info.resource && matches(event.object)) write(event.type, event.object);
    });
    const end = (): void => {
      if (!watches.delete(end)) return;
      unsubscribe();
      cancelTimeout?.();
      response.end();
    };
    watches.add(end);
    response.on('close', end);
    const timeout = Number(url.searchParams.get('timeoutSeconds') ?? '0');
    if (Number.isFinite(timeout) && timeout > 0)
      cancelTimeout = scheduler.after(timeout, 'kube:watch-timeout', end);
  }

  function close(): void {
    for (const end of [...watches]) end();
    stopHistory();
  }

  return { decorate, requireObject, requireNamespace, serveList, serveGet, serveWatch, close };
}
