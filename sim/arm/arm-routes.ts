/**
 * What every route group of the simulated ARM shares: the handler options, the base class with
 * resource ids, ARM's not-found and linked-authorization errors, long-running-operation plumbing
 * (`Azure-AsyncOperation`/`Location`/`Retry-After`) and `nextLink` paging.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { FaultInjector, LatencyProfile, RequestLog, Scheduler, SimClock } from '../contracts.js';
import type { ArmAuthorizer } from './action-authorizer.js';
import type { ApiSurface } from './api-versions.js';
import { HttpError, type Reply, type RequestContext } from './arm-http.js';
import { type AsyncOperation, AsyncOperations } from './async-operations.js';
import type { Completion, ComputeState, FailureCheck, JsonObject } from './compute-state.js';
import type { ArmThrottle } from './throttling.js';

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
  /**
   * Manual clock only: a poll of an operation in progress stands for the client having waited what a
   * real ARM would have asked (the remaining simulated seconds, clamped to 1–30), so the handler moves
   * simulated time by that much before answering. Time then moves with the client's waits, not with
   * machine speed (benchmarks); the header still says 1 s so the client's wall wait stays short.
   */
  advanceClock?: (seconds: number) => void;
  /** Items per page of list responses (`nextLink` beyond). Default 100. */
  pageSize?: number;
  /**
   * Serve marketplace image reads (`locations/{l}/publishers/…/versions`). Off by default: the product
   * still reads them and the custom role (granted at resource-group scope) cannot allow a
   * subscription-level read, so real ARM answers it 403; see sim/README.md.
   */
  marketplaceImages?: boolean;
  /** Request-rate accounting (default: report remaining counts, never refuse). */
  throttle?: ArmThrottle;
  /**
   * Resource groups that exist besides those holding compute resources (`GET …/resourcegroups/{rg}`),
   * e.g. the clusters' groups before anything is created in them.
   */
  resourceGroups?: () => readonly { name: string; location: string }[];
}

export type ArmRequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** Fault-injector operation name of a long-running operation's failure, e.g. `Microsoft.Compute/snapshots/write#lro`. */
export function lroFaultOperation(action: string): string {
  return `${action}#lro`;
}

export const VMSS = 'Microsoft.Compute/virtualMachineScaleSets';
export const VM = 'Microsoft.Compute/virtualMachines';

/** Registers a route: method, pattern after `providers/Microsoft.Compute/` (`:name` captures), api surface, RBAC action, resource type for api-version errors. */
export type AddRoute = (
  method: string,
  pattern: string,
  surface: ApiSurface,
  action: string,
  resourceType: string,
  handle: (context: RequestContext) => Reply,
  flags?: { lro?: boolean; verb?: boolean },
) => void;

/** Base of the route groups (one per Azure resource family); all share one store of async operations. */
export abstract class ArmRoutes {
  protected readonly state: ComputeState;

  constructor(
    protected readonly options: ArmHandlerOptions,
    protected readonly operations: AsyncOperations,
  ) {
    this.state = options.state;
  }

  /** Adds this group's routes. */
  abstract register(add: AddRoute): void;

  protected resourceId(context: RequestContext, ...segments: string[]): string {
    return `/subscriptions/${context.subscriptionId}/resourceGroups/${context.resourceGroup}/providers/Microsoft.Compute/${segments.join('/')}`;
  }

  protected scaleSetId(context: RequestContext): string {
    return this.resourceId(context, 'virtualMachineScaleSets', context.params.vmss ?? '');
  }

  protected requireScaleSet(context: RequestContext): string {
    const scaleSet = this.state.getScaleSet(this.scaleSetId(context));
    if (!scaleSet)
      throw this.resourceNotFound(
        context,
        'Microsoft.Compute/virtualMachineScaleSets',
        context.params.vmss ?? '',
      );
    return scaleSet.id;
  }

  protected requireUniform(scaleSetId: string): void {
    const scaleSet = this.state.getScaleSet(scaleSetId);
    if (scaleSet?.orchestrationMode === 'Flexible') {
      throw new HttpError(400, {
        code: 'OperationNotAllowed',
        message: `The operation is not supported for Virtual Machine Scale Set '${scaleSet.name}' with orchestration mode 'Flexible'. Use the Microsoft.Compute/virtualMachines APIs for its virtual machines.`,
      });
    }
  }

  /** ARM's linked access check: an operation that reads or consumes another resource needs rights on it too. */
  protected authorizeLinked(context: RequestContext, linkedAction: string, linkedScope: string): void {
    if (this.options.authorizer(linkedAction, linkedScope)) return;
    throw new HttpError(403, {
      code: 'LinkedAuthorizationFailed',
      message: `The client '${context.principal.clientId}' with object id '${context.principal.objectId}' has permission to perform action '${context.route.action}' on scope '${context.scope}'; however, it does not have permission to perform action(s) '${linkedAction}' on the linked scope(s) '${linkedScope}' (respectively) or the linked scope(s) are invalid.`,
    });
  }

  protected resourceNotFound(context: RequestContext, type: string, name: string): HttpError {
    return new HttpError(404, {
      code: 'ResourceNotFound',
      message: `The Resource '${type}/${name}' under resource group '${context.resourceGroup}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    });
  }

  protected parentNotFound(name: string): HttpError {
    return new HttpError(404, {
      code: 'ParentResourceNotFound',
      message: `Can not perform requested operation on nested resource. Parent resource '${name}' not found.`,
    });
  }

  // ------------------------------------------------------------------ LRO plumbing

  protected retryAfter(operation: AsyncOperation): string | undefined {
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

  protected operationHeaders(
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
  protected beginOperation(
    context: RequestContext,
    location: string,
    seconds: number,
  ): { operation: AsyncOperation; failure: FailureCheck; done: Completion } {
    const surface = context.route.surface;
    if (surface === 'resources' || surface === 'authorization')
      throw new Error(`route ${context.route.action} has no long-running operations`);
    const operation = this.operations.start(surface, context.subscriptionId, location, seconds);
    const failure: FailureCheck = () => {
      const fault = this.options.faults.check('arm', lroFaultOperation(context.route.action));
      return fault ? { code: fault.code, message: fault.message } : undefined;
    };
    return { operation, failure, done: (outcome) => this.operations.complete(operation, outcome) };
  }

  // ------------------------------------------------------------------ paging

  protected page(context: RequestContext, items: unknown[]): Reply {
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
