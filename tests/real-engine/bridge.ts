/**
 * The Node side of the real-engine tier (docs/real-engine.md): the function app's own registrations
 * (functions/refresh.registrations.ts, through `df.app.orchestration` / `df.app.activity` and
 * `@azure/functions`' `app.generic`), captured as the Functions Node worker captures them, and served
 * on 127.0.0.1 to the .NET host's proxy functions. The worker's `@azure/functions-core` module exists
 * only inside a Functions host; this module stands in for the part registration uses.
 *
 * An orchestrator gets the JSON context the extension wrote (parsed, as the worker hands a JSON trigger)
 * and an InvocationContext; its return value (the OrchestratorState) goes back as JSON text, a failure as
 * its message (with durable-functions' `$OutOfProcData$` state in it). An activity gets its input and,
 * for a durable client extra input, the client binding the extension made.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';

import azureFunctions from '@azure/functions';

import { messageOf } from '../../shared/domain/errors.js';

type Handler = (trigger: unknown, context: azureFunctions.InvocationContext) => unknown;

interface Binding {
  readonly type: string;
  readonly direction: string;
  readonly name: string;
}

interface Registered {
  readonly name: string;
  readonly trigger: Binding;
  readonly extraInputs: readonly Binding[];
  readonly handler: Handler;
}

const registered = new Map<string, Registered>();

/** What `@azure/functions` asks of the worker's core module while an app registers its functions. */
const functionsCore = {
  setProgrammingModel: (): void => undefined,
  getProgrammingModel: (): undefined => undefined,
  registerHook: () => ({ dispose: (): void => undefined }),
  log: (): void => undefined,
  registerFunction(metadata: { name: string; bindings: Record<string, Binding> }, handler: Handler) {
    const bindings = Object.entries(metadata.bindings).map(([name, binding]) => ({ ...binding, name }));
    const trigger = bindings.find((binding) => binding.type.endsWith('Trigger'));
    if (trigger === undefined) throw new Error(`${metadata.name}: no trigger binding`);
    const extraInputs = bindings.filter((binding) => binding !== trigger && binding.direction === 'in');
    registered.set(metadata.name, { name: metadata.name, trigger, extraInputs, handler });
    return { dispose: () => registered.delete(metadata.name) };
  },
};

let installed = false;

/** Makes `require('@azure/functions-core')` answer `functionsCore` (before `@azure/functions` first asks). */
export function installFunctionsCore(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const moduleLoader = require('node:module') as { _load: (request: string, ...rest: unknown[]) => unknown };
  const load = moduleLoader._load;
  moduleLoader._load = function (request: string, ...rest: unknown[]) {
    if (request === '@azure/functions-core') return functionsCore;
    return load.call(this, request, ...rest);
  };
}

/** Loads the app's registrations (once per process) and returns the durable functions by kind. */
export async function loadRegistrations(): Promise<{ orchestrators: string[]; activities: string[] }> {
  installFunctionsCore();
  await import('../../functions/refresh.registrations.js');
  const of = (type: string) =>
    [...registered.values()].filter((entry) => entry.trigger.type === type).map((entry) => entry.name);
  return { orchestrators: of('orchestrationTrigger'), activities: of('activityTrigger') };
}

/** One activity execution as the bridge saw it (the engine may run one twice: at least once). */
export interface ActivityCall {
  readonly name: string;
  readonly instanceId: string | undefined;
  /** Wall milliseconds (Date.now()) it started and, once it returned, ended. */
  readonly startedMs: number;
  endedMs?: number;
}

export interface Bridge {
  readonly url: string;
  /** Activity executions in the order they started. */
  readonly calls: ActivityCall[];
  /** Orchestrator episodes the engine ran (replays included). */
  episodes: number;
  /** Activity executions started and not yet returned (a terminated run's last one may still run). */
  readonly inFlight: number;
  /** The durable client binding's JSON, once the host has written it. */
  setClient(client: unknown): void;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function parsedLikeTheWorker(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export async function startBridge(): Promise<Bridge> {
  let client: unknown;
  const calls: ActivityCall[] = [];
  const state = { episodes: 0, inFlight: 0 };

  async function invoke(path: string, request: Record<string, unknown>): Promise<unknown> {
    const name = String(request['name']);
    const entry = registered.get(name);
    if (entry === undefined) throw new Error(`no function ${name} registered`);
    const context = new azureFunctions.InvocationContext({
      functionName: name,
      invocationId: `${name}:${calls.length}:${state.episodes}`,
      options: { trigger: entry.trigger, extraInputs: [...entry.extraInputs] } as never,
    });
    if (path === '/orchestrate') {
      state.episodes += 1;
      const trigger = JSON.parse(String(request['context'])) as unknown;
      const result = await entry.handler(trigger, context);
      return { ok: true, state: JSON.stringify(result) };
    }
    for (const input of entry.extraInputs) {
      if (input.type === 'durableClient' || input.type === 'orchestrationClient') {
        context.extraInputs.set(input.name, client);
      }
    }
    // The worker hands a string input JSON-parsed when it parses (@azure/functions fromRpcTypedData), which
    // is why durable-functions JSON-encodes string inputs of activities (processInput).
    const input = parsedLikeTheWorker(request['input']);
    const instanceId =
      typeof input === 'object' && input !== null && 'instanceId' in input
        ? String(input.instanceId)
        : undefined;
    const call: ActivityCall = { name, instanceId, startedMs: Date.now() };
    calls.push(call);
    state.inFlight += 1;
    try {
      const output = await entry.handler(input, context);
      return { ok: true, output: output ?? null };
    } finally {
      state.inFlight -= 1;
      call.endedMs = Date.now();
    }
  }

  const server: Server = createServer((request, response) => {
    void (async () => {
      let reply: unknown;
      try {
        reply = await invoke(request.url ?? '', (await body(request)) as Record<string, unknown>);
      } catch (error) {
        reply = {
          ok: false,
          error: messageOf(error),
          stack: error instanceof Error ? (error.stack ?? '') : '',
        };
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(reply));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('bridge: no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    calls,
    get episodes() {
      return state.episodes;
    },
    set episodes(value: number) {
      state.episodes = value;
    },
    get inFlight() {
      return state.inFlight;
    },
    setClient: (value) => {
      client = value;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
