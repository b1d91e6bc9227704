/**
 * Runs the CLI against an in-process simulator: starts it with the product's own permissions (the
 * Azure action list and the Kubernetes RBAC manifests in infra/), derives app settings that point at
 * it, and gives the runner a clock that moves the simulated world when a durable timer is due.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments } from 'yaml';

import { settingsForConnection, SIM_ARM_TOKEN } from '../sim/app-settings.js';
import type { SimulatorConnection } from '../sim/connection.js';
import { connectionOf } from '../sim/connection.js';
import type { KubeObject } from '../sim/contracts.js';
import type { RunningSimulator } from '../sim/index.js';
import { startSimulator } from '../sim/index.js';
import type { Clock } from './runner/index.js';

const ARM_ACTIONS_FILE = fileURLToPath(new URL('../../infra/azure/compute-actions.json', import.meta.url));
const RBAC_DIR = fileURLToPath(new URL('../../infra/kubernetes', import.meta.url));

export { connectionOf, SIM_ARM_TOKEN, type SimulatorConnection };
export { settingsForConnection };

export interface SimulatorSession {
  readonly running: RunningSimulator;
  /** App settings pointing the product at the simulator (service-account tokens by env reference). */
  readonly env: Record<string, string>;
  readonly endpoints: { readonly armEndpoint: string; readonly caPem: string; readonly armToken: string };
  /** The runner's clock: simulated time; a due durable timer moves the world forward to it. */
  readonly clock: Clock;
  stop(): Promise<void>;
}

export interface SimulatorSessionOptions {
  /** A scenario file, or scenario data (tests vary the sample). */
  readonly scenarioPath: string | Record<string, unknown>;
  readonly timeFactor?: number;
  /**
   * `manual`: simulated time moves only when the runner waits on a durable timer, so simulated figures
   * do not depend on how fast the machine is (benchmarks). Default `scaled` (× timeFactor).
   */
  readonly clock?: 'manual' | 'scaled';
  /** Enforce infra/ permissions (default true). */
  readonly leastPrivilege?: boolean;
  /** Other permission files than infra/'s (tests remove one rule at a time). */
  readonly armActionsFile?: string;
  readonly rbacDir?: string;
}

/** Default speed: a refresh (≈20 simulated minutes) takes seconds of wall time. */
const DEFAULT_TIME_FACTOR = 200;
/** Simulated seconds a manual-clock world runs before the session is handed out. */
const WORLD_SETTLE_SECONDS = 60;

export async function startSimulatorSession(options: SimulatorSessionOptions): Promise<SimulatorSession> {
  const outDir = await mkdtemp(join(tmpdir(), 'vmss-prototype-sim-'));
  let running: RunningSimulator;
  try {
    running = await startSimulator({
      scenario: options.scenarioPath,
      outDir,
      clock: options.clock ?? 'scaled',
      ...(options.clock === 'manual' ? { clientPacedPolls: true } : {}),
      timeFactor: options.timeFactor ?? DEFAULT_TIME_FACTOR,
      ...(options.leastPrivilege === false
        ? {}
        : {
            armActionsFile: options.armActionsFile ?? ARM_ACTIONS_FILE,
            rbacDir: options.rbacDir ?? RBAC_DIR,
          }),
    });
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
  try {
    await applyProductManifests(running);
  } catch (error) {
    await running.stop();
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
  // Manual clock: let the world settle (controllers create and start the scenario's pods) as it
  // does within the first wall milliseconds of a scaled clock.
  if (options.clock === 'manual') running.clock.advanceBy(WORLD_SETTLE_SECONDS);
  const env = settingsFor(running);
  const clock: Clock = {
    virtual: true,
    now: () => running.clock.nowMs(),
    sleepUntil(epochMs: number): Promise<void> {
      if (epochMs > running.clock.nowMs()) running.clock.advanceTo(epochMs);
      return Promise.resolve();
    },
  };
  return {
    running,
    env,
    endpoints: { armEndpoint: running.armEndpoint, caPem: running.caPem, armToken: SIM_ARM_TOKEN },
    clock,
    async stop() {
      await running.stop();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** One app-settings environment for every simulated cluster: pools discovered (`all`), defaults elsewhere. */
function settingsFor(running: RunningSimulator): Record<string, string> {
  return settingsForConnection(connectionOf(running));
}

/**
 * What an operator does once per cluster (`kubectl apply -k infra/kubernetes`): creates the product's
 * namespace, service account and token Secret in every simulated cluster. RBAC objects are not stored:
 * the simulator enforces them directly from the same files.
 */
async function applyProductManifests(running: RunningSimulator): Promise<void> {
  const files = (await readdir(RBAC_DIR)).filter(
    (name) => /\.ya?ml$/.test(name) && !name.startsWith('kustomization'),
  );
  const objects: KubeObject[] = [];
  for (const file of files.sort()) {
    for (const document of parseAllDocuments(await readFile(join(RBAC_DIR, file), 'utf8'))) {
      const object = document.toJS() as KubeObject | null;
      if (object === null) continue;
      if (['Namespace', 'ServiceAccount', 'Secret'].includes(object.kind)) objects.push(object);
    }
  }
  // Namespaces first: the others live in them.
  objects.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
  for (const handle of running.world.clusters.values()) {
    const store = handle.world.store;
    for (const object of objects) {
      const resource =
        object.kind === 'Namespace'
          ? 'namespaces'
          : object.kind === 'ServiceAccount'
            ? 'serviceaccounts'
            : 'secrets';
      if (store.get(resource, object.metadata.namespace, object.metadata.name) === undefined) {
        store.create(resource, structuredClone(object));
      }
    }
  }
}
