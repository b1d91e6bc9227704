/**
 * The simulated Kubernetes API server as a node:http request listener: discovery, CRUD with selectors
 * and paging, the three patch types, the eviction subresource with PodDisruptionBudgets, watch streams,
 * Table output for kubectl, bearer-token authentication and RBAC, all on simulated time.
 *
 * This module is the request pipeline (faults, authentication, RBAC, dispatch, Status errors);
 * routing is in `api-routing.ts`, the read verbs in `api-reads.ts`, the write verbs in `api-writes.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type {
  FaultInjector,
  KubeStore,
  LatencyProfile,
  RequestLog,
  Scheduler,
  SimClock,
} from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { messageOf } from '../errors.js';
import { serveReview } from './access-reviews.js';
import { serveDeleteCollection } from './api-delete-collection.js';
import { createKubeReads } from './api-reads.js';
import type { HttpReply } from './api-routing.js';
import { operationOf, refOf, type ResourceRoute, type ReviewRoute, routeRequest } from './api-routing.js';
import { createKubeWrites } from './api-writes.js';
import { type CoreVersion, CURRENT_CORE_VERSIONS, deprecationWarning } from './cluster-api-resources.js';
import type { KubeControllers } from './controllers.js';
import { startKubeControllers } from './controllers.js';
import { createCrdRegistry } from './crd-registry.js';
import { impersonatedUser, ImpersonationHeaderError } from './impersonation.js';
import { decodeProtobufBody, PROTOBUF_CONTENT_TYPE } from './protobuf.js';
import type { KubeAuthenticator, KubeAuthorizer, KubeUser } from './rbac.js';
import { restNameOf, serverVersion } from './resources.js';
import { serveScale } from './scale-subresource.js';
import type { StatusReason } from './status.js';
import { fromStoreError, KubeApiError } from './status.js';
import { wantsTable } from './tables.js';
import { parseDryRun, writeOptionsOf } from './write-options.js';

export interface KubeHandlerOptions {
  store: KubeStore;
  clock: SimClock;
  scheduler: Scheduler;
  faults: FaultInjector;
  log: RequestLog;
  authenticator: KubeAuthenticator;
  authorizer: KubeAuthorizer;
  latency: LatencyProfile;
  /** The cluster's Kubernetes version, as `/version` reports it (default v1.32.4). */
  kubernetesVersion?: string;
  /** A Cluster API management cluster: also serve the Cluster API and CAPZ kinds (default false). */
  clusterApi?: boolean;
  /**
   * The versions of cluster.x-k8s.io MachinePool and Machine a management cluster serves (default
   * v1beta1 and v1beta2, Cluster API v1.11+; `['v1beta1']` an older one).
   */
  clusterApiVersions?: readonly CoreVersion[];
  /** Delay before the ReplicaSet/DaemonSet stand-ins replace a pod (simulated seconds, default 1). */
  controllerDelaySeconds?: number;
}

/** A request listener plus the controllers it runs; `close()` ends open watches and stops the controllers. */
export interface KubeHandler {
  (request: IncomingMessage, response: ServerResponse): void;
  readonly controllers: KubeControllers;
  close(): void;
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
  const version = serverVersion(options.kubernetesVersion);
  const crds = createCrdRegistry({ store, clock, scheduler });
  const reads = createKubeReads({
    store,
    clock,
    scheduler,
    kubernetesVersion: version.gitVersion ?? 'v1.32.4',
  });
  const { serveList, serveGet, serveWatch } = reads;
  const coreVersions = options.clusterApiVersions ?? CURRENT_CORE_VERSIONS;
  const { serveCreate, serveUpdate, servePatch, serveDelete } = createKubeWrites({
    store,
    clock,
    controllers,
    reads,
    custom: crds,
    clusterApiVersions: coreVersions,
  });

  // --- request plumbing -------------------------------------------------------------------------

  function authorize(user: KubeUser, target: ResourceRoute): void {
    const decision = authorizer.authorize(user, {
      verb: target.verb,
      apiGroup: target.info.group,
      resource: restNameOf(target.info),
      ...(target.subresource === undefined ? {} : { subresource: target.subresource }),
      ...(target.name === undefined ? {} : { name: target.name }),
      ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
    });
    if (!decision.allowed) {
      throw new KubeApiError('Forbidden', decision.reason, {
        ...(target.name === undefined ? {} : { name: target.name }),
        ...(target.info.group === '' ? {} : { group: target.info.group }),
        kind: restNameOf(target.info),
      });
    }
  }

  /**
   * The request body as JSON: protobuf bodies of the kinds kubectl's typed clients send are decoded
   * (protobuf.ts); other protobuf and YAML bodies are refused 415 like a server without them would.
   */
  function jsonBody(contentType: string, body: Buffer): Buffer {
    const type = contentType.toLowerCase();
    // Server-side apply bodies are YAML; the apply verb reads them (server-side-apply.ts).
    if (type.startsWith('application/apply-patch+yaml')) return body;
    if (type.startsWith(PROTOBUF_CONTENT_TYPE)) {
      const decoded = decodeProtobufBody(body);
      if (decoded) return Buffer.from(JSON.stringify(decoded));
    }
    if (type.includes('protobuf') || type.includes('yaml')) {
      throw new KubeApiError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json`,
      );
    }
    return body;
  }

  function authorizeReview(user: KubeUser, target: ReviewRoute): void {
    const decision = authorizer.authorize(user, {
      verb: 'create',
      apiGroup: target.group,
      resource: target.resource,
    });
    if (!decision.allowed) {
      throw new KubeApiError('Forbidden', decision.reason, { group: target.group, kind: target.resource });
    }
  }

  function parseJsonBody(body: Buffer): unknown {
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch (error) {
      throw new KubeApiError('BadRequest', `decoding review: ${messageOf(error)}`);
    }
  }

  function send(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
    contentType?: string,
  ): void {
    const payload = Buffer.isBuffer(body)
      ? body
      : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
    // A deprecated version's warning (set in serve) comes first, then the reply's own.
    const deprecation = response.getHeader('Warning');
    if (typeof deprecation === 'string' && headers.Warning !== undefined) {
      response.setHeader('Warning', [deprecation, headers.Warning]);
      headers = Object.fromEntries(Object.entries(headers).filter(([key]) => key !== 'Warning'));
    }
    response.writeHead(status, {
      // The server's clock is the simulated one: clients judge lease expiry on it, as on a real API server.
      Date: clock.now().toUTCString(),
      'Content-Type':
        contentType ?? (typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json'),
      'Content-Length': String(payload.length),
      'Cache-Control': 'no-cache, private',
      ...headers,
    });
    response.end(payload);
  }

  function serve(request: IncomingMessage, response: ServerResponse, received: Buffer): void {
    scheduler.runDue();
    const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
    const method = (request.method ?? 'GET').toUpperCase();
    const target = routeRequest(
      method,
      url,
      version,
      request.headers.accept ?? 'application/json',
      options.clusterApi === true ? coreVersions : undefined,
      crds,
    );
    const operation = operationOf(target);
    const finish = (
      status: number,
      payload: unknown,
      headers?: Record<string, string>,
      contentType?: string,
    ): void => {
      log.record('kube', operation, status, {
        method,
        path: url.pathname,
        ...(url.search === '' ? {} : { query: url.search }),
      });
      send(response, status, payload, headers, contentType);
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
    const authenticated = authenticator.authenticate(request.headers.authorization);
    const anonymousAllowed =
      (target.type === 'discovery' || target.type === 'health') && target.public === true;
    if (!authenticated && !anonymousAllowed) {
      fail(new KubeApiError('Unauthorized', 'Unauthorized'));
      return;
    }
    try {
      // Authentication, then impersonation, then authorization: the request runs as whom it impersonates.
      const user = authenticated && impersonatedUser(authenticated, request.headersDistinct, authorizer);
      const body = jsonBody(request.headers['content-type'] ?? '', received);
      if (target.type === 'review') {
        if (!user) throw new KubeApiError('Unauthorized', 'Unauthorized');
        authorizeReview(user, target);
        finish(201, serveReview(target.kind, parseJsonBody(body), user, authorizer));
        return;
      }
      if (target.type !== 'resource') {
        const reply = target.respond();
        finish(reply.status, reply.body, reply.headers, reply.contentType);
        return;
      }
      if (!user) throw new KubeApiError('Unauthorized', 'Unauthorized');
      authorize(user, target);
      // A deprecated version's warning, once authorized (customresource_handler.go adds it while serving).
      const { info } = target;
      const warning = deprecationWarning(info.resource, info.group, info.version, info.kind, coreVersions);
      if (warning !== undefined) response.setHeader('Warning', warning);
      const table = wantsTable(request.headers.accept);
      let reply: HttpReply;
      if (target.subresource === 'scale') {
        reply = serveScale(store, target, body, request.headers['content-type'] ?? '');
        finish(reply.status, reply.body, reply.headers);
        return;
      }
      switch (target.verb) {
        case 'watch':
          serveWatch(target, url, response, table);
          log.record('kube', operation, 200, { method, path: url.pathname });
          return;
        case 'list':
          reply = serveList(target, url, table);
          break;
        case 'get':
          reply = serveGet(target, url, table);
          break;
        case 'create':
          reply = serveCreate(
            target,
            body,
            writeOptionsOf(url, 'CreateOptions', request.headers['user-agent']),
          );
          break;
        case 'update':
          reply = serveUpdate(
            target,
            body,
            writeOptionsOf(url, 'UpdateOptions', request.headers['user-agent']),
          );
          break;
        case 'patch':
          reply = servePatch(
            target,
            body,
            request.headers['content-type'] ?? '',
            writeOptionsOf(url, 'PatchOptions', request.headers['user-agent']),
          );
          break;
        case 'deletecollection':
          reply = serveDeleteCollection({ store, controllers, decorate: reads.decorate }, target, url, body);
          break;
        case 'delete':
          reply = serveDelete(
            target,
            url,
            body,
            parseDryRun(url.searchParams.getAll('dryRun'), 'DeleteOptions'),
          );
          break;
      }
      finish(reply.status, reply.body, reply.headers);
    } catch (error) {
      if (error instanceof KubeApiError) fail(error);
      else if (error instanceof ImpersonationHeaderError) {
        log.record('kube', operation, 500);
        send(
          response,
          500,
          `Internal Server Error: ${JSON.stringify(request.url ?? '/')}: ${error.message}\n`,
        );
      } else if (error instanceof KubeStoreError && target.type === 'resource')
        fail(fromStoreError(error, refOf(target)));
      else fail(new KubeApiError('InternalError', `serving ${operation}: ${messageOf(error)}`));
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
      reads.close();
      crds.close();
      controllers.stop();
    },
  });
  return handler;
}
