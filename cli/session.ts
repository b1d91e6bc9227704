/**
 * A CLI session: the settings, the composed dependencies and a local durable runner, either against
 * real Azure (settings from the environment or a local.settings.json file, DefaultAzureCredential)
 * or against an in-process simulator whose clock the runner drives.
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';

import type { MeterProvider } from '@opentelemetry/api';

import { durableRegistry } from '../functions/durable-registry.js';
import type { CliMeters } from '../shared/adapters/opentelemetry/metrics.js';
import type { Composition } from '../shared/composition-root.js';
import { compose } from '../shared/composition-root.js';
import { definedOnly } from '../shared/domain/optional.js';
import { withCapzRollout } from '../sim/app-settings.js';
import { UsageError } from './args.js';
import { pruneFinishedRuns } from './run-records.js';
import type { Clock, DurableRunner } from './runner/index.js';
import type { OrchestrationStatus } from './runner/index.js';
import {
  createDurableRunner,
  createFileStore,
  createReferenceStore,
  createSystemClock,
  type InstanceStore,
} from './runner/index.js';
import { connectSimulator } from './sim-connection.js';
import type { SimulatorSession } from './sim-session.js';

export interface Session {
  readonly composition: Composition;
  readonly runner: DurableRunner;
  /** Where the runner keeps run histories: the state dir for refresh, memory (no copies) otherwise. */
  readonly runs: InstanceStore;
  readonly simulator?: SimulatorSession;
  close(): Promise<void>;
}

export interface SessionOptions {
  readonly settingsFile?: string;
  readonly sim?: string | true;
  readonly simConnect?: string;
  readonly timeFactor?: number;
  /** --sim/--sim-connect: the simulated CAPZ clusters' `capz.rollout`. */
  readonly capzRollout?: 'allow' | 'refuse';
  readonly stateDir: string;
  /**
   * Keep run histories in the state dir (refresh, so an interrupted run can be resumed); otherwise in
   * memory (plan, status, release: they change nothing that needs resuming, and leave no files).
   */
  readonly persistRuns?: boolean;
  readonly onStatus?: (status: OrchestrationStatus) => void;
  /** App settings to use instead of the process environment (real Azure mode, without --settings). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export const SAMPLE_SCENARIO = fileURLToPath(new URL('../../sim/scenarios/sample.yaml', import.meta.url));

export async function openSession(options: SessionOptions): Promise<Session> {
  const meters = await cliMeters(process.env);
  let session: Session;
  try {
    session = await openSessionWith(options, meters?.meterProvider);
  } catch (error) {
    await meters?.shutdown();
    throw error;
  }
  return {
    ...session,
    close: async () => {
      // Run events are delivered in the background: give them a bounded moment before the process ends.
      await session.composition.events?.flush(10_000);
      await session.close();
      await meters?.shutdown();
    },
  };
}

/**
 * The CLI's metrics, only when asked: `VMSSP_METRICS=console` prints them, an
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `VMSSP_METRICS=otlp`) exports them over OTLP/HTTP. The SDK is loaded
 * only then.
 */
async function cliMeters(env: Readonly<Record<string, string | undefined>>): Promise<CliMeters | undefined> {
  const asked = env['VMSSP_METRICS'];
  const kind =
    asked === 'console' || asked === 'otlp'
      ? asked
      : (env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? '') !== '' ||
          (env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'] ?? '') !== ''
        ? 'otlp'
        : undefined;
  if (asked !== undefined && asked !== '' && asked !== 'console' && asked !== 'otlp') {
    throw new UsageError(
      `VMSSP_METRICS: "${asked}" is not an exporter; use "console" or "otlp" (or unset it)`,
    );
  }
  if (kind === undefined) return undefined;
  const { startCliMeters } = await import('../shared/adapters/opentelemetry/metrics.js');
  return startCliMeters(kind);
}

async function openSessionWith(
  options: SessionOptions,
  meterProvider: MeterProvider | undefined,
): Promise<Session> {
  const metrics = meterProvider === undefined ? {} : { meterProvider };
  if (options.sim !== undefined) {
    // The simulator (and its YAML, TLS and world modules) loads only for --sim.
    const { startSimulatorSession } = await import('./sim-session.js');
    const simulator = await startSimulatorSession({
      scenarioPath: options.sim === true ? SAMPLE_SCENARIO : options.sim,
      ...definedOnly({ timeFactor: options.timeFactor }),
    });
    try {
      const composition = compose({
        env: withCapzRollout(simulator.env, options.capzRollout),
        simulator: simulator.endpoints,
        now: () => new Date(simulator.clock.now()),
        runner: CLI_RUNNER,
        ...metrics,
      });
      const { runner, runs } = await createRunner(composition, simulator.clock, options);
      return {
        composition,
        runner,
        runs,
        simulator,
        close: () => simulator.stop(),
      };
    } catch (error) {
      await simulator.stop();
      throw error;
    }
  }
  if (options.simConnect !== undefined) {
    const connected = await connectSimulator(options.simConnect);
    const composition = compose({
      env: withCapzRollout(connected.env, options.capzRollout),
      simulator: connected.endpoints,
      now: () => new Date(connected.clock.now()),
      runner: CLI_RUNNER,
      ...metrics,
    });
    return {
      composition,
      ...(await createRunner(composition, connected.clock, options)),
      close: () => Promise.resolve(),
    };
  }
  const env =
    options.settingsFile === undefined
      ? (options.env ?? process.env)
      : await readSettingsFile(options.settingsFile);
  const composition = compose({ env, runner: CLI_RUNNER, ...metrics });
  return {
    composition,
    ...(await createRunner(composition, createSystemClock(), options)),
    close: () => Promise.resolve(),
  };
}

/**
 * The pool lease names the CLI and this machine as the holder of a run it starts, and this process: once
 * that process is gone, a `release` on this machine need not wait for the lease to expire.
 */
const CLI_RUNNER = { kind: 'cli', host: hostname(), pid: process.pid };

async function createRunner(
  composition: Composition,
  clock: Clock,
  options: SessionOptions,
): Promise<{ runner: DurableRunner; runs: InstanceStore }> {
  // A command that keeps no run holds its instances in the runner's memory: no copies (createReferenceStore).
  let store: InstanceStore = createReferenceStore();
  if (options.persistRuns === true) {
    store = createFileStore(options.stateDir);
    await pruneFinishedRuns(store, clock.now());
  }
  const runner = createDurableRunner({
    ...durableRegistry(composition.dependencies),
    clock,
    store,
    maxConcurrentActivities: 8,
    // The command's own speed: its orchestrators stay in memory between episodes (the test suites run
    // the runner with a replay per episode, which checks that they are deterministic).
    extendedSessions: true,
    ...definedOnly({ onStatus: options.onStatus }),
  });
  return { runner, runs: store };
}

/** Reads `{ "Values": { … } }` (local.settings.json) into an environment-like map. */
async function readSettingsFile(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`--settings ${path}: the file cannot be read`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--settings ${path}: the file is not JSON (expected local.settings.json form)`);
  }
  const values = (parsed as { Values?: unknown }).Values;
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new UsageError(`--settings ${path}: expected { "Values": { "<KEY>": "<value>", … } }`);
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    if (typeof value !== 'string') {
      throw new UsageError(`--settings ${path}: Values.${key} must be a string`);
    }
    if (value !== '') env[key] = value;
  }
  return env;
}
