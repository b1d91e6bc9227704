/**
 * Long-running operations of the simulated ARM: each has an `Azure-AsyncOperation` status URL
 * (`{ status: InProgress|Succeeded|Failed|Canceled, error? }`) and a `Location` monitor URL (202
 * until done, then the final body), per surface: compute `operations`, disk `DiskOperations`,
 * gallery `capsOperations`, the way the three resource providers name them.
 */
import type { SimClock } from '../contracts.js';
import type { OperationSurface } from './api-versions.js';
import {
  type ArmErrorBody,
  deterministicUuid,
  type JsonObject,
  type OperationOutcome,
} from './compute-state.js';

export type OperationStatus = 'InProgress' | 'Succeeded' | 'Failed' | 'Canceled';

export interface AsyncOperation {
  id: string;
  surface: OperationSurface;
  subscriptionId: string;
  location: string;
  status: OperationStatus;
  startTime: string;
  endTime?: string;
  /** Simulated epoch ms the operation is expected to finish; drives Retry-After. */
  expectedDoneMs: number;
  error?: ArmErrorBody;
  /** HTTP status the Location monitor returns for a failed operation. */
  failureHttpStatus?: number;
  /** Body of the Location monitor once Succeeded (e.g. a RunCommandResult); empty when absent. */
  result?: JsonObject;
}

/** The URL path segment each resource provider uses for its operation status resources. */
export const OPERATION_SEGMENT: Record<OperationSurface, string> = {
  compute: 'operations',
  disk: 'DiskOperations',
  gallery: 'capsOperations',
};

/** The RBAC action needed to read an operation status, per surface. */
export const OPERATION_READ_ACTION: Record<OperationSurface, string> = {
  compute: 'Microsoft.Compute/locations/operations/read',
  disk: 'Microsoft.Compute/locations/diskOperations/read',
  gallery: 'Microsoft.Compute/locations/capsOperations/read',
};

export class AsyncOperations {
  private readonly operations = new Map<string, AsyncOperation>();
  private counter = 0;

  constructor(private readonly clock: SimClock) {}

  /** Starts an operation expected to take `expectedSeconds` simulated seconds. */
  start(
    surface: OperationSurface,
    subscriptionId: string,
    location: string,
    expectedSeconds: number,
  ): AsyncOperation {
    this.counter += 1;
    const operation: AsyncOperation = {
      id: deterministicUuid(`operation:${this.counter}`),
      surface,
      subscriptionId,
      location: location.toLowerCase().replace(/\s+/g, ''),
      status: 'InProgress',
      startTime: this.clock.now().toISOString(),
      expectedDoneMs: this.clock.nowMs() + expectedSeconds * 1000,
    };
    this.operations.set(operation.id, operation);
    return operation;
  }

  /** Records how the operation ended; a second completion is ignored (the first outcome wins). */
  complete(
    operation: AsyncOperation,
    outcome: OperationOutcome,
    result?: JsonObject,
    failureHttpStatus = 500,
  ): void {
    if (operation.status !== 'InProgress') return;
    operation.status = outcome.status;
    operation.endTime = this.clock.now().toISOString();
    if (outcome.status === 'Succeeded') {
      if (result) operation.result = result;
    } else {
      operation.error = outcome.error;
      operation.failureHttpStatus = outcome.status === 'Canceled' ? 409 : failureHttpStatus;
    }
  }

  get(id: string): AsyncOperation | undefined {
    return this.operations.get(id.toLowerCase());
  }

  /** Path of the operation's status resource (without query). */
  static path(operation: AsyncOperation): string {
    return `/subscriptions/${operation.subscriptionId}/providers/Microsoft.Compute/locations/${operation.location}/${OPERATION_SEGMENT[operation.surface]}/${operation.id}`;
  }

  /** The `Azure-AsyncOperation` status body. */
  static statusBody(operation: AsyncOperation): JsonObject {
    const body: JsonObject = { startTime: operation.startTime, status: operation.status, name: operation.id };
    if (operation.endTime) body.endTime = operation.endTime;
    if (operation.error) body.error = operation.error;
    if (operation.status === 'Succeeded' && operation.result) body.properties = { output: operation.result };
    return body;
  }
}
