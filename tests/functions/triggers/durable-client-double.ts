/**
 * Durable client test doubles that behave like durable-functions 3.x: getStatus throws for an unknown
 * id, startNew refuses an id whose instance is active, raiseEvent refuses unknown or finished ones.
 * One keeps instances in memory; the other drives the local durable runner.
 */
import azureFunctions, { type HttpRequest, type HttpResponse } from '@azure/functions';

import type { DurableRunner } from '../../../cli/runner/index.js';
import type { HttpOrchestrationClient } from '../../../functions/triggers/refresh-api.http.js';
import type { InstanceStatus } from '../../../shared/application/singleton.js';
import { ACTIVE_STATES } from '../../../shared/application/singleton.js';

function notFound(instanceId: string): Error {
  return new Error(
    `DurableClient error: Durable Functions extension replied with HTTP 404 response for instance ${instanceId}`,
  );
}

function checkStatusResponse(request: HttpRequest | undefined, instanceId: string): HttpResponse {
  const base = request === undefined ? 'http://localhost:7071' : new URL(request.url).origin;
  const status = `${base}/runtime/webhooks/durabletask/instances/${encodeURIComponent(instanceId)}`;
  return new azureFunctions.HttpResponse({
    status: 202,
    jsonBody: {
      id: instanceId,
      statusQueryGetUri: status,
      sendEventPostUri: `${status}/raiseEvent/{eventName}`,
      terminatePostUri: `${status}/terminate?reason={text}`,
      purgeHistoryDeleteUri: status,
    },
    headers: { Location: status, 'Retry-After': '10' },
  });
}

export interface StartedInstance {
  readonly name: string;
  readonly instanceId: string;
  readonly input: unknown;
}

export class FakeDurableClient implements HttpOrchestrationClient {
  readonly instances = new Map<string, InstanceStatus & { name: string; input: unknown }>();
  readonly started: StartedInstance[] = [];
  readonly raised: { instanceId: string; eventName: string; data: unknown }[] = [];
  /** Makes the next startNew fail as if another trigger won the race (the instance is then Running). */
  loseNextStartRace = false;

  seed(instanceId: string, runtimeStatus: string, customStatus?: unknown, name = 'refreshPool'): void {
    this.instances.set(instanceId, { instanceId, runtimeStatus, customStatus, name, input: undefined });
  }

  getStatus(instanceId: string): Promise<InstanceStatus> {
    const status = this.instances.get(instanceId);
    return status === undefined ? Promise.reject(notFound(instanceId)) : Promise.resolve(status);
  }

  startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string> {
    const existing = this.instances.get(options.instanceId);
    if (this.loseNextStartRace) {
      this.loseNextStartRace = false;
      this.seed(options.instanceId, 'Running', undefined, name);
      return Promise.reject(
        new Error(`DurableClient error: HTTP 409: instance ${options.instanceId} already exists`),
      );
    }
    if (existing !== undefined && ACTIVE_STATES.has(existing.runtimeStatus)) {
      return Promise.reject(
        new Error(
          `DurableClient error: HTTP 409: instance ${options.instanceId} is ${existing.runtimeStatus}`,
        ),
      );
    }
    this.instances.set(options.instanceId, {
      instanceId: options.instanceId,
      runtimeStatus: 'Pending',
      name,
      input: options.input,
    });
    this.started.push({ name, instanceId: options.instanceId, input: options.input });
    return Promise.resolve(options.instanceId);
  }

  raiseEvent(instanceId: string, eventName: string, data: unknown): Promise<void> {
    const status = this.instances.get(instanceId);
    if (status === undefined) return Promise.reject(notFound(instanceId));
    if (!ACTIVE_STATES.has(status.runtimeStatus)) {
      return Promise.reject(
        new Error(`DurableClient error: HTTP 410: instance ${instanceId} is ${status.runtimeStatus}`),
      );
    }
    this.raised.push({ instanceId, eventName, data });
    return Promise.resolve();
  }

  createCheckStatusResponse(request: HttpRequest | undefined, instanceId: string): HttpResponse {
    return checkStatusResponse(request, instanceId);
  }
}

/** A 3.x-like client over the local durable runner (instances really run, in virtual time). */
export function runnerClient(runner: DurableRunner): HttpOrchestrationClient {
  return {
    async getStatus(instanceId) {
      const status = await runner.getStatus(instanceId);
      if (status === undefined) throw notFound(instanceId);
      return status;
    },
    async startNew(name, options) {
      await runner.startOrchestration(name, options.input, options.instanceId);
      return options.instanceId;
    },
    async raiseEvent(instanceId, eventName, data) {
      await runner.raiseEvent(instanceId, eventName, data);
    },
    createCheckStatusResponse: checkStatusResponse,
  };
}
