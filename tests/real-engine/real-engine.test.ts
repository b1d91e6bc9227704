/**
 * The real-engine tier (docs/real-engine.md): the app's orchestrations on the Durable extension itself
 * (DurableTask 3.19, Azure Storage backend on Azurite), against the simulator, each scenario compared
 * with the local runner: the same outcome, the same activity calls, the same number of history events.
 * One engine and one simulator serve every scenario of the file. Skipped (with the reason) when the host
 * is not built, outside CI only; in CI (CI=true) a missing host fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as df from 'durable-functions';

import { createDurableRunner, createMemoryStore, historyEventName } from '../../cli/runner/index.js';
import { SAMPLE_SCENARIO } from '../../cli/session.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { compose } from '../../shared/composition-root.js';
import { functionAppSettingsFor } from '../../sim/function-app-settings.js';
import { installFunctionsCore } from './bridge.js';
import { type Engine, hostMissing, startEngine } from './engine.js';

const skip = hostMissing();

/** The #574 pattern, seeded: a task still pending is yielded again inside a new Task.any. */
const SEEDED_574 = 'realEngineSeeded574';
const SEEDED_ACTIVITY = 'realEngineEcho';

let sim: SimulatorSession;
let engine: Engine;
let env: Record<string, string>;

const EPISODE_MARKERS = new Set(['OrchestratorStarted', 'OrchestratorCompleted']);

const TERMINAL = new Set(['Completed', 'Failed', 'Terminated', 'Canceled']);

async function settle(instanceId: string, timeoutMs: number): Promise<df.DurableOrchestrationStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await engine.client.getStatus(instanceId);
    if (TERMINAL.has(String(status.runtimeStatus))) return status;
    if (Date.now() > deadline) throw new Error(`${instanceId}: still ${String(status.runtimeStatus)}`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** Runs one orchestration on the engine and on the local runner, and prints them side by side. */
async function differential(
  scenario: string,
  name: string,
  input: unknown,
  instanceId: string,
): Promise<void> {
  const started = Date.now();
  const before = engine.bridge.calls.length;
  await engine.client.startNew(name, { instanceId, input });
  const onEngine = await settle(instanceId, 5 * 60_000);
  const engineCalls = engine.bridge.calls.slice(before).map((call) => call.name);
  const engineRows = await engine.historyRows(instanceId);
  const engineSeconds = (Date.now() - started) / 1000;

  const composition = compose({ env, simulator: sim.endpoints });
  const runnerCalls: string[] = [];
  const registry = durableRegistry(composition.dependencies);
  const activities = Object.fromEntries(
    Object.entries(registry.activities).map(([activity, handler]) => [
      activity,
      (value: unknown, context: Parameters<typeof handler>[1]) => {
        runnerCalls.push(activity);
        return handler(value, context as never);
      },
    ]),
  );
  const runner = createDurableRunner({
    orchestrators: registry.orchestrators,
    activities,
    store: createMemoryStore(),
    clock: sim.clock,
  });
  const onRunner = await runner.startOrchestration(name, input, instanceId);
  const runnerHistory = (await runner.getHistory(instanceId)) ?? [];
  // Where episodes begin and end depends on when completions arrive (wall time on the engine): compared
  // without the episode markers, printed with them.
  const engineEvents = engineRows.filter((row) => !EPISODE_MARKERS.has(row.EventType));
  const runnerEvents = runnerHistory.filter(
    (event) => !EPISODE_MARKERS.has(historyEventName(event.EventType)),
  );

  const rows: [string, string, string][] = [
    ['', 'engine', 'runner'],
    ['outcome', String(onEngine.runtimeStatus), onRunner.runtimeStatus],
    ['activity calls', String(engineCalls.length), String(runnerCalls.length)],
    ['history events', String(engineRows.length), String(runnerHistory.length)],
    ['  w/o episodes', String(engineEvents.length), String(runnerEvents.length)],
  ];
  console.log(
    `real-engine: ${scenario} (${engineSeconds.toFixed(1)} s on the engine)\n` +
      rows.map(([label, a, b]) => `  ${label.padEnd(16)}${a.padEnd(12)}${b}`).join('\n'),
  );
  assert.equal(String(onEngine.runtimeStatus), onRunner.runtimeStatus, `${scenario}: outcome`);
  assert.deepEqual(engineCalls, runnerCalls, `${scenario}: activity calls, engine vs runner`);
  assert.deepEqual(
    engineEvents.map((row) => row.EventType),
    runnerEvents.map((event) => historyEventName(event.EventType)),
    `${scenario}: history events (without episode markers), engine vs runner`,
  );
}

before(async () => {
  if (skip !== undefined) return;
  installFunctionsCore();
  // The seeded orchestration and its activity, registered next to the app's before the engine starts.
  // Slower than the orchestrator's first timer, so the timer wins and the activity is still pending.
  df.app.activity(SEEDED_ACTIVITY, {
    handler: async (input: unknown) => {
      if (input === 'first') await new Promise((done) => setTimeout(done, 3_000));
      return input;
    },
  });
  df.app.orchestration(SEEDED_574, function* (context) {
    const pending = context.df.callActivity(SEEDED_ACTIVITY, 'first');
    const soon = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000));
    const winner: unknown = yield context.df.Task.any([pending, soon]);
    if (winner === soon) {
      // #574: `pending` again, in a new Task.any: durable-functions 3.5 sends its action a second time.
      yield context.df.Task.any([
        pending,
        context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000)),
      ]);
    }
    const second: unknown = yield context.df.callActivity(SEEDED_ACTIVITY, 'second');
    return second;
  });
  sim = await startSimulatorSession({ scenarioPath: SAMPLE_SCENARIO, timeFactor: 100 });
  env = functionAppSettingsFor(connectionOf(sim.running)).Values;
  Object.assign(process.env, env, { WEBSITE_HOSTNAME: 'localhost:7071' });
  engine = await startEngine();
});

after(async () => {
  if (skip !== undefined) return;
  await engine.stop();
  await sim.stop();
});

void describe('the real Durable engine', { skip }, () => {
  void it('reads a cluster status as the local runner does', async () => {
    await differential('cluster status', 'clusterStatus', { cluster: 'prod' }, 'status-prod');
  });

  // The canary of the tier: the #574 pattern must go wrong here as it does on Azure. The engine schedules
  // the re-sent activity again under a new id, and from there completions reach the wrong SDK tasks: the
  // run ends without the second activity's result. A correct host would return 'second'.
  void it('gets the seeded #574 pattern wrong, as the Functions host does', async () => {
    const started = Date.now();
    await engine.client.startNew(SEEDED_574, { instanceId: 'seeded-574' });
    const status = await settle('seeded-574', 2 * 60_000);
    console.log(
      `real-engine: seeded #574 (${((Date.now() - started) / 1000).toFixed(1)} s): ` +
        `${String(status.runtimeStatus)} ${JSON.stringify(status.output)}; history ` +
        (await engine.historyRows('seeded-574')).map((row) => row.EventType).join(' '),
    );
    const rows = (await engine.historyRows('seeded-574')).map((row) => row.EventType);
    assert.equal(
      rows.filter((type) => type === 'TaskScheduled').length,
      3,
      'the pending activity scheduled twice, then the second one',
    );
    assert.notDeepEqual(
      { status: status.runtimeStatus, output: status.output },
      { status: 'Completed', output: 'second' },
      '#574: the re-yielded task must break the run on the engine',
    );
  });
});
