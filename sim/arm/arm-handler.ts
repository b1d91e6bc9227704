/**
 * HTTP handler of the simulated Azure Resource Manager for the Microsoft.Compute subset the product
 * uses: scale sets and their VMs (Uniform and Flexible), extensions, disks, snapshots, galleries,
 * image definitions and versions, run command, with ARM's long-running operations, errors, RBAC,
 * api-version checks and injected faults. The world mounts it on an HTTPS server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { z } from 'zod';

import type { FaultInjector, LatencyProfile, RequestLog, Scheduler, SimClock } from '../contracts.js';
import type { ArmAuthorizer } from './action-authorizer.js';
import { type ApiSurface, checkApiVersion } from './api-versions.js';
import {
  renderDisk,
  renderGallery,
  renderImageDefinition,
  renderImageVersion,
  renderInstanceView,
  renderScaleSet,
  renderScaleSetVm,
  renderSnapshot,
  renderVirtualMachine,
  scaleSetExtensions,
} from './arm-resources.js';
import {
  type AsyncOperation,
  AsyncOperations,
  OPERATION_READ_ACTION,
  OPERATION_SEGMENT,
} from './async-operations.js';
import {
  type ArmErrorBody,
  type Completion,
  ComputeError,
  type ComputeState,
  deepCopy,
  type FailureCheck,
  idKey,
  isGalleryImageReference,
  isObject,
  type JsonObject,
  textOr,
} from './compute-state.js';
import { mergePatch } from './merge-patch.js';

export interface ArmHandlerOptions {
  state: ComputeState;
  clock: SimClock;
  scheduler: Scheduler;
  faults: FaultInjector;
  log: RequestLog;
  authorizer: ArmAuthorizer;
  latency: LatencyProfile;
  /**
   * `Retry-After` (seconds) sent with operations in progress. Default: the remaining simulated
   * seconds, clamped to 1–30. Worlds with a time factor, and tests, pass their own (0 = omit).
   */
  retryAfterSeconds?: number | ((remainingSimulatedSeconds: number) => number);
  /** Items per page of list responses (`nextLink` beyond). Default 100. */
  pageSize?: number;
}

export type ArmRequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** Fault-injector operation name of a long-running operation's failure, e.g. `Microsoft.Compute/snapshots/write#lro`. */
export function lroFaultOperation(action: string): string {
  return `${action}#lro`;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: ArmErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

interface Principal {
  clientId: string;
  objectId: string;
}

interface RequestContext {
  method: string;
  url: URL;
  path: string;
  baseUrl: string;
  apiVersion: string;
  subscriptionId: string;
  resourceGroup: string;
  params: Record<string, string>;
  body: unknown;
  rawBody: string;
  route: Route;
  principal: Principal;
  /** The RBAC scope the route's action was authorized on. */
  scope: string;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Route {
  method: string;
  /** Segments after `providers/Microsoft.Compute/`; `:name` captures. */
  pattern: string[];
  surface: ApiSurface;
  action: string;
  /** The route starts a long-running operation (its failure can be injected). */
  lro?: boolean;
  /** The request path ends in an action verb; the RBAC scope is the resource before it. */
  verb?: boolean;
  resourceType: string;
  handle: (context: RequestContext) => Reply;
}

const VMSS = 'Microsoft.Compute/virtualMachineScaleSets';
const VM = 'Microsoft.Compute/virtualMachines';

const Tags = z.record(z.string(), z.string());

const ScaleSetPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  sku: z
    .looseObject({
      name: z.string().optional(),
      tier: z.string().optional(),
      capacity: z.number().int().min(0).optional(),
    })
    .optional(),
  zones: z.array(z.string()).optional(),
  properties: z.looseObject({}),
});

const ScaleSetPatch = z.looseObject({
  tags: Tags.optional(),
  sku: z
    .looseObject({ name: z.string().optional(), capacity: z.number().int().min(0).optional() })
    .optional(),
  properties: z.looseObject({}).optional(),
});

const RunCommandInput = z.looseObject({
  commandId: z.string(),
  script: z.array(z.string()).optional(),
  parameters: z.array(z.looseObject({ name: z.string(), value: z.string() })).optional(),
});

const SnapshotPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  sku: z.looseObject({ name: z.string().optional() }).optional(),
  properties: z.looseObject({
    creationData: z.looseObject({ createOption: z.string(), sourceResourceId: z.string().optional() }),
    incremental: z.boolean().optional(),
  }),
});

const GalleryPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  properties: z.looseObject({ description: z.string().optional() }).optional(),
});

const ImageDefinitionPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  properties: z.looseObject({
    osType: z.enum(['Linux', 'Windows']),
    osState: z.enum(['Generalized', 'Specialized']),
    identifier: z.looseObject({ publisher: z.string(), offer: z.string(), sku: z.string() }),
    hyperVGeneration: z.enum(['V1', 'V2']).optional(),
    architecture: z.enum(['x64', 'Arm64']).optional(),
    features: z.array(z.looseObject({ name: z.string(), value: z.string() })).optional(),
    allowUpdateImage: z.boolean().optional(),
  }),
});

const TargetRegion = z.looseObject({
  name: z.string(),
  regionalReplicaCount: z.number().int().optional(),
  storageAccountType: z.string().optional(),
  excludeFromLatest: z.boolean().optional(),
});

const ImageVersionPut = z.looseObject({
  location: z.string(),
  tags: Tags.optional(),
  properties: z.looseObject({
    publishingProfile: z
      .looseObject({
        targetRegions: z.array(TargetRegion).optional(),
        replicaCount: z.number().int().min(1).max(100).optional(),
        storageAccountType: z
          .enum(['Standard_LRS', 'Standard_ZRS', 'Premium_LRS', 'PremiumV2_LRS'])
          .optional(),
        excludeFromLatest: z.boolean().optional(),
        endOfLifeDate: z.string().optional(),
        replicationMode: z.enum(['Full', 'Shallow']).optional(),
      })
      .optional(),
    storageProfile: z.looseObject({
      source: z.looseObject({ id: z.string().optional() }).optional(),
      osDiskImage: z
        .looseObject({
          source: z.looseObject({ id: z.string().optional() }).optional(),
          hostCaching: z.string().optional(),
        })
        .optional(),
    }),
  }),
});

const ImageVersionPatch = z.looseObject({
  tags: Tags.optional(),
  properties: z.looseObject({}).optional(),
});

const VERSION_NAME = /^(\d+)\.(\d+)\.(\d+)$/;
const GALLERY_NAME = /^[A-Za-z0-9]([A-Za-z0-9_.]{0,78}[A-Za-z0-9])?$/;
const MAX_CUSTOM_DATA = 87380;

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

class ArmServer {
  private readonly state: ComputeState;
  private readonly operations: AsyncOperations;
  private readonly routes: Route[];
  private requestCounter = 0;

  constructor(private readonly options: ArmHandlerOptions) {
    this.state = options.state;
    this.operations = new AsyncOperations(options.clock);
    this.routes = this.buildRoutes();
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
      const apiVersion = url.searchParams.get('api-version');
      const versionCheck = checkApiVersion(
        route.surface,
        apiVersion,
        route.resourceType,
        this.state.defaultLocation,
      );
      if (!versionCheck.ok)
        throw new HttpError(400, { code: versionCheck.code, message: versionCheck.message });
      const scope = route.verb ? path.slice(0, path.lastIndexOf('/')) : path;
      if (!this.options.authorizer(route.action, scope)) {
        throw new HttpError(403, {
          code: 'AuthorizationFailed',
          message: `The client '${principal.clientId}' with object id '${principal.objectId}' does not have authorization to perform action '${route.action}' over scope '${scope}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
        });
      }
      const fault = this.options.faults.check('arm', route.action);
      if (fault) {
        throw new HttpError(
          fault.status,
          { code: fault.code, message: fault.message },
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
      ...(reply.headers ?? {}),
    };
    this.options.log.record('arm', operation, reply.status);
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

  private buildRoutes(): Route[] {
    const routes: Route[] = [];
    const add = (
      method: string,
      pattern: string,
      surface: ApiSurface,
      action: string,
      resourceType: string,
      handle: (context: RequestContext) => Reply,
      flags: { lro?: boolean; verb?: boolean } = {},
    ): void => {
      routes.push({ method, pattern: pattern.split('/'), surface, action, resourceType, handle, ...flags });
    };
    const vmss = 'virtualMachineScaleSets';
    const vmssVm = `${vmss}/:vmss/virtualMachines/:instance`;
    add('GET', vmss, 'compute', `${VMSS}/read`, vmss, (c) => this.listScaleSets(c));
    add('GET', `${vmss}/:vmss`, 'compute', `${VMSS}/read`, vmss, (c) => this.getScaleSet(c));
    add('PUT', `${vmss}/:vmss`, 'compute', `${VMSS}/write`, vmss, (c) => this.putScaleSet(c), { lro: true });
    add('PATCH', `${vmss}/:vmss`, 'compute', `${VMSS}/write`, vmss, (c) => this.patchScaleSet(c), {
      lro: true,
    });
    add(
      'GET',
      `${vmss}/:vmss/virtualMachines`,
      'compute',
      `${VMSS}/virtualMachines/read`,
      `${vmss}/virtualMachines`,
      (c) => this.listScaleSetVms(c),
    );
    add('GET', vmssVm, 'compute', `${VMSS}/virtualMachines/read`, `${vmss}/virtualMachines`, (c) =>
      this.getScaleSetVm(c),
    );
    add(
      'GET',
      `${vmssVm}/instanceView`,
      'compute',
      `${VMSS}/virtualMachines/instanceView/read`,
      `${vmss}/virtualMachines`,
      (c) => this.instanceView(c, this.uniformInstanceId(c)),
    );
    for (const verb of ['powerOff', 'deallocate', 'start', 'restart'] as const) {
      add(
        'POST',
        `${vmssVm}/${verb}`,
        'compute',
        `${VMSS}/virtualMachines/${verb}/action`,
        `${vmss}/virtualMachines`,
        (c) => this.power(c, this.uniformInstanceId(c), verb),
        { lro: true, verb: true },
      );
      add(
        'POST',
        `virtualMachines/:vm/${verb}`,
        'compute',
        `${VM}/${verb}/action`,
        'virtualMachines',
        (c) => this.power(c, this.flexibleVmId(c), verb),
        { lro: true, verb: true },
      );
    }
    add(
      'POST',
      `${vmssVm}/runCommand`,
      'compute',
      `${VMSS}/virtualMachines/runCommand/action`,
      `${vmss}/virtualMachines`,
      (c) => this.runCommand(c, this.uniformInstanceId(c)),
      { lro: true, verb: true },
    );
    add(
      'POST',
      'virtualMachines/:vm/runCommand',
      'compute',
      `${VM}/runCommand/action`,
      'virtualMachines',
      (c) => this.runCommand(c, this.flexibleVmId(c)),
      { lro: true, verb: true },
    );
    add('GET', `${vmss}/:vmss/extensions`, 'compute', `${VMSS}/extensions/read`, `${vmss}/extensions`, (c) =>
      this.listExtensions(c),
    );
    add(
      'GET',
      `${vmss}/:vmss/extensions/:extension`,
      'compute',
      `${VMSS}/extensions/read`,
      `${vmss}/extensions`,
      (c) => this.getExtension(c),
    );
    add(
      'DELETE',
      `${vmss}/:vmss/extensions/:extension`,
      'compute',
      `${VMSS}/extensions/delete`,
      `${vmss}/extensions`,
      (c) => this.deleteExtension(c),
      { lro: true },
    );
    add('GET', 'virtualMachines', 'compute', `${VM}/read`, 'virtualMachines', (c) =>
      this.listVirtualMachines(c),
    );
    add('GET', 'virtualMachines/:vm', 'compute', `${VM}/read`, 'virtualMachines', (c) =>
      this.getVirtualMachine(c),
    );
    add(
      'GET',
      'virtualMachines/:vm/instanceView',
      'compute',
      `${VM}/instanceView/read`,
      'virtualMachines',
      (c) => this.instanceView(c, this.flexibleVmId(c)),
    );
    add('GET', 'disks/:disk', 'disk', 'Microsoft.Compute/disks/read', 'disks', (c) => this.getDisk(c));
    add('GET', 'snapshots', 'disk', 'Microsoft.Compute/snapshots/read', 'snapshots', (c) =>
      this.listSnapshots(c),
    );
    add('GET', 'snapshots/:snapshot', 'disk', 'Microsoft.Compute/snapshots/read', 'snapshots', (c) =>
      this.getSnapshot(c),
    );
    add(
      'PUT',
      'snapshots/:snapshot',
      'disk',
      'Microsoft.Compute/snapshots/write',
      'snapshots',
      (c) => this.putSnapshot(c),
      {
        lro: true,
      },
    );
    add(
      'DELETE',
      'snapshots/:snapshot',
      'disk',
      'Microsoft.Compute/snapshots/delete',
      'snapshots',
      (c) => this.deleteSnapshot(c),
      {
        lro: true,
      },
    );
    add('GET', 'galleries', 'gallery', 'Microsoft.Compute/galleries/read', 'galleries', (c) =>
      this.listGalleries(c),
    );
    add('GET', 'galleries/:gallery', 'gallery', 'Microsoft.Compute/galleries/read', 'galleries', (c) =>
      this.getGallery(c),
    );
    add(
      'PUT',
      'galleries/:gallery',
      'gallery',
      'Microsoft.Compute/galleries/write',
      'galleries',
      (c) => this.putGallery(c),
      {
        lro: true,
      },
    );
    const images = 'galleries/:gallery/images';
    add('GET', images, 'gallery', 'Microsoft.Compute/galleries/images/read', 'galleries/images', (c) =>
      this.listImages(c),
    );
    add(
      'GET',
      `${images}/:image`,
      'gallery',
      'Microsoft.Compute/galleries/images/read',
      'galleries/images',
      (c) => this.getImage(c),
    );
    add(
      'PUT',
      `${images}/:image`,
      'gallery',
      'Microsoft.Compute/galleries/images/write',
      'galleries/images',
      (c) => this.putImage(c),
      {
        lro: true,
      },
    );
    const versions = `${images}/:image/versions`;
    const versionType = 'galleries/images/versions';
    add('GET', versions, 'gallery', 'Microsoft.Compute/galleries/images/versions/read', versionType, (c) =>
      this.listVersions(c),
    );
    add(
      'GET',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/read',
      versionType,
      (c) => this.getVersion(c),
    );
    add(
      'PUT',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/write',
      versionType,
      (c) => this.putVersion(c),
      { lro: true },
    );
    add(
      'PATCH',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/write',
      versionType,
      (c) => this.patchVersion(c),
      { lro: true },
    );
    add(
      'DELETE',
      `${versions}/:version`,
      'gallery',
      'Microsoft.Compute/galleries/images/versions/delete',
      versionType,
      (c) => this.deleteVersion(c),
      { lro: true },
    );
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
    return routes;
  }

  // ------------------------------------------------------------------ ids

  private resourceId(context: RequestContext, ...segments: string[]): string {
    return `/subscriptions/${context.subscriptionId}/resourceGroups/${context.resourceGroup}/providers/Microsoft.Compute/${segments.join('/')}`;
  }

  private scaleSetId(context: RequestContext): string {
    return this.resourceId(context, 'virtualMachineScaleSets', context.params.vmss ?? '');
  }

  private requireScaleSet(context: RequestContext): string {
    const scaleSet = this.state.getScaleSet(this.scaleSetId(context));
    if (!scaleSet)
      throw this.resourceNotFound(
        context,
        'Microsoft.Compute/virtualMachineScaleSets',
        context.params.vmss ?? '',
      );
    return scaleSet.id;
  }

  /** Instance id of a Uniform VMSS VM route, checking the parent scale set and the orchestration mode. */
  private uniformInstanceId(context: RequestContext): string {
    const scaleSetId = this.requireScaleSet(context);
    this.requireUniform(scaleSetId);
    const id = `${scaleSetId}/virtualMachines/${context.params.instance ?? ''}`;
    if (!this.state.getInstance(id)) {
      throw new HttpError(404, {
        code: 'NotFound',
        message: 'The entity was not found in this Azure location.',
      });
    }
    return id;
  }

  private flexibleVmId(context: RequestContext): string {
    const id = this.resourceId(context, 'virtualMachines', context.params.vm ?? '');
    if (!this.state.getInstance(id)) throw this.resourceNotFound(context, VM, context.params.vm ?? '');
    return id;
  }

  private requireUniform(scaleSetId: string): void {
    const scaleSet = this.state.getScaleSet(scaleSetId);
    if (scaleSet?.orchestrationMode === 'Flexible') {
      throw new HttpError(400, {
        code: 'OperationNotAllowed',
        message: `The operation is not supported for Virtual Machine Scale Set '${scaleSet.name}' with orchestration mode 'Flexible'. Use the Microsoft.Compute/virtualMachines APIs for its virtual machines.`,
      });
    }
  }

  /** ARM's linked access check: an operation that reads or consumes another resource needs rights on it too. */
  private authorizeLinked(context: RequestContext, linkedAction: string, linkedScope: string): void {
    if (this.options.authorizer(linkedAction, linkedScope)) return;
    throw new HttpError(403, {
      code: 'LinkedAuthorizationFailed',
      message: `The client '${context.principal.clientId}' with object id '${context.principal.objectId}' has permission to perform action '${context.route.action}' on scope '${context.scope}'; however, it does not have permission to perform action(s) '${linkedAction}' on the linked scope(s) '${linkedScope}' (respectively) or the linked scope(s) are invalid.`,
    });
  }

  private resourceNotFound(context: RequestContext, type: string, name: string): HttpError {
    return new HttpError(404, {
      code: 'ResourceNotFound',
      message: `The Resource '${type}/${name}' under resource group '${context.resourceGroup}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    });
  }

  private parentNotFound(name: string): HttpError {
    return new HttpError(404, {
      code: 'ParentResourceNotFound',
      message: `Can not perform requested operation on nested resource. Parent resource '${name}' not found.`,
    });
  }

  // ------------------------------------------------------------------ LRO plumbing

  private retryAfter(operation: AsyncOperation): string | undefined {
    const remaining = Math.max(0, (operation.expectedDoneMs - this.options.clock.nowMs()) / 1000);
    const configured = this.options.retryAfterSeconds;
    const seconds =
      configured === undefined
        ? Math.min(30, Math.max(1, Math.ceil(remaining)))
        : typeof configured === 'number'
          ? configured
          : configured(remaining);
    return seconds > 0 ? String(Math.round(seconds)) : undefined;
  }

  private operationHeaders(
    context: RequestContext,
    operation: AsyncOperation,
    withLocation: boolean,
  ): Record<string, string> {
    const statusUrl = `${context.baseUrl}${AsyncOperations.path(operation)}?api-version=${context.apiVersion}`;
    const headers: Record<string, string> = { 'Azure-AsyncOperation': statusUrl };
    if (withLocation) headers.Location = `${statusUrl}&monitor=true`;
    const retryAfter = this.retryAfter(operation);
    if (retryAfter) headers['Retry-After'] = retryAfter;
    return headers;
  }

  /**
   * Starts an operation. `failure` asks the fault injector about `<action>#lro` when the change would
   * complete, so a time-windowed rule applies to the moment the operation ends, as the world expects.
   */
  private beginOperation(
    context: RequestContext,
    location: string,
    seconds: number,
  ): { operation: AsyncOperation; failure: FailureCheck; done: Completion } {
    const operation = this.operations.start(context.route.surface, context.subscriptionId, location, seconds);
    const failure: FailureCheck = () => {
      const fault = this.options.faults.check('arm', lroFaultOperation(context.route.action));
      return fault ? { code: fault.code, message: fault.message } : undefined;
    };
    return { operation, failure, done: (outcome) => this.operations.complete(operation, outcome) };
  }

  private getOperation(context: RequestContext, surface: ApiSurface): Reply {
    const operation = this.operations.get(context.params.operation ?? '');
    if (!operation || operation.surface !== surface) {
      throw new HttpError(404, {
        code: 'NotFound',
        message: `The operation '${context.params.operation ?? ''}' was not found.`,
      });
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

  // ------------------------------------------------------------------ scale sets

  private listScaleSets(context: RequestContext): Reply {
    const items = this.state
      .listScaleSetIds(context.subscriptionId, context.resourceGroup)
      .map((id) => renderScaleSet(this.state, id))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getScaleSet(context: RequestContext): Reply {
    const body = renderScaleSet(this.state, this.requireScaleSet(context));
    return { status: 200, body };
  }

  private putScaleSet(context: RequestContext): Reply {
    const id = this.scaleSetId(context);
    const current = this.state.scaleSetResource(id);
    if (!current) {
      throw new HttpError(400, {
        code: 'OperationNotAllowed',
        message: `Creating virtual machine scale set '${context.params.vmss ?? ''}' is not supported by this simulated region; scale sets come from the scenario.`,
      });
    }
    const body = parseBody(ScaleSetPut, context.body);
    const properties = withoutReadOnly(body.properties);
    // customData is write-only: a PUT of a GET result omits it, and ARM keeps the stored value.
    const currentCustomData = customDataOf(current.properties);
    if (currentCustomData !== undefined && customDataOf(properties) === undefined) {
      const osProfile = objectPath(properties, 'virtualMachineProfile', 'osProfile');
      if (osProfile) osProfile.customData = currentCustomData;
    }
    const next = { ...properties, ...readOnlyOf(current.properties) };
    this.validateScaleSetModel(current.properties, next);
    return this.applyScaleSet(context, id, next, body.tags ?? {}, body.sku?.capacity);
  }

  private patchScaleSet(context: RequestContext): Reply {
    const id = this.requireScaleSet(context);
    const current = this.state.scaleSetResource(id);
    if (!current) throw this.resourceNotFound(context, VMSS, context.params.vmss ?? '');
    const body = parseBody(ScaleSetPatch, context.body);
    const merged = mergePatch(current.properties, withoutReadOnly(body.properties ?? {}));
    const next = { ...merged, ...readOnlyOf(current.properties) };
    this.validateScaleSetModel(current.properties, next);
    // ARM PATCH replaces the tags dictionary as a whole.
    return this.applyScaleSet(context, id, next, body.tags ?? current.tags, body.sku?.capacity);
  }

  private applyScaleSet(
    context: RequestContext,
    id: string,
    properties: JsonObject,
    tags: Record<string, string>,
    capacity: number | undefined,
  ): Reply {
    const scaleSet = this.state.getScaleSet(id);
    const { operation, failure, done } = this.beginOperation(
      context,
      scaleSet?.location ?? '',
      this.options.latency.scaleSetUpdateSeconds,
    );
    // An injected failure still applies the model: ARM has been seen to report failure for updates that worked.
    this.state.replaceScaleSet(
      id,
      { properties, tags, ...(capacity === undefined ? {} : { capacity }) },
      done,
      failure,
    );
    return {
      status: 200,
      body: renderScaleSet(this.state, id),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  /** Refuses model changes ARM refuses; see research/azure.md §2 and §5. */
  private validateScaleSetModel(current: JsonObject, next: JsonObject): void {
    if (textOr(next.orchestrationMode, '') !== textOr(current.orchestrationMode, '')) {
      throw propertyChange('orchestrationMode');
    }
    const upgradeMode = objectPath(next, 'upgradePolicy')?.mode;
    if (upgradeMode !== undefined && !['Manual', 'Automatic', 'Rolling'].includes(textOr(upgradeMode, ''))) {
      throw invalidParameter(
        `The value ${JSON.stringify(upgradeMode)} of parameter 'upgradePolicy.mode' is invalid.`,
        'upgradePolicy.mode',
      );
    }
    const customData = customDataOf(next);
    if (customData !== undefined && (!isBase64(customData) || customData.length > MAX_CUSTOM_DATA)) {
      throw invalidParameter(
        `Custom data in OSProfile must be in Base64 encoding and with a maximum length of ${MAX_CUSTOM_DATA} characters.`,
        'customData',
      );
    }
    const before = objectPath(current, 'virtualMachineProfile', 'storageProfile', 'imageReference') ?? {};
    const after = objectPath(next, 'virtualMachineProfile', 'storageProfile', 'imageReference') ?? {};
    const marketplaceFields = ['publisher', 'offer', 'sku', 'version'] as const;
    const hasMarketplace = marketplaceFields.some(
      (field) => typeof after[field] === 'string' && after[field] !== '',
    );
    if (typeof after.id === 'string') {
      if (hasMarketplace) {
        if (isGalleryImageReference(after) && typeof after.version === 'string') {
          throw invalidParameter(
            "Please do not use field 'version' for gallery image deployment. To use a specific version of gallery image, set the full version resource id in the 'id' field; to use 'latest' version of gallery image, just set /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Compute/galleries/{galleryName}/images/{imageName} in the 'id' field.",
            'imageReference.version',
          );
        }
        throw invalidParameter(
          "Image reference 'id' cannot be combined with 'publisher', 'offer', 'sku' or 'version'; set them to null when switching to a custom image.",
          'imageReference',
        );
      }
      this.validateGalleryImage(after.id, next);
    } else {
      for (const field of ['publisher', 'offer'] as const) {
        const old = before[field];
        const now = after[field];
        if (typeof old === 'string' && typeof now === 'string' && old.toLowerCase() !== now.toLowerCase()) {
          throw new HttpError(409, {
            code: 'PropertyChangeNotAllowed',
            message: 'Image reference publisher and offer can only be set when you create the scale set.',
            target: `imageReference.${field}`,
          });
        }
      }
      if (!hasMarketplace)
        throw invalidParameter("Required parameter 'imageReference' is missing (null).", 'imageReference');
    }
  }

  private validateGalleryImage(imageId: string, model: JsonObject): void {
    if (!isGalleryImageReference({ id: imageId })) return;
    const isVersion = /\/versions\/[^/]+$/i.test(imageId);
    const definitionId = isVersion ? imageId.replace(/\/versions\/[^/]+$/i, '') : imageId;
    const definition = this.state.getImageDefinition(definitionId);
    const version = isVersion ? this.state.getImageVersion(imageId) : undefined;
    if (!definition || (isVersion && !version)) {
      throw new HttpError(404, {
        code: 'GalleryImageNotFound',
        message: `The gallery image ${imageId} is not available in ${this.state.defaultLocation} region. Please contact image owner to replicate to this region, or change your requested region.`,
        target: 'imageReference',
      });
    }
    const hasOsProfile = objectPath(model, 'virtualMachineProfile', 'osProfile') !== undefined;
    if (definition.properties.osState === 'Specialized' && hasOsProfile) {
      throw invalidParameter("Parameter 'osProfile' is not allowed.", 'osProfile');
    }
    if (definition.properties.osState === 'Generalized' && !hasOsProfile) {
      throw invalidParameter("Required parameter 'osProfile' is missing (null).", 'osProfile');
    }
  }

  // ------------------------------------------------------------------ scale set VMs (Uniform) and VMs (Flexible)

  private listScaleSetVms(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    this.requireUniform(scaleSetId);
    const expand = expandIncludes(context.url, 'instanceView');
    const items = this.state
      .listInstances(scaleSetId)
      .map((instance) => renderScaleSetVm(this.state, instance.id, expand))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getScaleSetVm(context: RequestContext): Reply {
    const id = this.uniformInstanceId(context);
    return {
      status: 200,
      body: renderScaleSetVm(this.state, id, expandIncludes(context.url, 'instanceView')),
    };
  }

  private listVirtualMachines(context: RequestContext): Reply {
    const filter = context.url.searchParams.get('$filter');
    const expand = expandIncludes(context.url, 'instanceView');
    let ids = this.state.listVirtualMachineIds(context.subscriptionId, context.resourceGroup);
    if (filter) {
      const match = /^\s*'virtualMachineScaleSet\/id'\s+eq\s+'([^']+)'\s*$/i.exec(filter);
      if (!match?.[1]) {
        throw invalidParameter(
          `The value '${filter}' of parameter '$filter' is invalid. Only 'virtualMachineScaleSet/id' eq '<scale set id>' is supported.`,
          '$filter',
        );
      }
      const scaleSetKey = idKey(match[1]);
      ids = ids.filter((id) => idKey(this.state.getInstance(id)?.scaleSetId ?? '') === scaleSetKey);
    } else if (expand) {
      throw invalidParameter(
        "The $expand=instanceView option is only supported together with the 'virtualMachineScaleSet/id' $filter.",
        '$expand',
      );
    }
    const items = ids
      .map((id) => renderVirtualMachine(this.state, id, expand))
      .filter((item) => item !== undefined);
    return this.page(context, items);
  }

  private getVirtualMachine(context: RequestContext): Reply {
    const id = this.flexibleVmId(context);
    return {
      status: 200,
      body: renderVirtualMachine(this.state, id, expandIncludes(context.url, 'instanceView')),
    };
  }

  private instanceView(_context: RequestContext, id: string): Reply {
    return { status: 200, body: renderInstanceView(this.state, id) };
  }

  private power(
    context: RequestContext,
    id: string,
    verb: 'powerOff' | 'deallocate' | 'start' | 'restart',
  ): Reply {
    const instance = this.state.getInstance(id);
    const latency = this.options.latency;
    const seconds = {
      powerOff: latency.instanceStopSeconds,
      deallocate: latency.instanceDeallocateSeconds,
      start: latency.instanceStartSeconds,
      restart: latency.instanceStartSeconds,
    }[verb];
    const { operation, failure, done } = this.beginOperation(context, instance?.location ?? '', seconds);
    const options = { onComplete: done, failure };
    try {
      if (verb === 'powerOff') {
        this.state.powerOffInstance(id, {
          ...options,
          skipShutdown: context.url.searchParams.get('skipShutdown') === 'true',
        });
      } else if (verb === 'deallocate') {
        this.state.deallocateInstance(id, options);
      } else if (verb === 'start') {
        this.state.startInstance(id, options);
      } else {
        this.state.restartInstance(id, options);
      }
    } catch (error) {
      this.operations.complete(operation, {
        status: 'Failed',
        error: { code: 'Refused', message: String(error) },
      });
      throw error;
    }
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  private runCommand(context: RequestContext, id: string): Reply {
    const input = parseBody(RunCommandInput, context.body);
    if (input.commandId !== 'RunShellScript') {
      throw invalidParameter(
        `The command '${input.commandId}' is not supported by this simulator; use 'RunShellScript'.`,
        'commandId',
      );
    }
    const instance = this.state.getInstance(id);
    const { operation, failure } = this.beginOperation(
      context,
      instance?.location ?? '',
      this.options.latency.runCommandSeconds,
    );
    this.state.runCommand(
      id,
      { commandId: input.commandId, script: input.script ?? [], parameters: input.parameters ?? [] },
      (outcome, output) => {
        const result = output
          ? {
              value: [
                {
                  code: 'ProvisioningState/succeeded',
                  level: 'Info',
                  displayStatus: 'Provisioning succeeded',
                  message: `Enable succeeded: \n[stdout]\n${lastBytes(output.stdout, 4096)}\n[stderr]\n${lastBytes(output.stderr, 4096)}\n`,
                },
              ],
            }
          : undefined;
        this.operations.complete(operation, outcome, result);
      },
      failure,
    );
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  // ------------------------------------------------------------------ extensions

  private listExtensions(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    return this.page(context, scaleSetExtensions(this.state, scaleSetId));
  }

  private getExtension(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    const name = (context.params.extension ?? '').toLowerCase();
    const extension = scaleSetExtensions(this.state, scaleSetId).find(
      (candidate) => textOr(candidate.name, '').toLowerCase() === name,
    );
    if (!extension) {
      throw this.resourceNotFound(
        context,
        `${VMSS}/${context.params.vmss ?? ''}/extensions`,
        context.params.extension ?? '',
      );
    }
    return { status: 200, body: extension };
  }

  private deleteExtension(context: RequestContext): Reply {
    const scaleSetId = this.requireScaleSet(context);
    const name = context.params.extension ?? '';
    const exists = this.state
      .getScaleSet(scaleSetId)
      ?.extensions.some((extension) => extension.name.toLowerCase() === name.toLowerCase());
    if (!exists) return { status: 204 };
    const seconds = this.state.extensionDeleteSeconds(name);
    const { operation, failure, done } = this.beginOperation(
      context,
      this.state.getScaleSet(scaleSetId)?.location ?? '',
      seconds,
    );
    this.state.deleteExtension(scaleSetId, name, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  // ------------------------------------------------------------------ disks and snapshots

  private getDisk(context: RequestContext): Reply {
    const body = renderDisk(this.state, this.resourceId(context, 'disks', context.params.disk ?? ''));
    if (!body) throw this.resourceNotFound(context, 'Microsoft.Compute/disks', context.params.disk ?? '');
    return { status: 200, body };
  }

  private listSnapshots(context: RequestContext): Reply {
    const prefix = idKey(`/subscriptions/${context.subscriptionId}/resourceGroups/${context.resourceGroup}/`);
    const items = this.state
      .listSnapshots(context.resourceGroup)
      .filter((snapshot) => idKey(snapshot.id).startsWith(prefix))
      .map((snapshot) => renderSnapshot(snapshot));
    return this.page(context, items);
  }

  private getSnapshot(context: RequestContext): Reply {
    const snapshot = this.state.getSnapshot(
      this.resourceId(context, 'snapshots', context.params.snapshot ?? ''),
    );
    if (!snapshot)
      throw this.resourceNotFound(context, 'Microsoft.Compute/snapshots', context.params.snapshot ?? '');
    return { status: 200, body: renderSnapshot(snapshot) };
  }

  private putSnapshot(context: RequestContext): Reply {
    const body = parseBody(SnapshotPut, context.body);
    const creation = body.properties.creationData;
    if (creation.createOption !== 'Copy') {
      throw invalidParameter(
        `The value '${creation.createOption}' of parameter 'creationData.createOption' is not supported by this simulator; use 'Copy'.`,
        'creationData.createOption',
      );
    }
    if (!creation.sourceResourceId) {
      throw invalidParameter(
        "Required parameter 'creationData.sourceResourceId' is missing (null).",
        'creationData.sourceResourceId',
      );
    }
    const sourceIsSnapshot = /\/providers\/Microsoft\.Compute\/snapshots\//i.test(creation.sourceResourceId);
    this.authorizeLinked(
      context,
      sourceIsSnapshot ? 'Microsoft.Compute/snapshots/read' : 'Microsoft.Compute/disks/read',
      creation.sourceResourceId,
    );
    const name = context.params.snapshot ?? '';
    const id = this.resourceId(context, 'snapshots', name);
    const existed = this.state.getSnapshot(id) !== undefined;
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      this.options.latency.snapshotCreateSeconds,
    );
    const snapshot = this.state.createSnapshot(
      context.subscriptionId,
      context.resourceGroup,
      name,
      {
        location: body.location,
        sourceResourceId: creation.sourceResourceId,
        incremental: body.properties.incremental ?? false,
        ...(body.sku?.name ? { skuName: body.sku.name } : {}),
        tags: body.tags ?? {},
      },
      done,
      failure,
    );
    return {
      status: existed ? 200 : 201,
      body: renderSnapshot(snapshot),
      headers: this.operationHeaders(context, operation, true),
    };
  }

  private deleteSnapshot(context: RequestContext): Reply {
    const id = this.resourceId(context, 'snapshots', context.params.snapshot ?? '');
    const snapshot = this.state.getSnapshot(id);
    if (!snapshot) return { status: 204 };
    const seconds = this.options.latency.snapshotDeleteSeconds;
    const { operation, failure, done } = this.beginOperation(context, snapshot.location, seconds);
    this.state.deleteSnapshot(id, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  // ------------------------------------------------------------------ galleries

  private galleryId(context: RequestContext): string {
    return this.resourceId(context, 'galleries', context.params.gallery ?? '');
  }

  private requireGallery(context: RequestContext): string {
    const gallery = this.state.getGallery(this.galleryId(context));
    if (!gallery)
      throw this.resourceNotFound(context, 'Microsoft.Compute/galleries', context.params.gallery ?? '');
    return gallery.id;
  }

  private requireImage(context: RequestContext): string {
    const galleryId = this.requireGallery(context);
    const image = this.state.getImageDefinition(`${galleryId}/images/${context.params.image ?? ''}`);
    if (!image) {
      throw this.resourceNotFound(
        context,
        `Microsoft.Compute/galleries/${context.params.gallery ?? ''}/images`,
        context.params.image ?? '',
      );
    }
    return image.id;
  }

  private listGalleries(context: RequestContext): Reply {
    return this.page(
      context,
      this.state
        .listGalleries(context.subscriptionId, context.resourceGroup)
        .map((gallery) => renderGallery(gallery)),
    );
  }

  private getGallery(context: RequestContext): Reply {
    const gallery = this.state.getGallery(this.requireGallery(context));
    return { status: 200, body: gallery ? renderGallery(gallery) : undefined };
  }

  private putGallery(context: RequestContext): Reply {
    const name = context.params.gallery ?? '';
    if (!GALLERY_NAME.test(name)) {
      throw invalidParameter(
        `The gallery name '${name}' is not valid. It can contain only English letters, numbers, underscores and periods, and cannot begin or end with an underscore or period.`,
        'galleryName',
      );
    }
    const body = parseBody(GalleryPut, context.body);
    const existed = this.state.getGallery(this.galleryId(context)) !== undefined;
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      existed ? 0 : this.options.latency.galleryCreateSeconds,
    );
    const gallery = this.state.putGallery(
      context.subscriptionId,
      context.resourceGroup,
      name,
      { location: body.location, tags: body.tags ?? {}, properties: body.properties ?? {} },
      done,
      failure,
    );
    return {
      status: existed ? 200 : 201,
      body: renderGallery(gallery),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private listImages(context: RequestContext): Reply {
    const galleryId = this.requireGallery(context);
    return this.page(
      context,
      this.state.listImageDefinitions(galleryId).map((image) => renderImageDefinition(image)),
    );
  }

  private getImage(context: RequestContext): Reply {
    const image = this.state.getImageDefinition(this.requireImage(context));
    return { status: 200, body: image ? renderImageDefinition(image) : undefined };
  }

  private putImage(context: RequestContext): Reply {
    const galleryId = this.galleryId(context);
    if (!this.state.getGallery(galleryId)) throw this.parentNotFound(context.params.gallery ?? '');
    const body = parseBody(ImageDefinitionPut, context.body, 'galleryImage');
    const name = context.params.image ?? '';
    const existed = this.state.getImageDefinition(`${galleryId}/images/${name}`) !== undefined;
    const { operation, failure, done } = this.beginOperation(
      context,
      body.location,
      existed ? 0 : this.options.latency.imageDefinitionCreateSeconds,
    );
    const image = this.state.putImageDefinition(
      galleryId,
      name,
      { location: body.location, tags: body.tags ?? {}, properties: body.properties },
      done,
      failure,
    );
    return {
      status: existed ? 200 : 201,
      body: renderImageDefinition(image),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private listVersions(context: RequestContext): Reply {
    const imageId = this.requireImage(context);
    return this.page(
      context,
      this.state
        .listImageVersionRecords(imageId)
        .map((version) => renderImageVersion(this.state, version, false)),
    );
  }

  private versionId(context: RequestContext): string {
    return `${this.galleryId(context)}/images/${context.params.image ?? ''}/versions/${context.params.version ?? ''}`;
  }

  private getVersion(context: RequestContext): Reply {
    this.requireImage(context);
    const version = this.state.getImageVersionRecord(this.versionId(context));
    if (!version) {
      throw this.resourceNotFound(
        context,
        `Microsoft.Compute/galleries/${context.params.gallery ?? ''}/images/${context.params.image ?? ''}/versions`,
        context.params.version ?? '',
      );
    }
    return {
      status: 200,
      body: renderImageVersion(this.state, version, expandIncludes(context.url, 'ReplicationStatus')),
    };
  }

  private putVersion(context: RequestContext): Reply {
    const imageId = `${this.galleryId(context)}/images/${context.params.image ?? ''}`;
    const image = this.state.getImageDefinition(imageId);
    if (!image) throw this.parentNotFound(context.params.image ?? '');
    const name = context.params.version ?? '';
    const versionMatch = VERSION_NAME.exec(name);
    if (!versionMatch || versionMatch.slice(1).some((part) => Number(part) > 2147483647)) {
      throw invalidParameter(
        'The image version name should follow Major(int).Minor(int).Patch(int) format, for e.g: 1.0.0, 2018.12.1 etc.',
        'galleryImageVersionName',
      );
    }
    const body = parseBody(ImageVersionPut, context.body, 'galleryImageVersion');
    const storage = body.properties.storageProfile;
    const sources = [storage.source?.id, storage.osDiskImage?.source?.id].filter(
      (id): id is string => typeof id === 'string',
    );
    if (sources.length !== 1 || !sources[0]) {
      throw invalidParameter(
        'One and only one source type (user image, snapshot, disk, virtual machine) can be provided.',
        'storageProfile',
      );
    }
    const sourceId = sources[0];
    const existing = this.state.getImageVersionRecord(`${imageId}/versions/${name}`);
    if (existing)
      return this.updateExistingVersion(context, existing.id, existing.properties, body, sourceId);
    const location = body.location.toLowerCase().replace(/\s+/g, '');
    if (location !== image.location.toLowerCase().replace(/\s+/g, '')) {
      throw invalidParameter(
        `The location '${body.location}' of gallery image version '${name}' must be the same as the location '${image.location}' of its gallery image.`,
        'location',
      );
    }
    // The gallery RP needs write access on the source disk or snapshot (research/azure.md §10).
    this.authorizeLinked(
      context,
      /\/providers\/Microsoft\.Compute\/disks\//i.test(sourceId)
        ? 'Microsoft.Compute/disks/write'
        : 'Microsoft.Compute/snapshots/write',
      sourceId,
    );
    const snapshot = this.state.getSnapshot(sourceId);
    const disk = snapshot ? undefined : this.state.getDisk(sourceId);
    const source = snapshot ?? disk;
    if (!source || source.location.toLowerCase() !== location) {
      throw invalidParameter(
        `Source ${sourceId} is not found. Please check source exists, and is in the same region as gallery image version being created.`,
        'storageProfile.osDiskImage.source.id',
      );
    }
    const definitionGeneration = textOr(image.properties.hyperVGeneration, 'V1');
    if (source.hyperVGeneration !== definitionGeneration) {
      throw invalidParameter(
        `The resource with id '${sourceId}' has a different Hypervisor generation ['${source.hyperVGeneration}'] than the parent gallery image Hypervisor generation ['${definitionGeneration}'].`,
        'storageProfile',
      );
    }
    const publishing = body.properties.publishingProfile ?? {};
    const storageAccountType = publishing.storageAccountType ?? 'Standard_LRS';
    const targetRegions = publishing.targetRegions ?? [
      { name: body.location, regionalReplicaCount: publishing.replicaCount ?? 1, storageAccountType },
    ];
    if (!targetRegions.some((region) => region.name.toLowerCase().replace(/\s+/g, '') === location)) {
      throw invalidParameter(
        `The publishing profile regions of gallery image version '${name}' must contain the location of image version '${body.location}'.`,
        'publishingProfile.targetRegions',
      );
    }
    const properties = deepCopy(body.properties) as JsonObject;
    properties.publishingProfile = {
      ...publishing,
      storageAccountType,
      targetRegions: deepCopy(targetRegions),
    };
    const osDiskImage = { hostCaching: 'None', ...(storage.osDiskImage ?? {}), sizeInGB: source.diskSizeGB };
    properties.storageProfile = { ...deepCopy(storage), osDiskImage };
    properties.safetyProfile ??= {
      allowDeletionOfReplicatedLocations: true,
      reportedForPolicyViolation: false,
    };
    const zrsRegion = targetRegions.find(
      (region) =>
        (region.storageAccountType ?? storageAccountType) === 'Standard_ZRS' &&
        !this.state.regionCapabilities(region.name).zrs,
    );
    const seconds = this.options.latency.imageVersionCreateSeconds;
    const { operation, failure } = this.beginOperation(context, body.location, seconds);
    const zrsError: ArmErrorBody | undefined = zrsRegion
      ? {
          code: 'InvalidParameter',
          message: 'ZRS storage account type is not supported in this region.',
          target: 'storageAccountType',
          details: [
            {
              code: 'ZrsNotSupported',
              message: `ZRS is not supported in region '${zrsRegion.name}'. Use Standard_LRS or Premium_LRS.`,
            },
          ],
        }
      : undefined;
    // The gallery RP accepts the version and fails it shortly after; the failed version stays (kamino had
    // to delete it before retrying with Standard_LRS).
    const version = this.state.createImageVersion(
      imageId,
      name,
      { location: body.location, tags: body.tags ?? {}, properties },
      {
        ...(zrsError ? { fail: zrsError, failAfterSeconds: Math.min(30, seconds) } : { failure }),
        onComplete: (outcome) =>
          this.operations.complete(operation, outcome, undefined, zrsError ? 400 : 500),
      },
    );
    return {
      status: 201,
      body: renderImageVersion(this.state, version, false),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private updateExistingVersion(
    context: RequestContext,
    id: string,
    current: JsonObject,
    body: z.infer<typeof ImageVersionPut>,
    sourceId: string,
  ): Reply {
    this.refuseWhileBusy(context.params.version ?? '', current);
    if (current.provisioningState === 'Failed') {
      throw new HttpError(409, {
        code: 'OperationNotAllowed',
        message: `Gallery image version '${context.params.version ?? ''}' is in a failed state. Delete it before creating it again.`,
      });
    }
    const currentSource =
      textOr(objectPath(current, 'storageProfile', 'osDiskImage', 'source')?.id, '') ||
      textOr(objectPath(current, 'storageProfile', 'source')?.id, '');
    if (idKey(currentSource) !== idKey(sourceId)) {
      throw propertyChange('galleryImageVersion.properties.storageProfile.osDiskImage.source.id');
    }
    const publishing = body.properties.publishingProfile ?? {};
    const merged = mergePatch(current, {
      publishingProfile: {
        ...(publishing.excludeFromLatest === undefined
          ? {}
          : { excludeFromLatest: publishing.excludeFromLatest }),
        ...(publishing.endOfLifeDate === undefined ? {} : { endOfLifeDate: publishing.endOfLifeDate }),
      },
    });
    this.checkVersionImmutables(current, { publishingProfile: publishing });
    return this.commitVersionUpdate(context, id, merged, body.tags, 200);
  }

  private patchVersion(context: RequestContext): Reply {
    this.requireImage(context);
    const id = this.versionId(context);
    const current = this.state.getImageVersionRecord(id);
    if (!current) {
      throw this.resourceNotFound(
        context,
        `Microsoft.Compute/galleries/${context.params.gallery ?? ''}/images/${context.params.image ?? ''}/versions`,
        context.params.version ?? '',
      );
    }
    this.refuseWhileBusy(current.name, current.properties);
    const body = parseBody(ImageVersionPatch, context.body, 'galleryImageVersion');
    const patch = withoutReadOnly(body.properties ?? {});
    this.checkVersionImmutables(current.properties, patch);
    const merged = mergePatch(current.properties, patch);
    return this.commitVersionUpdate(context, id, merged, body.tags, 200);
  }

  /** A version being created or deleted refuses updates (retry after it settles, GET first when resuming). */
  private refuseWhileBusy(name: string, properties: JsonObject): void {
    const state = textOr(properties.provisioningState, '');
    if (state === 'Creating' || state === 'Deleting') {
      throw new HttpError(409, {
        code: 'OperationNotAllowed',
        message: `Operation 'Update' is not allowed on gallery image version '${name}' while its provisioning state is '${state}'.`,
      });
    }
  }

  private checkVersionImmutables(current: JsonObject, patch: JsonObject): void {
    const publishing = isObject(patch.publishingProfile) ? patch.publishingProfile : {};
    const currentPublishing = objectPath(current, 'publishingProfile') ?? {};
    for (const key of ['storageAccountType', 'replicationMode']) {
      if (
        publishing[key] !== undefined &&
        publishing[key] !== (currentPublishing[key] ?? (key === 'replicationMode' ? 'Full' : undefined))
      ) {
        throw propertyChange(`galleryImageVersion.properties.publishingProfile.${key}`);
      }
    }
    if (
      patch.storageProfile !== undefined &&
      JSON.stringify(patch.storageProfile) !== JSON.stringify(current.storageProfile)
    ) {
      throw propertyChange('galleryImageVersion.properties.storageProfile.osDiskImage.source.id');
    }
  }

  private commitVersionUpdate(
    context: RequestContext,
    id: string,
    properties: JsonObject,
    tags: Record<string, string> | undefined,
    status: number,
  ): Reply {
    const { operation, failure, done } = this.beginOperation(
      context,
      this.state.getImageVersion(id)?.location ?? '',
      0,
    );
    const updated = this.state.updateImageVersion(id, {
      properties: { ...properties, provisioningState: 'Succeeded' },
      ...(tags ? { tags } : {}),
    });
    // Publishing-profile updates apply at once; an injected failure is reported, the change stays.
    const error = failure();
    done(error ? { status: 'Failed', error } : { status: 'Succeeded' });
    return {
      status,
      body: renderImageVersion(this.state, updated, false),
      headers: this.operationHeaders(context, operation, false),
    };
  }

  private deleteVersion(context: RequestContext): Reply {
    this.requireImage(context);
    const id = this.versionId(context);
    const version = this.state.getImageVersion(id);
    if (!version) return { status: 204 };
    const seconds = this.options.latency.imageVersionDeleteSeconds;
    const { operation, failure, done } = this.beginOperation(context, version.location, seconds);
    this.state.deleteImageVersion(id, done, failure);
    return { status: 202, headers: this.operationHeaders(context, operation, true) };
  }

  // ------------------------------------------------------------------ paging

  private page(context: RequestContext, items: unknown[]): Reply {
    const size = this.options.pageSize ?? 100;
    const offset = Number(context.url.searchParams.get('$skiptoken') ?? '0') || 0;
    const value = items.slice(offset, offset + size);
    const body: JsonObject = { value };
    if (offset + size < items.length) {
      const next = new URL(context.url.toString());
      next.searchParams.set('$skiptoken', String(offset + size));
      body.nextLink = next.toString();
    }
    return { status: 200, body };
  }
}

// ------------------------------------------------------------------ helpers

function matchPattern(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of pattern.entries()) {
    const segment = segments[index] ?? '';
    if (part.startsWith(':')) {
      if (segment === '') return undefined;
      params[part.slice(1)] = segment;
    } else if (part.toLowerCase() !== segment.toLowerCase()) {
      return undefined;
    }
  }
  return params;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function authenticate(header: string | undefined): Principal {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!match?.[1]) {
    throw new HttpError(
      401,
      {
        code: 'AuthenticationFailed',
        message: "Authentication failed. The 'Authorization' header is missing.",
      },
      {
        'WWW-Authenticate':
          'Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The authentication failed because of missing \'Authorization\' header."',
      },
    );
  }
  return principalOf(match[1]);
}

/** Reads `appid`/`oid` from a JWT-shaped token, so 403 messages name the caller like ARM does. */
function principalOf(token: string): Principal {
  const payload = token.split('.')[1];
  if (payload) {
    try {
      const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (isObject(claims)) {
        return {
          clientId: textOr(claims.appid, textOr(claims.azp, 'unknown-client')),
          objectId: textOr(claims.oid, 'unknown-object'),
        };
      }
    } catch {
      // Opaque tokens are fine; the caller just stays anonymous in messages.
    }
  }
  return { clientId: 'unknown-client', objectId: 'unknown-object' };
}

function notFoundRoute(path: string): HttpError {
  const type = /\/providers\/(Microsoft\.Compute\/[^/]+)/i.exec(path)?.[1] ?? path;
  return new HttpError(404, {
    code: 'InvalidResourceType',
    message: `The resource type '${type.split('/').slice(1).join('/')}' could not be found in the namespace 'Microsoft.Compute' for this simulated region.`,
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new HttpError(400, {
      code: 'InvalidRequestContent',
      message: `The request content was invalid and could not be deserialized: '${error instanceof Error ? error.message : String(error)}'.`,
    });
  }
}

/** Validates a body; a missing field is ARM's "Required parameter … is missing (null)", other issues InvalidRequestContent. */
function parseBody<T extends z.ZodType>(schema: T, body: unknown, prefix?: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [...(prefix ? [prefix] : []), ...(issue?.path ?? []).map(String)].join('.');
  const value = issue ? valueAt(body, issue.path) : undefined;
  if (issue && (value === undefined || value === null)) {
    throw invalidParameter(`Required parameter '${path}' is missing (null).`, path);
  }
  throw new HttpError(400, {
    code: 'InvalidRequestContent',
    message: `The request content was invalid and could not be deserialized: '${path}: ${issue?.message ?? 'invalid'}'.`,
  });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (!isObject(current) && !Array.isArray(current)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function invalidParameter(message: string, target: string): HttpError {
  return new HttpError(400, { code: 'InvalidParameter', message, target });
}

function propertyChange(property: string): HttpError {
  const message = `Changing property '${property}' is not allowed.`;
  return new HttpError(409, {
    code: 'PropertyChangeNotAllowed',
    message,
    target: property,
    details: [{ code: 'PropertyChangeNotAllowed', message, target: property }],
  });
}

function errorReply(error: unknown): Reply {
  if (error instanceof HttpError)
    return { status: error.status, body: { error: error.body }, headers: error.headers };
  if (error instanceof ComputeError) return { status: error.status, body: { error: error.toArmError() } };
  return {
    status: 500,
    body: { error: { code: 'InternalServerError', message: `serving request: ${String(error)}` } },
  };
}

function expandIncludes(url: URL, value: string): boolean {
  const expand = url.searchParams.get('$expand') ?? '';
  return expand
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .includes(value.toLowerCase());
}

function objectPath(root: JsonObject, ...path: string[]): JsonObject | undefined {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return isObject(current) ? current : undefined;
}

function customDataOf(properties: JsonObject): string | undefined {
  const value = objectPath(properties, 'virtualMachineProfile', 'osProfile')?.customData;
  return typeof value === 'string' ? value : undefined;
}

const READ_ONLY_SCALE_SET = ['provisioningState', 'uniqueId', 'timeCreated'];

function withoutReadOnly(properties: JsonObject): JsonObject {
  const copy = deepCopy(properties);
  for (const key of READ_ONLY_SCALE_SET) delete copy[key];
  delete copy.replicationStatus;
  return copy;
}

function readOnlyOf(properties: JsonObject): JsonObject {
  return Object.fromEntries(
    READ_ONLY_SCALE_SET.filter((key) => key in properties).map((key) => [key, properties[key]]),
  );
}

function isBase64(value: string): boolean {
  return value.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(value);
}

function lastBytes(text: string, limit: number): string {
  const buffer = Buffer.from(text, 'utf8');
  return buffer.length <= limit ? text : buffer.subarray(buffer.length - limit).toString('utf8');
}
