/**
 * In-process simulator API: builds a world from a scenario and serves it over the wire — HTTPS Azure
 * Resource Manager (with the `/_sim/` admin API), HTTPS and HTTP Kubernetes API per cluster — and
 * writes a kubeconfig and the CA certificate for clients.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { stringify as stringifyYaml } from 'yaml';

import { allowAllAuthorizer, createActionListAuthorizer } from './arm/action-authorizer.js';
import { createArmHandler } from './arm/arm-handler.js';
import { messageOf } from './errors.js';
import { createKubeHandler, type KubeHandler } from './kube/handler.js';
import {
  ALLOW_ALL,
  createRbacAuthorizer,
  createTokenAuthenticator,
  type ReviewingAuthorizer,
  serviceAccountUser,
} from './kube/rbac.js';
import { ADMIN_PREFIX, createAdminHandler } from './world/admin.js';
import type { ClockMode, WorldClock } from './world/clock.js';
import type { WorldFaults } from './world/faults.js';
import type { WorldRequestLog } from './world/request-log.js';
import { loadScenarioFile, parseScenario, Scenario } from './world/scenario.js';
import { processSimTls, writeCaPem } from './world/tls.js';
import { createWorld, type World } from './world/world.js';

/** The sample scenario shipped with the simulator (resolved from dist/sim/ or sim/). */
export const SAMPLE_SCENARIO = fileURLToPath(new URL('../../sim/scenarios/sample.yaml', import.meta.url));
/** A self-assembled kubeadm cluster (`npm run sim -- --scenario sim/scenarios/kubeadm.yaml`). */
export const KUBEADM_SCENARIO = fileURLToPath(new URL('../../sim/scenarios/kubeadm.yaml', import.meta.url));
/** A Cluster API management cluster and a CAPZ-managed kubeadm workload cluster (`sim/scenarios/capz.yaml`). */
export const CAPZ_SCENARIO = fileURLToPath(new URL('../../sim/scenarios/capz.yaml', import.meta.url));

export interface SimulatorPorts {
  arm?: number;
  kubeHttps?: number;
  kubeHttp?: number;
}

export interface StartSimulatorOptions {
  /** A parsed scenario, raw scenario data (validated), or a YAML file path. */
  scenario: Scenario | Record<string, unknown> | string;
  /** Where `kubeconfig` and `ca.pem` are written (created if missing). */
  outDir: string;
  /** Overrides the scenario's time factor (scaled mode). */
  timeFactor?: number;
  /** 'scaled' (default): simulated time follows the wall clock × time factor. 'manual': only `/_sim/time/advance` and `clock.advance*` move it. */
  clock?: ClockMode;
  /**
   * Manual clock only: an ARM poll of an operation in progress moves simulated time by the wait a real
   * ARM would have asked for (see ArmHandlerOptions.advanceClock). For benchmarks whose client blocks
   * inside a call (the SDK's `…AndWait`).
   */
  clientPacedPolls?: boolean;
  /** Simulated start when the scenario has none; defaults to the wall clock now. */
  startMs?: number;
  /** JSON list of allowed Microsoft.Compute actions (infra/azure/compute-actions.json); absent = allow all. */
  armActionsFile?: string;
  /**
   * Folder of RBAC manifests (infra/kubernetes/) the service-account token is authorized against; absent =
   * allow all. A Cluster API management cluster's token is authorized against its `management/` subfolder
   * when that exists, else allowed everything.
   */
  rbacDir?: string;
  /** Ports for the first cluster's servers and ARM; absent or 0 = ephemeral. */
  ports?: SimulatorPorts;
}

export interface SimulatedClusterEndpoints {
  name: string;
  kubeHttpsUrl: string;
  kubeHttpUrl: string;
  tokens: { admin: string; serviceAccount: string };
  /** Context names in the kubeconfig. */
  contexts: { admin: string; serviceAccount: string };
}

export interface RunningSimulator {
  armEndpoint: string;
  kubeHttpsUrl: string;
  kubeHttpUrl: string;
  kubeconfigPath: string;
  caPath: string;
  caPem: string;
  /** The first cluster's tokens; the admin token also opens `/_sim/` on the ARM endpoint. */
  tokens: { admin: string; serviceAccount: string };
  subscriptionId: string;
  /** Every cluster's endpoints, the first one first. */
  clusters: SimulatedClusterEndpoints[];
  world: World;
  clock: WorldClock;
  faults: WorldFaults;
  log: WorldRequestLog;
  stop(): Promise<void>;
}

async function resolveScenario(input: StartSimulatorOptions['scenario']): Promise<Scenario> {
  if (typeof input === 'string') return loadScenarioFile(input);
  return parseScenario(input, '(options.scenario)');
}

async function rbacFiles(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    throw new Error(`reading RBAC manifests in ${dir}: ${messageOf(error)}`, { cause: error });
  }
  const files = entries
    .filter((name) => /\.ya?ml$/i.test(name) && !/^kustomization\.ya?ml$/i.test(name))
    .sort();
  if (files.length === 0) throw new Error(`reading RBAC manifests in ${dir}: no .yaml files`);
  return files.map((name) => join(dir, name));
}

/** The management cluster's authorizer: the manifests in `<rbacDir>/management/` when the folder exists. */
async function managementAuthorizer(rbacDir: string): Promise<ReviewingAuthorizer> {
  const dir = join(rbacDir, 'management');
  try {
    await readdir(dir);
  } catch {
    return ALLOW_ALL;
  }
  return createRbacAuthorizer(await rbacFiles(dir));
}

function listen(server: Server, port: number | undefined): Promise<number> {
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolveListen((server.address() as AddressInfo).port);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    server.closeAllConnections();
  });
}

/**
 * How long a server keeps an idle keep-alive connection: the API server's 90 s (its http.Server
 * `IdleTimeout`, kubernetes staging/src/k8s.io/apiserver/pkg/server/secure_serving.go, "matches
 * http.DefaultTransport keep-alive timeout"), not Node's 5 s. With 5 s a client that reuses a socket
 * after 5 s of a busy machine meets the server closing it (ECONNRESET), and a retry moves the figures.
 * ARM's front door is given the same figure (not confirmed: sim/README.md).
 */
const IDLE_CONNECTION_MS = 90_000;

function keepIdleConnections(server: Server): void {
  server.keepAliveTimeout = IDLE_CONNECTION_MS;
  // Node closes a connection whose next request's headers take longer than this: above the idle time.
  server.headersTimeout = IDLE_CONNECTION_MS + 1_000;
}

export async function startSimulator(options: StartSimulatorOptions): Promise<RunningSimulator> {
  const scenario = await resolveScenario(options.scenario);
  const outDir = resolve(options.outDir);
  await mkdir(outDir, { recursive: true });
  // The one wall-clock read: where simulated time starts when the scenario does not say.
  const wallNow = Date.now();
  const world = createWorld({
    scenario,
    clockMode: options.clock ?? 'scaled',
    // At a whole second: the API server's timestamps are whole seconds, so a client that times a wait from
    // one (the power-off wait dates the guest's end from the prep pod's `finishedAt`) would otherwise wait
    // a different number of simulated milliseconds from run to run, as the wall clock's millisecond moved.
    startMs: options.startMs ?? Math.floor(wallNow / 1000) * 1000,
    ...(options.timeFactor === undefined ? {} : { timeFactor: options.timeFactor }),
    kubeControllers: 'external',
  });
  const servers: Server[] = [];
  const kubeHandlers: KubeHandler[] = [];
  try {
    const tls = processSimTls(new Date(wallNow));
    const caPath = await writeCaPem(outDir, tls);

    const armAuthorizer = options.armActionsFile
      ? createActionListAuthorizer(options.armActionsFile)
      : allowAllAuthorizer();
    const timeFactor = world.clock.timeFactor;
    const armHandler = createArmHandler({
      state: world.compute,
      clock: world.clock,
      scheduler: world.clock,
      faults: world.faults,
      log: world.log,
      authorizer: armAuthorizer,
      latency: world.latency,
      // Poll again when the operation should be done in wall time (manual mode: soon, time moves by request).
      retryAfterSeconds: (remaining: number) =>
        world.clock.mode === 'manual' ? 1 : Math.min(30, Math.max(1, Math.ceil(remaining / timeFactor))),
      throttle: world.throttle,
      ...(world.clock.mode === 'manual' && options.clientPacedPolls === true
        ? { advanceClock: (seconds: number) => world.clock.advanceBy(seconds) }
        : {}),
      marketplaceImages: world.scenario.region.marketplaceImages,
      resourceGroups: () => world.resourceGroups(),
    });
    const adminTokens = [...world.clusters.values()].map((handle) => handle.world.spec.tokens.admin);
    const adminHandler = createAdminHandler({ world, adminTokens });
    const armServer = createHttpsServer(
      { key: tls.keyPem, cert: tls.certPem },
      (request: IncomingMessage, response: ServerResponse) => {
        const path = request.url ?? '/';
        if (path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`)) adminHandler(request, response);
        else armHandler(request, response);
      },
    );
    keepIdleConnections(armServer);
    servers.push(armServer);
    const armPort = await listen(armServer, options.ports?.arm);

    const rbac = options.rbacDir ? createRbacAuthorizer(await rbacFiles(options.rbacDir)) : ALLOW_ALL;
    const managementRbac = options.rbacDir ? await managementAuthorizer(options.rbacDir) : ALLOW_ALL;
    const endpoints: SimulatedClusterEndpoints[] = [];
    for (const [index, handle] of [...world.clusters.values()].entries()) {
      const spec = handle.world.spec;
      const authenticator = createTokenAuthenticator({
        [spec.tokens.admin]: { name: 'sim-admin', groups: ['system:masters'] },
        [spec.tokens.serviceAccount]: serviceAccountUser(
          spec.serviceAccount.namespace,
          spec.serviceAccount.name,
        ),
      });
      const kubeHandler = createKubeHandler({
        store: handle.world.store,
        clock: world.clock,
        scheduler: world.clock,
        faults: world.faults,
        log: world.log,
        authenticator,
        authorizer: spec.clusterApi ? managementRbac : rbac,
        latency: world.latency,
        kubernetesVersion: handle.world.spec.kubernetesVersion,
        clusterApi: spec.clusterApi !== undefined,
        ...(spec.clusterApi ? { clusterApiVersions: spec.clusterApi.servedVersions } : {}),
      });
      kubeHandlers.push(kubeHandler);
      handle.world.attachControllers(kubeHandler.controllers);
      const httpsServer = createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, kubeHandler);
      const httpServer = createHttpServer(kubeHandler);
      keepIdleConnections(httpsServer);
      keepIdleConnections(httpServer);
      servers.push(httpsServer, httpServer);
      const first = index === 0;
      const httpsPort = await listen(httpsServer, first ? options.ports?.kubeHttps : undefined);
      const httpPort = await listen(httpServer, first ? options.ports?.kubeHttp : undefined);
      endpoints.push({
        name: spec.name,
        kubeHttpsUrl: `https://127.0.0.1:${httpsPort}`,
        kubeHttpUrl: `http://127.0.0.1:${httpPort}`,
        tokens: { admin: spec.tokens.admin, serviceAccount: spec.tokens.serviceAccount },
        contexts: first
          ? { admin: 'sim-admin', serviceAccount: 'vmss-prototype' }
          : { admin: `${spec.name}-sim-admin`, serviceAccount: `${spec.name}-vmss-prototype` },
      });
    }

    const kubeconfigPath = join(outDir, 'kubeconfig');
    await writeFile(kubeconfigPath, renderKubeconfig(endpoints, world, tls.caPem), {
      encoding: 'utf8',
      mode: 0o600,
    });
    const primary = endpoints[0];
    if (!primary) throw new Error('starting simulator: the scenario has no cluster');

    let stopped = false;
    return {
      armEndpoint: `https://127.0.0.1:${armPort}`,
      kubeHttpsUrl: primary.kubeHttpsUrl,
      kubeHttpUrl: primary.kubeHttpUrl,
      kubeconfigPath,
      caPath,
      caPem: tls.caPem,
      tokens: primary.tokens,
      subscriptionId: scenario.subscriptionId,
      clusters: endpoints,
      world,
      clock: world.clock,
      faults: world.faults,
      log: world.log,
      async stop() {
        if (stopped) return;
        stopped = true;
        for (const handler of kubeHandlers) handler.close();
        await Promise.all(servers.map(close));
        world.stop();
      },
    };
  } catch (error) {
    for (const handler of kubeHandlers) handler.close();
    await Promise.all(servers.map(close));
    world.stop();
    throw error;
  }
}

function renderKubeconfig(
  endpoints: readonly SimulatedClusterEndpoints[],
  world: World,
  caPem: string,
): string {
  const caData = Buffer.from(caPem).toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: endpoints.map((endpoint) => ({
      name: `sim-${endpoint.name}`,
      cluster: { server: endpoint.kubeHttpsUrl, 'certificate-authority-data': caData },
    })),
    users: endpoints.flatMap((endpoint) => [
      { name: endpoint.contexts.admin, user: { token: endpoint.tokens.admin } },
      { name: endpoint.contexts.serviceAccount, user: { token: endpoint.tokens.serviceAccount } },
    ]),
    contexts: endpoints.flatMap((endpoint) => {
      const account = world.cluster(endpoint.name).world.spec.serviceAccount;
      return [
        {
          name: endpoint.contexts.admin,
          context: { cluster: `sim-${endpoint.name}`, user: endpoint.contexts.admin },
        },
        {
          name: endpoint.contexts.serviceAccount,
          context: {
            cluster: `sim-${endpoint.name}`,
            user: endpoint.contexts.serviceAccount,
            namespace: account.namespace,
          },
        },
      ];
    }),
    'current-context': endpoints[0]?.contexts.admin ?? 'sim-admin',
  };
  return stringifyYaml(config);
}

export type { ClusterHandle, World } from './world/world.js';
export { Scenario };
