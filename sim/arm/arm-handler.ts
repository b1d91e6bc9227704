/**
 * HTTP handler of the simulated Azure Resource Manager for the Microsoft.Compute subset the product
 * uses: scale sets and their VMs (Uniform and Flexible), extensions, disks, snapshots, galleries,
 * image definitions and versions, run command, with ARM's long-running operations, errors, RBAC,
 * api-version checks and injected faults. The world mounts it on an HTTPS server.
 *
 * The request pipeline (authentication, api-version, RBAC, faults, request log) lives here; the
 * routes of each Azure resource family live in their own group (`scale-set-routes.ts`,
 * `vm-routes.ts`, `disk-routes.ts`, `gallery-routes.ts`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { InjectedFault } from '../contracts.js';
import type { ActionListAuthorizer } from './action-authorizer.js';
import { checkApiVersion, type OperationSurface } from './api-versions.js';
import {
  authenticate,
  errorReply,
  HttpError,
  matchPattern,
  notFoundRoute,
  parseJson,
  readBody,
  type Reply,
  type RequestContext,
  type Route,
} from './arm-http.js';
import { type AddRoute, type ArmHandlerOptions, type ArmRequestHandler, ArmRoutes } from './arm-routes.js';
import { AsyncOperations, OPERATION_READ_ACTION, OPERATION_SEGMENT } from './async-operations.js';
import { type ArmErrorBody, textOr } from './compute-state.js';
import { DiskRoutes } from './disk-routes.js';
import { GalleryRoutes } from './gallery-routes.js';
import { MarketplaceRoutes } from './marketplace-routes.js';
import { ScaleSetRoutes } from './scale-set-routes.js';
import { ArmThrottle, COMPUTE_POLICIES, computePolicyOf, computeThrottlingBody } from './throttling.js';
import { VirtualMachineRoutes } from './vm-routes.js';

export { type ArmHandlerOptions, type ArmRequestHandler, lroFaultOperation } from './arm-routes.js';

/** Creates the request handler; all state is in `options.state`, all time from the injected clock. */
export function createArmHandler(options: ArmHandlerOptions): ArmRequestHandler {
  const server = new ArmServer(options);
  return (request, response) => {
    server.serve(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        response.end(
          JSON.stringify({
            error: { code: 'InternalServerError', message: `serving request: ${String(error)}` },
          }),
        );
      } else {
        response.destroy();
      }
    });
  };
}

/** Serves the request pipeline and the operation-status routes; the resource routes come from the groups. */
class ArmServer extends ArmRoutes {
  private readonly routes: Route[];
  private requestCounter = 0;

  private readonly throttle: ArmThrottle;
  /** `GET /subscriptions/{s}/resourcegroups/{rg}` (Microsoft.Resources), outside the Compute tree. */
  private readonly resourceGroupRoute: Route = {
    method: 'GET',
    pattern: [],
    surface: 'resources',
    action: 'Microsoft.Resources/subscriptions/resourceGroups/read',
    resourceType: 'resourceGroups',
    handle: (context) => this.getResourceGroup(context),
  };
  /**
   * `GET …/resourceGroups/{rg}/providers/Microsoft.Authorization/permissions`: the caller's own
   * permissions at the group, answered from the action list the simulator enforces. ARM lets every
   * caller read its own permissions (the portal asks it for every user), so no action is checked.
   */
  private readonly permissionsRoute: Route = {
    method: 'GET',
    pattern: [],
    surface: 'authorization',
    action: 'Microsoft.Authorization/permissions/read',
    resourceType: 'permissions',
    anyCaller: true,
    handle: (context) => this.listPermissions(context),
  };

  constructor(options: ArmHandlerOptions) {
    super(options, new AsyncOperations(options.clock));
    this.routes = this.buildRoutes();
    this.throttle = options.throttle ?? new ArmThrottle({ clock: options.clock });
  }

  /**
   * An injected 429 looks like Compute's throttling (OperationNotAllowed naming the policy the action
   * is charged to), unless the rule names ARM's own `SubscriptionRequestsThrottled`; other faults keep
   * their rule's code and message.
   */
  private faultBody(fault: InjectedFault, route: Route, method: string): ArmErrorBody {
    if (fault.status !== 429 || fault.code === 'SubscriptionRequestsThrottled') {
      return { code: fault.code, message: fault.message };
    }
    const policy =
      computePolicyOf(route.action, isCollectionRead(method, route)) ?? COMPUTE_POLICIES.highCostGetVm;
    // The policy's own window (3, 5 or 30 minutes, by its name) holding now, its cap counted and one more.
    const windowMs = (Number(/(\d+)Min$/.exec(policy.name)?.[1] ?? '3') || 3) * 60_000;
    const startMs = Math.floor(this.options.clock.nowMs() / windowMs) * windowMs;
    return computeThrottlingBody(policy, startMs, startMs + windowMs, policy.cap, policy.cap + 1);
  }

  /** What Compute's headers say with an injected 429 in its shape: the policy's bucket is empty. */
  private faultHeaders(fault: InjectedFault, route: Route, method: string): Record<string, string> {
    if (fault.status !== 429 || fault.code === 'SubscriptionRequestsThrottled') return {};
    const policy =
      computePolicyOf(route.action, isCollectionRead(method, route)) ?? COMPUTE_POLICIES.highCostGetVm;
    return { 'x-ms-ratelimit-remaining-resource': `Microsoft.Compute/${policy.name};0` };
  }

  async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rawBody = await readBody(request);
    this.options.scheduler.runDue();
    const method = (request.method ?? 'GET').toUpperCase();
    const host = request.headers.host ?? '127.0.0.1';
    const url = new URL(request.url ?? '/', `https://${host}`);
    const path = url.pathname.replace(/\/+$/, '');
    let operation = `${method} ${path}`;
    let reply: Reply;
    let throttleHeaders: Record<string, string> = {};
    try {
      const match = this.match(method, path);
      if (match && 'route' in match) operation = match.route.action;
      const principal = authenticate(request.headers.authorization);
      if (!match) throw notFoundRoute(path);
      if ('methodNotAllowed' in match) {
        throw new HttpError(405, {
          code: 'MethodNotAllowed',
          message: `The requested resource does not support http method '${method}'.`,
        });
      }
      const { route, params, subscriptionId, resourceGroup } = match;
      const charged = this.throttle.charge(
        subscriptionId,
        method,
        route.action,
        isCollectionRead(method, route),
        principal.objectId,
      );
      throttleHeaders = charged.headers;
      if (charged.refused) {
        throw new HttpError(429, charged.refused.body, {
          'Retry-After': String(charged.refused.retryAfterSeconds),
        });
      }
      const apiVersion = url.searchParams.get('api-version');
      const versionCheck = checkApiVersion(
        route.surface,
        apiVersion,
        route.resourceType,
        this.state.defaultLocation,
      );
      if (!versionCheck.ok)
        throw new HttpError(400, { code: versionCheck.code, message: versionCheck.message });
      // Location-level reads (operation status, marketplace images) are authorized on the subscription.
      const scope =
        route.pattern[0] === 'locations'
          ? `/subscriptions/${subscriptionId}`
          : route.verb
            ? path.slice(0, path.lastIndexOf('/'))
            : path;
      if (route.anyCaller !== true && !this.options.authorizer(route.action, scope)) {
        throw new HttpError(403, {
          code: 'AuthorizationFailed',
          message: `The client '${principal.clientId}' with object id '${principal.objectId}' does not have authorization to perform action '${route.action}' over scope '${scope}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
        });
      }
      const fault = this.options.faults.check('arm', route.action);
      if (fault) {
        throttleHeaders = { ...throttleHeaders, ...this.faultHeaders(fault, route, method) };
        throw new HttpError(
          fault.status,
          this.faultBody(fault, route, method),
          fault.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(fault.retryAfterSeconds) },
        );
      }
      const context: RequestContext = {
        method,
        url,
        path,
        baseUrl: `https://${host}`,
        apiVersion: apiVersion ?? '',
        subscriptionId,
        resourceGroup,
        params,
        rawBody,
        body: undefined,
        headers: request.headers,
        route,
        principal,
        scope,
      };
      if (method === 'PUT' || method === 'PATCH' || (method === 'POST' && rawBody.trim() !== '')) {
        context.body = parseJson(rawBody);
      }
      reply = route.handle(context);
    } catch (error) {
      reply = errorReply(error);
    }
    this.requestCounter += 1;
    const requestId = `${this.requestCounter.toString(16).padStart(8, '0')}-0000-4000-a000-000000000000`;
    const headers: Record<string, string> = {
      'x-ms-request-id': requestId,
      'x-ms-correlation-request-id': textOr(request.headers['x-ms-client-request-id'], requestId),
      ...throttleHeaders,
      ...(reply.headers ?? {}),
    };
    this.options.log.record('arm', operation, reply.status, { method, path: requestTarget(url) });
    if (reply.body === undefined) {
      response.writeHead(reply.status, headers);
      response.end();
      return;
    }
    const payload = JSON.stringify(reply.body);
    response.writeHead(reply.status, {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(payload)),
    });
    response.end(payload);
  }

  // ------------------------------------------------------------------ routing

  private match(
    method: string,
    path: string,
  ):
    | { route: Route; params: Record<string, string>; subscriptionId: string; resourceGroup: string }
    | { methodNotAllowed: true }
    | undefined {
    const group = /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)$/i.exec(path);
    if (group?.[1] && group[2]) {
      if (method !== 'GET') return { methodNotAllowed: true };
      const resourceGroup = decodeURIComponent(group[2]);
      return { route: this.resourceGroupRoute, params: {}, subscriptionId: group[1], resourceGroup };
    }
    const permissions =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Authorization\/permissions$/i.exec(
        path,
      );
    if (permissions?.[1] && permissions[2]) {
      if (method !== 'GET') return { methodNotAllowed: true };
      return {
        route: this.permissionsRoute,
        params: {},
        subscriptionId: permissions[1],
        resourceGroup: decodeURIComponent(permissions[2]),
      };
    }
    const scoped =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/(.+)$/i.exec(path);
    const unscoped = /^\/subscriptions\/([^/]+)\/providers\/Microsoft\.Compute\/(locations\/.+)$/i.exec(path);
    const subscriptionId = scoped?.[1] ?? unscoped?.[1];
    const rest = scoped?.[3] ?? unscoped?.[2];
    if (!subscriptionId || !rest) return undefined;
    const segments = rest.split('/').map((segment) => decodeURIComponent(segment));
    let pathMatched = false;
    for (const route of this.routes) {
      const params = matchPattern(route.pattern, segments);
      if (!params) continue;
      if (route.pattern[0] === 'locations' ? scoped : unscoped) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      return { route, params, subscriptionId, resourceGroup: scoped?.[2] ?? '' };
    }
    return pathMatched ? { methodNotAllowed: true } : undefined;
  }

  private getOperation(context: RequestContext, surface: OperationSurface): Reply {
    const operation = this.operations.get(context.params.operation ?? '');
    if (!operation || operation.surface !== surface) {
      throw new HttpError(404, {
        code: 'NotFound',
        message: `The operation '${context.params.operation ?? ''}' was not found.`,
      });
    }
    const advanceClock = this.options.advanceClock;
    if (advanceClock !== undefined && operation.status === 'InProgress') {
      const remaining = Math.max(0, (operation.expectedDoneMs - this.options.clock.nowMs()) / 1000);
      advanceClock(Math.min(30, Math.max(1, Math.ceil(remaining))));
    }
    const monitor = context.url.searchParams.get('monitor') === 'true';
    if (!monitor) {
      const headers: Record<string, string> = {};
      if (operation.status === 'InProgress') {
        const retryAfter = this.retryAfter(operation);
        if (retryAfter) headers['Retry-After'] = retryAfter;
      }
      return { status: 200, body: AsyncOperations.statusBody(operation), headers };
    }
    if (operation.status === 'InProgress') {
      return { status: 202, headers: this.operationHeaders(context, operation, true) };
    }
    if (operation.status === 'Succeeded') {
      return operation.result ? { status: 200, body: operation.result } : { status: 200 };
    }
    return {
      status: operation.failureHttpStatus ?? 500,
      body: { error: operation.error ?? { code: 'InternalServerError', message: 'The operation failed.' } },
    };
  }

  // ------------------------------------------------------------------ resource groups

  /** The resource groups that exist: those holding compute resources, and the configured ones. */
  private resourceGroups(subscriptionId: string): { name: string; location: string }[] {
    const found = new Map<string, { name: string; location: string }>();
    const add = (name: string, location: string): void => {
      if (!found.has(name.toLowerCase())) found.set(name.toLowerCase(), { name, location });
    };
    for (const group of this.options.resourceGroups?.() ?? []) add(group.name, group.location);
    for (const group of this.state.resourceGroupsInUse()) {
      if (group.subscriptionId.toLowerCase() === subscriptionId.toLowerCase())
        add(group.name, group.location);
    }
    return [...found.values()];
  }

  private findResourceGroup(
    subscriptionId: string,
    name: string,
  ): { name: string; location: string } | undefined {
    return this.resourceGroups(subscriptionId).find(
      (group) => group.name.toLowerCase() === name.toLowerCase(),
    );
  }

  private getResourceGroup(context: RequestContext): Reply {
    const group = this.findResourceGroup(context.subscriptionId, context.resourceGroup);
    if (!group) throw resourceGroupNotFound(context.resourceGroup);
    return {
      status: 200,
      body: {
        id: `/subscriptions/${context.subscriptionId}/resourceGroups/${group.name}`,
        name: group.name,
        type: 'Microsoft.Resources/resourceGroups',
        location: group.location,
        properties: { provisioningState: 'Succeeded' },
      },
    };
  }

  private listPermissions(context: RequestContext): Reply {
    const group = this.findResourceGroup(context.subscriptionId, context.resourceGroup);
    if (!group) throw resourceGroupNotFound(context.resourceGroup);
    // The role the simulator enforces is assigned on every resource group: its actions are the caller's.
    const granted = (this.options.authorizer as Partial<ActionListAuthorizer>).allowed;
    return {
      status: 200,
      body: {
        value: [
          {
            actions: granted === undefined ? ['*'] : [...granted],
            notActions: [],
            dataActions: [],
            notDataActions: [],
          },
        ],
      },
    };
  }

  // ------------------------------------------------------------------ routes

  register(add: AddRoute): void {
    for (const surface of ['compute', 'disk', 'gallery'] as const) {
      add(
        'GET',
        `locations/:location/${OPERATION_SEGMENT[surface]}/:operation`,
        surface,
        OPERATION_READ_ACTION[surface],
        `locations/${OPERATION_SEGMENT[surface]}`,
        (c) => this.getOperation(c, surface),
      );
    }
  }

  private buildRoutes(): Route[] {
    const routes: Route[] = [];
    const add: AddRoute = (method, pattern, surface, action, resourceType, handle, flags = {}) => {
      routes.push({ method, pattern: pattern.split('/'), surface, action, resourceType, handle, ...flags });
    };
    const groups: ArmRoutes[] = [
      new ScaleSetRoutes(this.options, this.operations),
      new VirtualMachineRoutes(this.options, this.operations),
      new DiskRoutes(this.options, this.operations),
      new GalleryRoutes(this.options, this.operations),
      ...(this.options.marketplaceImages === true
        ? [new MarketplaceRoutes(this.options, this.operations)]
        : []),
      this,
    ];
    for (const group of groups) group.register(add);
    return routes;
  }
}

/** A GET of a collection (the route's last segment is a fixed name): Compute charges lists as high cost. */
function isCollectionRead(method: string, route: Route): boolean {
  const last = route.pattern.at(-1) ?? '';
  return method === 'GET' && !last.startsWith(':') && last.toLowerCase() !== 'instanceview';
}

function resourceGroupNotFound(name: string): HttpError {
  return new HttpError(404, {
    code: 'ResourceGroupNotFound',
    message: `Resource group '${name}' could not be found.`,
  });
}

/** The path and query a request named, without `api-version` (the same read at another version is the same read). */
function requestTarget(url: URL): string {
  const query = new URLSearchParams(url.searchParams);
  query.delete('api-version');
  const search = query.toString();
  return `${url.pathname.replace(/\/+$/, '')}${search === '' ? '' : `?${search}`}`;
}
