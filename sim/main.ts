#!/usr/bin/env node
/**
 * `npm run sim`: starts the simulator on 127.0.0.1 with a scenario, prints where to reach it, and shuts
 * down cleanly on SIGINT/SIGTERM.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { connectionOf, writeConnectionFile } from './connection.js';
import { messageOf } from './errors.js';
import { SettingsFileRefused, writeFunctionAppSettings } from './function-app-settings.js';
import { type RunningSimulator, SAMPLE_SCENARIO, startSimulator } from './index.js';
import { ScenarioError } from './world/scenario.js';

const USAGE = `usage: npm run sim -- [--scenario <file.yaml>] [--time-factor <n>] [--clock scaled|manual]
                      [--out <dir>] [--arm-actions <file.json>] [--rbac-dir <dir>]
                      [--arm-port <n>] [--kube-port <n>] [--kube-http-port <n>]
                      [--function-app-settings <local.settings.json>]`;

interface Flags {
  scenario: string;
  timeFactor?: number;
  clock: 'scaled' | 'manual';
  out: string;
  armActions?: string;
  rbacDir?: string;
  /** Where to write the settings of a Functions host run against this simulator (docs/local-host.md). */
  functionAppSettings?: string;
  ports: { arm?: number; kubeHttps?: number; kubeHttp?: number };
}

class FlagError extends Error {}

function positiveNumber(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    throw new FlagError(`--${flag} must be a positive number (e.g. --${flag} 60), got "${text}"`);
  }
  return value;
}

function port(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new FlagError(`--${flag} must be a port number 0–65535 (0 = any free port), got "${text}"`);
  }
  return value;
}

function parseFlags(argv: readonly string[]): Flags {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        scenario: { type: 'string' },
        'time-factor': { type: 'string' },
        clock: { type: 'string' },
        out: { type: 'string' },
        'arm-actions': { type: 'string' },
        'rbac-dir': { type: 'string' },
        'arm-port': { type: 'string' },
        'kube-port': { type: 'string' },
        'kube-http-port': { type: 'string' },
        'function-app-settings': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    // parseArgs names the flag ("Unknown option '--x'", "Option '--out <value>' argument missing").
    throw new FlagError(`${messageOf(error)}\n${USAGE}`);
  }
  if (values.help === true) throw new FlagError(USAGE);
  const clock = (values.clock as string | undefined) ?? 'scaled';
  if (clock !== 'scaled' && clock !== 'manual') {
    throw new FlagError(`--clock must be "scaled" or "manual", got "${clock}"`);
  }
  const flags: Flags = {
    scenario: (values.scenario as string | undefined) ?? SAMPLE_SCENARIO,
    clock,
    out: (values.out as string | undefined) ?? '.sim',
    ports: {},
  };
  const timeFactor = positiveNumber('time-factor', values['time-factor'] as string | undefined);
  if (timeFactor !== undefined) flags.timeFactor = timeFactor;
  if (typeof values['arm-actions'] === 'string') flags.armActions = values['arm-actions'];
  if (typeof values['rbac-dir'] === 'string') flags.rbacDir = values['rbac-dir'];
  if (typeof values['function-app-settings'] === 'string') {
    flags.functionAppSettings = values['function-app-settings'];
  }
  const arm = port('arm-port', values['arm-port'] as string | undefined);
  const kubeHttps = port('kube-port', values['kube-port'] as string | undefined);
  const kubeHttp = port('kube-http-port', values['kube-http-port'] as string | undefined);
  if (arm !== undefined) flags.ports.arm = arm;
  if (kubeHttps !== undefined) flags.ports.kubeHttps = kubeHttps;
  if (kubeHttp !== undefined) flags.ports.kubeHttp = kubeHttp;
  return flags;
}

function describe(sim: RunningSimulator, flags: Flags): string {
  const lines = [
    `simulator running (${sim.world.scenario.name}, ${sim.clock.mode} clock ×${sim.clock.timeFactor}, latency ${sim.world.latency.name})`,
    `  scenario        ${flags.scenario}`,
    `  subscription    ${sim.subscriptionId}`,
    `  ARM             ${sim.armEndpoint}`,
    `  admin API       ${sim.armEndpoint}/_sim/state  (Authorization: Bearer ${sim.tokens.admin})`,
  ];
  for (const cluster of sim.clusters) {
    lines.push(
      `  cluster ${cluster.name}`,
      `    kube HTTPS    ${cluster.kubeHttpsUrl}`,
      `    kube HTTP     ${cluster.kubeHttpUrl}`,
      `    contexts      ${cluster.contexts.admin} (admin), ${cluster.contexts.serviceAccount} (service account)`,
    );
  }
  lines.push(
    `  kubeconfig      ${sim.kubeconfigPath}`,
    `  CA certificate  ${sim.caPath}  (NODE_EXTRA_CA_CERTS=${sim.caPath})`,
    `try: kubectl --kubeconfig ${sim.kubeconfigPath} --context sim-admin get nodes`,
    'press Ctrl-C to stop',
  );
  return lines.join('\n');
}

async function main(): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (error) {
    if (error instanceof FlagError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  let sim: RunningSimulator;
  try {
    sim = await startSimulator({
      scenario: flags.scenario,
      outDir: flags.out,
      clock: flags.clock,
      ...(flags.timeFactor === undefined ? {} : { timeFactor: flags.timeFactor }),
      ...(flags.armActions === undefined ? {} : { armActionsFile: flags.armActions }),
      ...(flags.rbacDir === undefined ? {} : { rbacDir: flags.rbacDir }),
      ports: flags.ports,
    });
  } catch (error) {
    if (error instanceof ScenarioError) {
      console.error(`${error.message}\n(fix the scenario file, or pass another with --scenario <file>)`);
      return 1;
    }
    console.error(`starting simulator: ${messageOf(error)}`);
    return 1;
  }
  const connectionPath = join(sim.kubeconfigPath, '..', 'connection.json');
  const connection = connectionOf(sim);
  await writeConnectionFile(connectionPath, connection);
  if (flags.functionAppSettings !== undefined) {
    try {
      await writeFunctionAppSettings(flags.functionAppSettings, connection);
    } catch (error) {
      await sim.stop();
      if (!(error instanceof SettingsFileRefused)) throw error;
      console.error(error.message);
      return 1;
    }
  }
  console.log(describe(sim, flags));
  console.log(`  connection      ${connectionPath}  (vmss-prototype plan --sim-connect ${connectionPath})`);
  if (flags.functionAppSettings !== undefined) {
    console.log(
      `  function app    ${flags.functionAppSettings}  (func start in the repository root: docs/local-host.md)`,
    );
  }
  await new Promise<void>((resolveSignal) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      console.log(`\n${signal}: stopping simulator`);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolveSignal();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  await sim.stop();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
