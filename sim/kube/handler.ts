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
import { createKubeReads } from './api-reads.js';
import type { HttpReply } from './api-routing.js';
import { operationOf, refOf, type ResourceRoute, routeRequest } from './api-routing.js';
import { createKubeWrites } from './api-writes.js';
import type { KubeControllers } from './controllers.js';
import { startKubeControllers } from './controllers.js';
import type { KubeAuthenticator, KubeAuthorizer, KubeUser } from './rbac.js';
import type { StatusReason } from './status.js';
import { fromStoreError, KubeApiError } from './status.js';
import { wantsTable } from './tables.js';

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
  const reads = createKubeReads({ store, clock, scheduler });
  const { serveList, serveGet, serveWatch } = reads;
  const { serveCreate, serveUpdate, servePatch, serveDelete } = createKubeWrites({
    store,
    controllers,
    reads,
  });

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
    const target = routeRequest(method, url);
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
      reads.close();
      controllers.stop();
    },
  });
  return handler;
}
