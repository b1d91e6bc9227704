/**
 * The two hosts a real-engine scenario runs on (docs/real-engine.md), behind one shape: the Durable engine
 * (the .NET host over Azurite, its own simulator at ×1 with a fast latency profile) and the local runner
 * (its own simulator, the same world, on the manual clock). A scenario drives both the same way and the
 * tier compares what they did.
 */
import * as df from 'durable-functions';

import type { OrchestrationStatus } from '../../cli/runner/index.js';
import { createDurableRunner, createMemoryStore, historyEventName } from '../../cli/runner/index.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { compose } from '../../shared/composition-root.js';
import type { Engine } from './engine.js';

/** How an instance ended, as both hosts say it. */
export interface Ended {
  readonly runtimeStatus: string;
  readonly output: unknown;
  /** The failure message of a failed instance. */
  readonly failure?: string;
}

export interface Side {
  readonly name: 'engine' | 'runner';
  readonly sim: SimulatorSession;
  /** Starts an instance and returns at once. */
  start(name: string, input: unknown, instanceId: string): Promise<void>;
  /** Waits until the instance ended. */
  settle(instanceId: string): Promise<Ended>;
  raise(instanceId: string, event: string, data: unknown): Promise<void>;
  /** Ends an instance as an operator's terminate does (what its activities already started still runs). */
  terminate(instanceId: string, reason: string): Promise<void>;
  /** Waits until no activity runs (a terminated run's last one has returned). */
  quiet(): Promise<void>;
  /** Activity names called since the side was made, in the order they started. */
  calls(): readonly string[];
  /**
   * Wall seconds in which at least one of the calls from index `from` on was running (the engine's: where
   * a scenario's wall time went); undefined on the runner, whose time is the manual clock's.
   */
  activitySeconds(from: number): number | undefined;
  /** The instance's history event types, in order. */
  history(instanceId: string): Promise<readonly string[]>;
}

const TERMINAL = new Set(['Completed', 'Failed', 'Terminated', 'Canceled']);

export function engineSide(engine: Engine, sim: SimulatorSession, timeoutMs: number): Side {
  return {
    name: 'engine',
    sim,
    async start(name, input, instanceId) {
      await engine.client.startNew(name, { instanceId, input });
    },
    async settle(instanceId) {
      const deadline = Date.now() + timeoutMs;
      let told = Date.now();
      for (;;) {
        const gone = engine.hostGone();
        if (gone !== undefined) throw new Error(`${instanceId}: ${gone}`);
        const status = await withinSeconds(engine.client.getStatus(instanceId), 60, `${instanceId}: status`);
        if (process.env['REAL_ENGINE_VERBOSE'] === '1' && Date.now() - told > 5_000) {
          told = Date.now();
          console.log(
            `[engine] ${instanceId}: ${String(status.runtimeStatus)} ${JSON.stringify(status.customStatus)}; ` +
              `${engine.bridge.calls.length} calls, last ${engine.bridge.calls.at(-1)?.name ?? ''}`,
          );
        }
        if (TERMINAL.has(String(status.runtimeStatus))) {
          const failed = status.runtimeStatus === df.OrchestrationRuntimeStatus.Failed;
          return {
            runtimeStatus: String(status.runtimeStatus),
            output: failed ? undefined : status.output,
            ...(failed ? { failure: failureMessage(status.output) } : {}),
          };
        }
        if (Date.now() > deadline) {
          throw new Error(`${instanceId}: still ${String(status.runtimeStatus)} after ${timeoutMs} ms`);
        }
        await new Promise((done) => setTimeout(done, 250));
      }
    },
    async raise(instanceId, event, data) {
      await engine.client.raiseEvent(instanceId, event, data);
    },
    async terminate(instanceId, reason) {
      await engine.client.terminate(instanceId, reason);
      const deadline = Date.now() + timeoutMs;
      while (String((await engine.client.getStatus(instanceId)).runtimeStatus) !== 'Terminated') {
        if (Date.now() > deadline) throw new Error(`${instanceId}: not terminated after ${timeoutMs} ms`);
        await new Promise((done) => setTimeout(done, 100));
      }
    },
    quiet: () => untilQuiet(() => engine.bridge.inFlight, timeoutMs),
    calls: () => engine.bridge.calls.map((call) => call.name),
    activitySeconds: (from) => coveredSeconds(engine.bridge.calls.slice(from)),
    async history(instanceId) {
      return (await engine.historyRows(instanceId)).map((row) => row.EventType);
    },
  };
}

/**
 * The extension reports a failed orchestrator's output as `Orchestrator function '<name>' failed: ` and the
 * worker's `message\nstack` text: the message, as the runner reports it.
 */
function failureMessage(output: unknown): string {
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  const message = text.split('\n')[0] ?? '';
  return message.replace(/^Orchestrator function '[^']*' failed: /, '');
}

export function runnerSide(sim: SimulatorSession, env: Readonly<Record<string, string>>): Side {
  // Activities on the world's clock, as the orchestrations are: a lease released at a wall time ahead of
  // the manual clock would refuse the next run's plan as superseded (busy on the runner only).
  const composition = compose({ env, simulator: sim.endpoints, now: () => new Date(sim.clock.now()) });
  const called: string[] = [];
  let inFlight = 0;
  const registry = durableRegistry(composition.dependencies);
  const activities = Object.fromEntries(
    Object.entries(registry.activities).map(([activity, handler]) => [
      activity,
      async (value: unknown, context: Parameters<typeof handler>[1]) => {
        called.push(activity);
        inFlight += 1;
        try {
          return await handler(value, context as never);
        } finally {
          inFlight -= 1;
        }
      },
    ]),
  );
  const runner = createDurableRunner({
    orchestrators: registry.orchestrators,
    activities,
    store: createMemoryStore(),
    clock: sim.clock,
    ...(process.env['REAL_ENGINE_VERBOSE'] === '1'
      ? {
          onStatus: (status: OrchestrationStatus) =>
            console.log(
              `[runner] ${status.instanceId}: ${status.runtimeStatus} ${JSON.stringify(status.customStatus)}; ` +
                `${called.length} calls, last ${called.at(-1) ?? ''} at ${new Date(sim.clock.now()).toISOString()}`,
            ),
        }
      : {}),
  });
  const running = new Map<string, Promise<OrchestrationStatus>>();
  return {
    name: 'runner',
    sim,
    start(name, input, instanceId) {
      const run = runner.startOrchestration(name, input, instanceId);
      running.set(instanceId, run);
      // Let the run take its first steps before the scenario goes on, as the engine's would.
      return new Promise((done) => setImmediate(done));
    },
    async settle(instanceId) {
      const run = running.get(instanceId);
      const status = run === undefined ? await runner.getStatus(instanceId) : await run;
      if (status === undefined) throw new Error(`${instanceId}: no such instance`);
      return {
        runtimeStatus: status.runtimeStatus,
        output: status.output,
        ...(status.failure === undefined ? {} : { failure: status.failure.ErrorMessage }),
      };
    },
    async raise(instanceId, event, data) {
      await runner.raiseEvent(instanceId, event, data);
    },
    async terminate(instanceId, reason) {
      await runner.terminate(instanceId, reason);
    },
    quiet: () => untilQuiet(() => inFlight, 5 * 60_000),
    calls: () => called,
    activitySeconds: () => undefined,
    async history(instanceId) {
      return ((await runner.getHistory(instanceId)) ?? []).map((event) => historyEventName(event.EventType));
    },
  };
}

/** The promise's value, or a failure naming `what` when it has not settled within `seconds`. */
async function withinSeconds<T>(promise: Promise<T>, seconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`${what}: no answer from the engine in ${seconds} s`)),
      seconds * 1000,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (bounded) until `running()` says no activity runs. */
async function untilQuiet(running: () => number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (running() > 0) {
    if (Date.now() > deadline) throw new Error(`an activity still runs after ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Seconds covered by the union of the calls' [start, end] intervals (a running one ends now). */
function coveredSeconds(calls: readonly { startedMs: number; endedMs?: number }[]): number {
  const spans = calls.map((call) => [call.startedMs, call.endedMs ?? Date.now()] as const);
  spans.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let [from, to] = [Number.NaN, Number.NaN];
  for (const [start, end] of spans) {
    if (Number.isNaN(from) || start > to) {
      if (!Number.isNaN(from)) total += to - from;
      [from, to] = [start, end];
    } else {
      to = Math.max(to, end);
    }
  }
  if (!Number.isNaN(from)) total += to - from;
  return total / 1000;
}
