/**
 * The simulated Kubernetes API server as a node:http request listener: discovery, CRUD with selectors
 * and paging, the three patch types, the eviction subresource with PodDisruptionBudgets, watch streams,
 * Table output for kubectl, bearer-token authentication and RBAC, all on simulated time.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { z } from 'zod';

import type {
  FaultInjector,
  KubeObject,
  KubeStore,
  KubeWatchEvent,
  LatencyProfile,
  RequestLog,
  Scheduler,
  SimClock,
} from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import type { KubeControllers } from './controllers.js';
import { startKubeControllers } from './controllers.js';
import { checkEvictionAllowed, withBudgetStatus } from './disruption.js';
import { specOf } from './objects.js';
import type { PatchType } from './patch.js';
import { applyPatch, PATCH_CONTENT_TYPES } from './patch.js';
import type { KubeAuthenticator, KubeAuthorizer, KubeUser } from './rbac.js';
import type { ResourceInfo } from './resources.js';
import {
  API_GROUPS,
  apiGroupList,
  apiResourceList,
  apiVersionOf,
  apiVersions,
  findResource,
  SERVER_VERSION,
} from './resources.js';
import type { FieldRequirement, Requirement } from './selectors.js';
import { matchesFields, matchesRequirements, parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { ObjectRef, StatusReason } from './status.js';
import { alreadyExists, badRequest, fromStoreError, invalid, KubeApiError, notFound } from './status.js';
import { isInMemoryKubeStore } from './store.js';
import type { IncludeObject } from './tables.js';
import { renderTable, wantsTable } from './tables.js';
import { checkImmutable, validateMetadata } from './validation.js';

export interface KubeHandlerOptions {
  store: KubeStore;
  clock: SimClock;
  scheduler: Scheduler;
  faults: FaultInjector;
  log: RequestLog;
  authenticator: KubeAuthenticator;
  authorizer: KubeAuthorizer;
  latency: LatencyProfile;
  /** Delay before the ReplicaSet/DaemonSet stand-ins replace a pod (simulated seconds, default 1). */
  controllerDelaySeconds?: number;
}

/** A request listener plus the controllers it runs; `close()` ends open watches and stops the controllers. */
export interface KubeHandler {
  (request: IncomingMessage, response: ServerResponse): void;
  readonly controllers: KubeControllers;
  close(): void;
}

type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

interface ResourceRoute {
  type: 'resource';
  info: ResourceInfo;
  verb: Verb;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface OtherRoute {
  type: 'discovery' | 'health' | 'missing';
  /** Served to anonymous callers too, like the system:public-info-viewer role allows. */
  public?: boolean;
  respond: () => { status: number; body: unknown; contentType?: string };
}

type Route = ResourceRoute | OtherRoute;

/** Resources whose main endpoint ignores status changes (they have a `/status` subresource). */
const STATUS_SUBRESOURCE = new Set([
  'nodes',
  'pods',
  'namespaces',
  'replicasets',
  'daemonsets',
  'deployments',
  'poddisruptionbudgets',
]);

/** Resources whose status a client may not set on create (the API server resets it). */
const RESET_STATUS_ON_CREATE = new Set([
  'pods',
  'replicasets',
  'daemonsets',
  'deployments',
  'poddisruptionbudgets',
]);

/** Watch events kept for resuming watches; older resourceVersions get 410 Expired. */
const WATCH_HISTORY = 5000;

const DeleteOptions = z.object({
  gracePeriodSeconds: z.number().int().nullish(),
  preconditions: z.object({ uid: z.string().nullish(), resourceVersion: z.string().nullish() }).nullish(),
  propagationPolicy: z.string().nullish(),
  dryRun: z.array(z.string()).nullish(),
});
type DeleteOptions = z.infer<typeof DeleteOptions>;

const Eviction = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.object({ name: z.string().optional(), namespace: z.string().optional() }).optional(),
  deleteOptions: DeleteOptions.nullish(),
});

class HttpReply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function successStatus(code: number, details?: Record<string, unknown>): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    ...(details ? { details } : {}),
    code,
  };
}

function faultReason(status: number, code: string): StatusReason {
  const known: StatusReason[] = [
    'BadRequest',
    'Unauthorized',
    'Forbidden',
    'NotFound',
    'Conflict',
    'TooManyRequests',
    'InternalError',
    'ServiceUnavailable',
    'Timeout',
  ];
  if ((known as string[]).includes(code)) return code as StatusReason;
  if (status === 429) return 'TooManyRequests';
  if (status === 503) return 'ServiceUnavailable';
  if (status === 504) return 'Timeout';
  return 'InternalError';
}

function objectKey(object: Readonly<KubeObject>): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function compareKeys(a: string, b: string): number {
  const [namespaceA = '', nameA = ''] = a.split('/');
  const [namespaceB = '', nameB = ''] = b.split('/');
  const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return order(namespaceA, namespaceB) || order(nameA, nameB);
}

export function createKubeHandler(options: KubeHandlerOptions): KubeHandler {
  const { store, clock, scheduler, faults, log, authenticator, authorizer, latency } = options;
  const controllers = startKubeControllers({
    store,
    clock,
    scheduler,
    latency,
    ...(options.controllerDelaySeconds === undefined
      ? {}
      : { controllerDelaySeconds: options.controllerDelaySeconds }),
  });
  const watches = new Set<() => void>();
  // Recent changes, so a watch that resumes from a list's resourceVersion misses nothing.
  const history: { version: number; event: KubeWatchEvent }[] = [];
  let historyTruncated = false;
  const stopHistory = store.subscribe((event) => {
    history.push({ version: Number(event.object.metadata.resourceVersion ?? '0'), event });
    // Trim in batches so a busy store does not pay for an array shift on every write.
    if (history.length > 2 * WATCH_HISTORY) {
      history.splice(0, history.length - WATCH_HISTORY);
      historyTruncated = true;
    }
  });

  function route(method: string, url: URL): Route {
    const segments = url.pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map(decodeURIComponent);
    const path = segments.join('/');
    const discovery = (body: unknown, anonymous = false): Route => ({
      type: 'discovery',
      public: anonymous,
      respond: () => ({ status: 200, body }),
    });
    if (method === 'GET') {
      if (path === 'version') return discovery(SERVER_VERSION, true);
      if (path === 'api') return discovery(apiVersions(url.host));
      if (path === 'apis') return discovery(apiGroupList());
      if (path === 'api/v1') return discovery(apiResourceList('', 'v1'));
      if (segments[0] === 'apis' && segments.length === 3) {
        const [, group = '', version = ''] = segments;
        if (API_GROUPS.some((entry) => entry.group === group && entry.version === version)) {
          return discovery(apiResourceList(group, version));
        }
      }
      if (segments[0] === 'apis' && segments.length === 2) {
        const served = API_GROUPS.find((entry) => entry.group === segments[1]);
        if (served) {
          const groupVersion = { groupVersion: `${served.group}/${served.version}`, version: served.version };
          return discovery({
            kind: 'APIGroup',
            apiVersion: 'v1',
            name: served.group,
            versions: [groupVersion],
            preferredVersion: groupVersion,
          });
        }
      }
      if (['healthz', 'livez', 'readyz'].includes(path)) {
        return {
          type: 'health',
          public: true,
          respond: () => ({ status: 200, body: 'ok', contentType: 'text/plain' }),
        };
      }
    }
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === 'api' && segments[1] === 'v1') {
      group = '';
      version = 'v1';
      rest = segments.slice(2);
    } else if (segments[0] === 'apis' && segments.length >= 4) {
      group = segments[1] ?? '';
      version = segments[2] ?? '';
      rest = segments.slice(3);
    } else {
      return missing(url.pathname);
    }
    let namespace: string | undefined;
    // `/namespaces/<ns>/<resource>/…` is namespaced; `/namespaces/<ns>` alone is the Namespace object.
    if (rest[0] === 'namespaces' && rest.length >= 3 && !['status', 'finalize'].includes(rest[2] ?? '')) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural = '', name, subresource, ...extra] = rest;
    const info = findResource(group, version, plural);
    if (!info || extra.length > 0) return missing(url.pathname);
    if (namespace !== undefined && !info.namespaced) return missing(url.pathname);
    if (namespace === undefined && info.namespaced && name !== undefined) return missing(url.pathname);
    if (subresource !== undefined && !(info.subresources && subresource in info.subresources)) {
      return missing(url.pathname);
    }
    const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
    let verb: Verb;
    switch (method) {
      case 'GET':
        verb = name === undefined ? (watch ? 'watch' : 'list') : 'get';
        break;
      case 'POST':
        verb = 'create';
        break;
      case 'PUT':
        verb = 'update';
        break;
      case 'PATCH':
        verb = 'patch';
        break;
      case 'DELETE':
        verb = name === undefined ? 'deletecollection' : 'delete';
        break;
      default:
        return missing(url.pathname);
    }
    return {
      type: 'resource',
      info,
      verb,
      ...(namespace === undefined ? {} : { namespace }),
      ...(name === undefined ? {} : { name }),
      ...(subresource === undefined ? {} : { subresource }),
    };
  }

  function missing(path: string): OtherRoute {
    return {
      type: 'missing',
      respond: () => ({
        status: 404,
        body: new KubeApiError('NotFound', 'the server could not find the requested resource', {
          causes: [{ reason: 'UnexpectedServerResponse', message: `404 page not found: ${path}` }],
        }).toStatus(),
      }),
    };
  }

  function operationOf(target: Route): string {
    if (target.type !== 'resource') return `${target.type}:get`;
    const resource =
      target.subresource === undefined
        ? target.info.resource
        : `${target.info.resource}/${target.subresource}`;
    return `${resource}:${target.verb}`;
  }

  function refOf(target: ResourceRoute, name?: string): ObjectRef {
    return { resource: target.info.resource, group: target.info.group, name: name ?? target.name ?? '' };
  }

  function decorate(info: ResourceInfo, object: KubeObject): KubeObject {
    const shaped = {
      ...object,
      apiVersion: object.apiVersion || apiVersionOf(info),
      kind: object.kind || info.kind,
    };
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
      ({ items, matched } = store.select(target.info.resource, target.namespace, wanted, limit));
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
    if (table)
      return new HttpReply(
        200,
        renderTable(target.info.resource, decorated, metadata, clock.nowMs(), includeObject(url)),
      );
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
      return new HttpReply(
        200,
        renderTable(
          target.info.resource,
          [object],
          { resourceVersion: object.metadata.resourceVersion },
          clock.nowMs(),
          includeObject(url),
        ),
      );
    }
    return new HttpReply(200, object);
  }

  function serveWatch(target: ResourceRoute, url: URL, response: ServerResponse): void {
    const { labels, fields } = selectorsOf(target.info, url);
    const matches = (object: KubeObject): boolean =>
      (target.namespace === undefined || object.metadata.namespace === target.namespace) &&
      matchesRequirements(object.metadata.labels, labels) &&
      matchesFields(object, fields);
    response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // Clients (client-node's Watch) wait for the headers before they consider the watch open.
    response.flushHeaders();
    const write = (type: string, object: KubeObject): void => {
      response.write(`${JSON.stringify({ type, object: decorate(target.info, object) })}\n`);
    };
    const since = url.searchParams.get('resourceVersion');
    if (since === null || since === '' || since === '0') {
      for (const object of store.list(target.info.resource, target.namespace))
        if (matches(object)) write('ADDED', object);
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

  // --- writes -----------------------------------------------------------------------------------

  function parseBody(body: Buffer, what: string): unknown {
    if (body.length === 0) throw badRequest(`${what}: request body is empty`);
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch (error) {
      throw badRequest(`${what}: ${(error as Error).message}`);
    }
  }

  function serveCreate(target: ResourceRoute, body: Buffer): HttpReply {
    if (target.subresource === 'eviction') return serveEviction(target, body);
    if (target.name !== undefined)
      throw new KubeApiError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    const parsed = parseBody(body, 'decoding object');
    if (!isRecord(parsed) || !isRecord(parsed.metadata))
      throw badRequest('decoding object: metadata is required');
    const object = parsed as unknown as KubeObject;
    const { info } = target;
    object.apiVersion = apiVersionOf(info);
    object.kind = info.kind;
    if (info.namespaced) {
      if (object.metadata.namespace !== undefined && object.metadata.namespace !== target.namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      if (target.namespace === undefined)
        throw new KubeApiError(
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        );
      object.metadata.namespace = target.namespace;
      requireNamespace(target.namespace);
    }
    if (!object.metadata.name) {
      const base = parsed.metadata.generateName;
      if (typeof base !== 'string' || base === '') {
        throw invalid(
          info.kind,
          info.group,
          '',
          'metadata.name',
          'Required value: name or generateName is required',
        );
      }
      object.metadata.name = uniqueName(info, target.namespace, base);
    }
    validateMetadata(info.kind, info.group, object);
    for (const field of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
    ] as const) {
      delete object.metadata[field];
    }
    if (RESET_STATUS_ON_CREATE.has(info.resource)) {
      object.status = info.resource === 'pods' ? { phase: 'Pending' } : {};
    }
    if (
      info.resource === 'pods' &&
      typeof specOf(object).nodeName === 'string' &&
      specOf(object).nodeName !== ''
    ) {
      object.status = {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null }],
      };
    }
    if (info.resource === 'namespaces') object.status = { phase: 'Active' };
    try {
      return new HttpReply(201, decorate(info, store.create(info.resource, object)));
    } catch (error) {
      if (error instanceof KubeStoreError) throw alreadyExists(refOf(target, object.metadata.name));
      throw error;
    }
  }

  function uniqueName(info: ResourceInfo, namespace: string | undefined, base: string): string {
    let counter = Number(store.resourceVersion());
    for (;;) {
      counter += 7919;
      const name = `${base}${(counter % 60466176).toString(36).padStart(5, '0')}`;
      if (!store.get(info.resource, namespace, name)) return name;
    }
  }

  /** Applies what `PUT` or `PATCH` produced, keeping the fields the endpoint may not change. */
  function writeUpdate(
    target: ResourceRoute,
    existing: KubeObject,
    candidate: KubeObject,
    expectedVersion: string | undefined,
  ): HttpReply {
    const { info } = target;
    if (candidate.metadata.name !== existing.metadata.name) {
      throw invalid(
        info.kind,
        info.group,
        existing.metadata.name,
        'metadata.name',
        `Invalid value: "${candidate.metadata.name}": field is immutable`,
      );
    }
    let next: KubeObject;
    if (target.subresource === 'status') {
      next = { ...existing, status: candidate.status };
    } else {
      next = { ...candidate, apiVersion: apiVersionOf(info), kind: info.kind };
      if (STATUS_SUBRESOURCE.has(info.resource)) {
        if (existing.status === undefined) delete next.status;
        else next.status = existing.status;
      }
      next.metadata = {
        ...candidate.metadata,
        ...(existing.metadata.deletionTimestamp === undefined
          ? {}
          : { deletionTimestamp: existing.metadata.deletionTimestamp }),
        ...(existing.metadata.deletionGracePeriodSeconds === undefined
          ? {}
          : { deletionGracePeriodSeconds: existing.metadata.deletionGracePeriodSeconds }),
      };
      if (info.namespaced) next.metadata.namespace = existing.metadata.namespace;
      if (JSON.stringify(candidate.spec) !== JSON.stringify(existing.spec)) {
        next.metadata.generation = (existing.metadata.generation ?? 1) + 1;
      } else {
        next.metadata.generation = existing.metadata.generation ?? 1;
      }
      validateMetadata(info.kind, info.group, next);
      checkImmutable(info, existing, next);
    }
    next.metadata.resourceVersion = expectedVersion ?? existing.metadata.resourceVersion ?? '';
    // Like the API server, a write that changes nothing keeps the resourceVersion and notifies no one.
    const unchanged =
      next.metadata.resourceVersion === existing.metadata.resourceVersion &&
      JSON.stringify({
        ...next,
        metadata: {
          ...next.metadata,
          uid: existing.metadata.uid,
          creationTimestamp: existing.metadata.creationTimestamp,
        },
      }) === JSON.stringify(existing);
    if (unchanged) return new HttpReply(200, decorate(info, existing));
    return new HttpReply(200, decorate(info, store.update(info.resource, next)));
  }

  function serveUpdate(target: ResourceRoute, body: Buffer): HttpReply {
    const parsed = parseBody(body, 'decoding object');
    if (!isRecord(parsed) || !isRecord(parsed.metadata))
      throw badRequest('decoding object: metadata is required');
    const candidate = parsed as unknown as KubeObject;
    if (candidate.metadata.name !== target.name) {
      throw badRequest('the name of the object does not match the name on the URL');
    }
    if (
      target.info.namespaced &&
      candidate.metadata.namespace !== undefined &&
      candidate.metadata.namespace !== target.namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const existing = requireObject(target);
    const expected = candidate.metadata.resourceVersion;
    return writeUpdate(target, existing, candidate, expected === '' ? undefined : expected);
  }

  function servePatch(target: ResourceRoute, body: Buffer, contentType: string): HttpReply {
    const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    const patchType: PatchType | undefined = PATCH_CONTENT_TYPES[mediaType];
    if (patchType === undefined) {
      throw new KubeApiError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
    }
    const patch = parseBody(body, 'decoding patch');
    const existing = requireObject(target);
    const patched = applyPatch(patchType, existing, patch);
    if (!isRecord(patched) || !isRecord(patched.metadata)) {
      throw invalid(
        target.info.kind,
        target.info.group,
        existing.metadata.name,
        'metadata',
        'Required value: the patch removed the object metadata',
      );
    }
    const candidate = patched as unknown as KubeObject;
    // A resourceVersion in the patch is a precondition, like an If-Match.
    const requested = candidate.metadata.resourceVersion;
    const expected =
      requested !== undefined && requested !== existing.metadata.resourceVersion
        ? requested
        : existing.metadata.resourceVersion;
    if (candidate.metadata.uid !== undefined && candidate.metadata.uid !== existing.metadata.uid) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: UID in precondition: ${candidate.metadata.uid}, UID in object meta: ${existing.metadata.uid ?? ''}`,
      );
    }
    return writeUpdate(target, existing, candidate, expected);
  }

  function deleteOptionsOf(url: URL, body: Buffer): DeleteOptions {
    let options: DeleteOptions = {};
    if (body.length > 0) {
      const parsed = DeleteOptions.safeParse(parseBody(body, 'decoding delete options'));
      if (!parsed.success) throw badRequest(`decoding delete options: ${parsed.error.message}`);
      options = parsed.data;
    }
    const query = url.searchParams.get('gracePeriodSeconds');
    if (query !== null) {
      const grace = Number(query);
      if (!Number.isInteger(grace)) throw badRequest(`invalid gracePeriodSeconds "${query}"`);
      options = { ...options, gracePeriodSeconds: grace };
    }
    return options;
  }

  function checkPreconditions(target: ResourceRoute, object: KubeObject, options: DeleteOptions): void {
    const uid = options.preconditions?.uid;
    if (uid && uid !== object.metadata.uid) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${object.metadata.uid ?? ''}`,
        { name: object.metadata.name, kind: target.info.resource },
      );
    }
    const version = options.preconditions?.resourceVersion;
    if (version && version !== object.metadata.resourceVersion) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: ResourceVersion in precondition: ${version}, ResourceVersion in object meta: ${object.metadata.resourceVersion ?? ''}`,
        { name: object.metadata.name, kind: target.info.resource },
      );
    }
  }

  function serveDelete(target: ResourceRoute, url: URL, body: Buffer): HttpReply {
    if (target.verb === 'deletecollection' || target.subresource !== undefined) {
      throw new KubeApiError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    }
    const options = deleteOptionsOf(url, body);
    const existing = requireObject(target);
    checkPreconditions(target, existing, options);
    const { info } = target;
    if (info.resource === 'pods') {
      const deleted = controllers.deletePod(
        target.namespace ?? '',
        existing.metadata.name,
        options.gracePeriodSeconds ?? undefined,
      );
      return new HttpReply(200, decorate(info, deleted ?? existing));
    }
    if (info.resource === 'namespaces') {
      for (const other of [
        'pods',
        'poddisruptionbudgets',
        'daemonsets',
        'replicasets',
        'deployments',
        'leases',
        'serviceaccounts',
        'secrets',
        'events',
      ] as const) {
        for (const object of store.list(other, existing.metadata.name))
          store.remove(other, object.metadata.namespace, object.metadata.name);
      }
    }
    store.remove(info.resource, target.namespace, existing.metadata.name);
    return new HttpReply(
      200,
      successStatus(200, {
        name: existing.metadata.name,
        ...(info.group === '' ? {} : { group: info.group }),
        kind: info.resource,
        uid: existing.metadata.uid,
      }),
    );
  }

  function serveEviction(target: ResourceRoute, body: Buffer): HttpReply {
    const parsed = Eviction.safeParse(parseBody(body, 'decoding eviction'));
    if (!parsed.success) throw badRequest(`decoding eviction: ${parsed.error.message}`);
    const eviction = parsed.data;
    const name = target.name ?? '';
    if (eviction.metadata?.name !== undefined && eviction.metadata.name !== name) {
      throw badRequest('name in URL does not match name in Eviction object');
    }
    const pod = store.get('pods', target.namespace, name);
    if (!pod) throw notFound({ resource: 'pods', group: '', name });
    const options = eviction.deleteOptions ?? {};
    checkPreconditions(target, pod, options);
    checkEvictionAllowed(store, pod);
    controllers.deletePod(target.namespace ?? '', name, options.gracePeriodSeconds ?? undefined);
    return new HttpReply(201, successStatus(201));
  }

  // --- request plumbing -------------------------------------------------------------------------

  function authorize(user: KubeUser, target: ResourceRoute): void {
    const decision = authorizer.authorize(user, {
      verb: target.verb,
      apiGroup: target.info.group,
      resource: target.info.resource,
      ...(target.subresource === undefined ? {} : { subresource: target.subresource }),
      ...(target.name === undefined ? {} : { name: target.name }),
      ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
    });
    if (!decision.allowed) {
      throw new KubeApiError('Forbidden', decision.reason, {
        ...(target.name === undefined ? {} : { name: target.name }),
        ...(target.info.group === '' ? {} : { group: target.info.group }),
        kind: target.info.resource,
      });
    }
  }

  function send(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      'Content-Length': String(Buffer.byteLength(text)),
      'Cache-Control': 'no-cache, private',
      ...headers,
    });
    response.end(text);
  }

  function serve(request: IncomingMessage, response: ServerResponse, body: Buffer): void {
    scheduler.runDue();
    const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
    const method = (request.method ?? 'GET').toUpperCase();
    const target = route(method, url);
    const operation = operationOf(target);
    const finish = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      log.record('kube', operation, status);
      send(response, status, payload, headers);
    };
    const fail = (error: KubeApiError): void => {
      const headers: Record<string, string> =
        error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) };
      finish(error.code, error.toStatus(), headers);
    };
    const fault = faults.check('kube', operation);
    if (fault) {
      fail(
        new KubeApiError(
          faultReason(fault.status, fault.code),
          fault.message,
          undefined,
          fault.retryAfterSeconds,
          fault.status,
        ),
      );
      return;
    }
    const user = authenticator.authenticate(request.headers.authorization);
    const anonymousAllowed = target.type !== 'resource' && target.public === true;
    if (!user && !anonymousAllowed) {
      fail(new KubeApiError('Unauthorized', 'Unauthorized'));
      return;
    }
    try {
      if (target.type !== 'resource') {
        const reply = target.respond();
        finish(reply.status, reply.body);
        return;
      }
      if (!user) throw new KubeApiError('Unauthorized', 'Unauthorized');
      const requestType = (request.headers['content-type'] ?? '').toLowerCase();
      if (requestType.includes('protobuf') || requestType.includes('yaml')) {
        throw new KubeApiError(
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json`,
        );
      }
      authorize(user, target);
      const table = wantsTable(request.headers.accept);
      let reply: HttpReply;
      switch (target.verb) {
        case 'watch':
          log.record('kube', operation, 200);
          serveWatch(target, url, response);
          return;
        case 'list':
          reply = serveList(target, url, table);
          break;
        case 'get':
          reply = serveGet(target, url, table);
          break;
        case 'create':
          reply = serveCreate(target, body);
          break;
        case 'update':
          reply = serveUpdate(target, body);
          break;
        case 'patch':
          reply = servePatch(target, body, request.headers['content-type'] ?? '');
          break;
        case 'delete':
        case 'deletecollection':
          reply = serveDelete(target, url, body);
          break;
      }
      finish(reply.status, reply.body);
    } catch (error) {
      if (error instanceof KubeApiError) fail(error);
      else if (error instanceof KubeStoreError && target.type === 'resource')
        fail(fromStoreError(error, refOf(target)));
      else fail(new KubeApiError('InternalError', `serving ${operation}: ${(error as Error).message}`));
    }
  }

  const handler = ((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => serve(request, response, Buffer.concat(chunks)));
  }) as KubeHandler;
  Object.defineProperty(handler, 'controllers', { value: controllers });
  Object.defineProperty(handler, 'close', {
    value: () => {
      for (const end of [...watches]) end();
      stopHistory();
      controllers.stop();
    },
  });
  return handler;
}
