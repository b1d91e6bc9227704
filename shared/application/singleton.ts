import { messageOf } from '../domain/errors.js';
/**
 * Start-or-report-running for deterministic orchestration instance ids (one refresh per pool, one
 * debounce per pool), over the few DurableClient calls it needs
 * (https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-singletons).
 */

/** Runtime states in which an instance still owns its id: a new start must not replace it. */
export const ACTIVE_STATES: ReadonlySet<string> = new Set([
  'Running',
  'Pending',
  'ContinuedAsNew',
  'Suspended',
]);

/** What the triggers read of an instance (a subset of durable-functions' DurableOrchestrationStatus). */
export interface InstanceStatus {
  readonly instanceId: string;
  readonly runtimeStatus: string;
  readonly customStatus?: unknown;
  readonly output?: unknown;
  readonly createdTime?: Date | string;
  readonly lastUpdatedTime?: Date | string;
}

/**
 * The durable client as the triggers use it. durable-functions 3.x's `DurableClient` satisfies it.
 * - `getStatus` THROWS for an unknown id (3.x turns the extension's 404 into an error; #251).
 * - `startNew` rejects when an instance with the id is active (the extension's default
 *   `overridableExistingInstanceStates = NonRunningStates`) and replaces a finished one.
 * - `raiseEvent` rejects for an unknown or finished instance.
 */
export interface OrchestrationClient {
  getStatus(instanceId: string): Promise<InstanceStatus>;
  startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string>;
  raiseEvent(instanceId: string, eventName: string, eventData: unknown): Promise<void>;
}

export type StartOutcome =
  | { readonly kind: 'started'; readonly instanceId: string }
  | { readonly kind: 'running'; readonly instanceId: string; readonly status: InstanceStatus };

export function isActive(status: InstanceStatus): boolean {
  return ACTIVE_STATES.has(status.runtimeStatus);
}

/**
 * The instance's status, or undefined when the id is unknown. Any getStatus failure counts as
 * "unknown": 3.x reports a 404 only as an error message, and a start on a real conflict is refused
 * by the extension anyway (then `startSingleton` re-reads and reports the running instance).
 */
export async function readStatus(
  client: OrchestrationClient,
  instanceId: string,
): Promise<InstanceStatus | undefined> {
  try {
    return await client.getStatus(instanceId);
  } catch {
    return undefined;
  }
}

/** The first active instance among `instanceIds` (e.g. a pool's own refresh, then its cluster's). */
export async function findActive(
  client: OrchestrationClient,
  instanceIds: readonly string[],
): Promise<InstanceStatus | undefined> {
  for (const instanceId of instanceIds) {
    const status = await readStatus(client, instanceId);
    if (status !== undefined && isActive(status)) return { ...status, instanceId };
  }
  return undefined;
}

/**
 * Starts `name` as `instanceId` unless an instance with that id (or one of `blockers`) is active;
 * then reports the running one. A lost start race (two triggers at once) is reported as running.
 * Throws only when the start failed and nothing is running (a real failure the caller reports).
 */
export async function startSingleton(
  client: OrchestrationClient,
  request: {
    readonly name: string;
    readonly instanceId: string;
    readonly input: unknown;
    readonly blockers?: readonly string[];
  },
): Promise<StartOutcome> {
  const running = await findActive(client, [request.instanceId, ...(request.blockers ?? [])]);
  if (running !== undefined) return { kind: 'running', instanceId: running.instanceId, status: running };
  try {
    await client.startNew(request.name, { instanceId: request.instanceId, input: request.input });
    return { kind: 'started', instanceId: request.instanceId };
  } catch (error) {
    const winner = await readStatus(client, request.instanceId);
    if (winner !== undefined && isActive(winner))
      return { kind: 'running', instanceId: request.instanceId, status: winner };
    throw new Error(`starting orchestration ${request.name} as ${request.instanceId}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/**
 * Delivers `eventName` to the instance if it is active, else starts it with `input` (which carries
 * the first event). Retries once around the two races: the instance finishing between the status read
 * and the raise, and another trigger starting it between the read and the start.
 */
export async function signalSingleton(
  client: OrchestrationClient,
  request: {
    readonly name: string;
    readonly instanceId: string;
    readonly eventName: string;
    readonly eventData: unknown;
    readonly input: unknown;
  },
): Promise<'raised' | 'started'> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const status = await readStatus(client, request.instanceId);
    if (status !== undefined && isActive(status)) {
      try {
        await client.raiseEvent(request.instanceId, request.eventName, request.eventData);
        return 'raised';
      } catch (error) {
        lastError = error;
        continue;
      }
    }
    try {
      await client.startNew(request.name, { instanceId: request.instanceId, input: request.input });
      return 'started';
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`signalling ${request.instanceId}: ${messageOf(lastError)}`, { cause: lastError });
}
