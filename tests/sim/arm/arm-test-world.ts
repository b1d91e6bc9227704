/**
 * Test world for the simulated ARM: a manually advanced clock and scheduler, scripted faults, a
 * request log, the handler on an HTTPS server on 127.0.0.1, and a real ComputeManagementClient
 * that trusts the throwaway CA.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import { ComputeManagementClient } from '@azure/arm-compute';
import type { AccessToken, TokenCredential } from '@azure/core-auth';
import type { RestError } from '@azure/core-rest-pipeline';

import type { ArmAuthorizer } from '../../../sim/arm/action-authorizer.js';
import { type ArmHandlerOptions, createArmHandler } from '../../../sim/arm/arm-handler.js';
import { ComputeState } from '../../../sim/arm/compute-state.js';
import type { ArmThrottle } from '../../../sim/arm/throttling.js';
import {
  type FaultInjector,
  type InjectedFault,
  KAMINO_OBSERVED,
  type LatencyProfile,
  type RequestLog,
  type Scheduler,
  type SimClock,
} from '../../../sim/contracts.js';
import { testTls } from './tls-helper.js';

export const SUBSCRIPTION = '11111111-2222-3333-4444-555555555555';
export const CLIENT_ID = 'aaaaaaaa-0000-0000-0000-000000000001';
export const OBJECT_ID = 'bbbbbbbb-0000-0000-0000-000000000002';

interface QueuedEvent {
  dueMs: number;
  seq: number;
  label: string;
  action: () => void;
  cancelled: boolean;
}

/** Manually advanced clock and scheduler: time moves only in `advance`. */
export class ManualClock implements SimClock, Scheduler {
  private current: number;
  private seq = 0;
  private readonly queue: QueuedEvent[] = [];

  constructor(startMs = Date.parse('2026-11-22T10:00:00Z')) {
    this.current = startMs;
  }

  nowMs(): number {
    return this.current;
  }

  now(): Date {
    return new Date(this.current);
  }

  after(delaySeconds: number, label: string, action: () => void): () => void {
    const event: QueuedEvent = {
      dueMs: this.current + delaySeconds * 1000,
      seq: this.seq++,
      label,
      action,
      cancelled: false,
    };
    this.queue.push(event);
    return () => {
      event.cancelled = true;
    };
  }

  runDue(): void {
    this.runUntil(this.current);
  }

  /** Moves time forward by `seconds`, running each due event at its own time, in order. */
  advance(seconds: number): void {
    this.runUntil(this.current + seconds * 1000);
  }

  pendingLabels(): string[] {
    return this.queue.filter((event) => !event.cancelled).map((event) => event.label);
  }

  private runUntil(limitMs: number): void {
    for (;;) {
      const next = this.queue
        .filter((event) => !event.cancelled && event.dueMs <= limitMs)
        .sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq)[0];
      if (!next) break;
      next.cancelled = true;
      this.queue.splice(this.queue.indexOf(next), 1);
      this.current = Math.max(this.current, next.dueMs);
      next.action();
    }
    this.current = Math.max(this.current, limitMs);
  }
}

/** Faults injected a given number of times per operation name. */
export class ScriptedFaults implements FaultInjector {
  private readonly rules: { operation: string; fault: InjectedFault; remaining: number }[] = [];
  readonly checked: string[] = [];

  inject(operation: string, fault: InjectedFault, times = 1): void {
    this.rules.push({ operation, fault, remaining: times });
  }

  check(_api: 'arm' | 'kube', operation: string): InjectedFault | undefined {
    this.checked.push(operation);
    const rule = this.rules.find((candidate) => candidate.operation === operation && candidate.remaining > 0);
    if (!rule) return undefined;
    rule.remaining -= 1;
    return rule.fault;
  }
}

export class RecordingLog implements RequestLog {
  readonly entries: { operation: string; status: number; target?: { method: string; path: string } }[] = [];

  record(
    _api: 'arm' | 'kube',
    operation: string,
    status: number,
    target?: { method: string; path: string },
  ): void {
    this.entries.push({ operation, status, ...(target === undefined ? {} : { target }) });
  }

  statuses(operation: string): number[] {
    return this.entries.filter((entry) => entry.operation === operation).map((entry) => entry.status);
  }
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Static credential whose token is JWT-shaped, so 403 messages can name the client and object id. */
export function staticCredential(): TokenCredential {
  const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ appid: CLIENT_ID, oid: OBJECT_ID })}.sig`;
  return {
    getToken: (): Promise<AccessToken> =>
      Promise.resolve({ token, expiresOnTimestamp: Date.now() + 3600_000 }),
  };
}

export interface ArmTestWorld {
  url: string;
  ca: string;
  clock: ManualClock;
  state: ComputeState;
  faults: ScriptedFaults;
  log: RecordingLog;
  client: ComputeManagementClient;
  latency: LatencyProfile;
  /** Awaits an SDK call while simulated time moves `stepSeconds` every millisecond of real time. */
  settle<T>(promise: Promise<T>, stepSeconds?: number): Promise<T>;
  close(): Promise<void>;
}

export interface ArmTestWorldOptions {
  authorizer?: ArmAuthorizer;
  retryAfterSeconds?: ArmHandlerOptions['retryAfterSeconds'];
  pageSize?: number;
  seed?: (state: ComputeState) => void;
  /** Request-rate accounting the handler uses (e.g. an enforcing one). */
  throttle?: (clock: ManualClock) => ArmThrottle;
  marketplaceImages?: boolean;
  resourceGroups?: ArmHandlerOptions['resourceGroups'];
  /** Client-paced polls: a poll of an operation in progress moves the clock (benchmarks' manual time). */
  clientPacedPolls?: boolean;
}

export async function startArmTestWorld(options: ArmTestWorldOptions = {}): Promise<ArmTestWorld> {
  const clock = new ManualClock();
  const latency = KAMINO_OBSERVED;
  const state = new ComputeState({
    clock,
    scheduler: clock,
    latency,
    defaultLocation: 'westeurope',
    defaultSubscriptionId: SUBSCRIPTION,
  });
  options.seed?.(state);
  const faults = new ScriptedFaults();
  const log = new RecordingLog();
  const handler = createArmHandler({
    state,
    clock,
    scheduler: clock,
    faults,
    log,
    latency,
    authorizer: options.authorizer ?? (() => true),
    // An explicit `retryAfterSeconds: undefined` asks for the handler's default (real) Retry-After.
    ...('retryAfterSeconds' in options
      ? { retryAfterSeconds: options.retryAfterSeconds }
      : { retryAfterSeconds: 0 }),
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    ...(options.throttle === undefined ? {} : { throttle: options.throttle(clock) }),
    ...(options.marketplaceImages === undefined ? {} : { marketplaceImages: options.marketplaceImages }),
    ...(options.resourceGroups === undefined ? {} : { resourceGroups: options.resourceGroups }),
    ...(options.clientPacedPolls === true
      ? { advanceClock: (seconds: number) => clock.advance(seconds) }
      : {}),
  });
  const tls = testTls();
  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `https://127.0.0.1:${port}`;
  const client = new ComputeManagementClient(staticCredential(), SUBSCRIPTION, {
    endpoint: url,
    tlsOptions: { ca: tls.caPem },
    retryOptions: { maxRetries: 3, retryDelayInMs: 5, maxRetryDelayInMs: 20 },
  });
  return {
    url,
    ca: tls.caPem,
    clock,
    state,
    faults,
    log,
    client,
    latency,
    async settle<T>(promise: Promise<T>, stepSeconds = 5): Promise<T> {
      const timer = setInterval(() => clock.advance(stepSeconds), 1);
      try {
        return await promise;
      } finally {
        clearInterval(timer);
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Fast poller options for `beginXAndWait` calls. */
export const FAST_POLL = { updateIntervalInMs: 1 } as const;

/** A raw HTTPS request to the simulated ARM (for what the SDK would not send). */
export async function rawRequest(
  world: ArmTestWorld,
  method: string,
  path: string,
  init: { token?: boolean; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const { request } = await import('node:https');
  const target = new URL(path, world.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (init.token !== false) headers.authorization = 'Bearer opaque-token';
    Object.assign(headers, init.headers ?? {});
    const req = request(target, { method, ca: world.ca, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const flat: Record<string, string> = {};
        for (const [key, value] of Object.entries(response.headers)) {
          if (typeof value === 'string') flat[key] = value;
        }
        resolve({
          status: response.statusCode ?? 0,
          headers: flat,
          body: text ? (JSON.parse(text) as unknown) : undefined,
        });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Asserts that an SDK call failed with a RestError and returns it. */
export function restError(error: unknown): RestError {
  assert.ok(
    error instanceof Error && error.name === 'RestError',
    `expected a RestError, got ${String(error)}`,
  );
  return error;
}
