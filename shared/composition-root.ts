/**
 * The composition root (docs/conventions.md#ports-and-adapters): validated settings + identity → ports → the
 * dependencies the activities and use cases run with. The only place that reads `process.env` (through
 * loadSettings) and that knows which adapter implements which port.
 */
import { hostname } from 'node:os';

import type { MeterProvider } from '@opentelemetry/api';
import { metrics } from '@opentelemetry/api';

import { armCompute } from './adapters/azure/arm-compute.js';
import { ArmPermissions } from './adapters/azure/arm-permissions.js';
import type { AzureCredential } from './adapters/azure/credentials.js';
import {
  createAzureCredential,
  createStaticCredential,
  entraTokenProvider,
} from './adapters/azure/credentials.js';
import type { KeyVaultSecretReader } from './adapters/azure/key-vault-secrets.js';
import { clientNodeClusterApi } from './adapters/cluster-api/client-node-cluster-api.js';
import { EventGridRunEventPublisher } from './adapters/eventgrid/run-event-publisher.js';
import { clientNodeKubernetes } from './adapters/kubernetes/client-node-kubernetes.js';
import { startAzureMonitor } from './adapters/opentelemetry/metrics.js';
import { hostQueueConnection } from './adapters/storage-queue/host-connection.js';
import { rememberAccessReviews } from './application/access-review-memo.js';
import type {
  ClusterConfiguration,
  ClusterHandle,
  ConfiguredPool,
  PoolConfiguration,
  PoolRunSettings,
  RefreshDependencies,
} from './application/refresh-dependencies.js';
import { RunMetrics } from './application/run-metrics.js';
import type { SecretReference } from './config/secret-reference.js';
import { readEnvSecret } from './config/secret-reference.js';
import type { CaCertificate, ClusterSettings, Settings } from './config/settings.js';
import {
  capzRolloutFor,
  loadSettings,
  promotionPolicyFor,
  retirementFor,
  selectionPolicyFor,
} from './config/settings.js';
import type { SimulatorSettings } from './config/simulator-settings.js';
import { NotFoundError, TerminalError } from './domain/errors.js';
import { imageDefinitionNameFor } from './domain/gallery-naming.js';
import { definedOnly } from './domain/optional.js';
import type { RunnerIdentity } from './domain/ownership.js';
import type { ArmPermissionsReader } from './ports/arm-permissions.js';
import type { RebootNoticeSender } from './ports/reboot-notice-queue.js';
import type { RunEventPublisher } from './ports/run-events.js';

/** How long a service-account token read from Key Vault or settings is reused before it is read again. */
const TOKEN_CACHE_MS = 5 * 60_000;

export interface CompositionOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Simulator only: its ARM endpoint, the CA bundle that signs its certificates, and the bearer token
   * it accepts. Default: the VMSSP_SIMULATOR* app settings (`Settings.simulator`, docs/local-host.md),
   * which is how a Functions host reaches `npm run sim`; the CLI's `--sim` passes its own. Real
   * deployments have neither and use the managed identity against Azure.
   */
  readonly simulator?: SimulatorSettings;
  readonly now?: () => Date;
  /**
   * Who runs, for the pool lease's holder identity. Default: the function app on this site
   * (`WEBSITE_SITE_NAME`, set by App Service) or this machine's host name.
   */
  readonly runner?: RunnerIdentity;
  /**
   * How run events reach the topic in VMSSP_EVENTS_TOPIC_ENDPOINT, when it is set. Default: the app's
   * credential and the system CAs. Tests point the topic at a local receiver and trust its certificate.
   */
  readonly events?: {
    readonly credential?: AzureCredential;
    readonly caPem?: string;
    readonly maxAttempts?: number;
    readonly firstDelayMs?: number;
    readonly log?: (message: string, details: Readonly<Record<string, unknown>>) => void;
  };
  /**
   * Where metrics go. Default: the global OpenTelemetry meter provider as it is when compose runs (the
   * function app registers Azure Monitor's before; without one, the API's no-op provider drops them).
   */
  readonly meterProvider?: MeterProvider;
}

/** The instrumentation scope of every metric of the product. */
export const METER_NAME = 'vmss-prototype';

export interface Composition {
  readonly settings: Settings;
  readonly dependencies: RefreshDependencies;
  /**
   * The reboot-notice queue in the host's own storage account (`AzureWebJobsStorage`, or its
   * identity-based `__accountName`/`__queueServiceUri` form, the connection the queue trigger listens on).
   * Built on first use; throws when the host has no storage configured.
   */
  rebootQueue(): RebootNoticeSender;
  /** The calling identity's permissions per resource group (`vmss-prototype doctor`). */
  readonly armPermissions: ArmPermissionsReader;
  /** Reads a secret reference (Key Vault or environment): for checks that a secret is readable. */
  readSecret(reference: SecretReference): Promise<string>;
  /** The run event publisher, when a topic is configured: a short-lived runner flushes it before exit. */
  readonly events?: RunEventPublisher;
}

export function compose(options: CompositionOptions): Composition {
  const settings = loadSettings(options.env);
  const simulator = options.simulator ?? settings.simulator;
  const credential: AzureCredential =
    simulator === undefined
      ? createAzureCredential(settings.azureClientId)
      : createStaticCredential(simulator.armToken);
  // The Key Vault and storage SDKs load on first use: most commands and runs never need them.
  let vault: Promise<KeyVaultSecretReader> | undefined;
  const readSecret = async (reference: SecretReference): Promise<string> => {
    if (reference.source === 'env') return readEnvSecret(options.env, reference.name);
    vault ??= import('./adapters/azure/key-vault-secrets.js').then(
      ({ KeyVaultSecretReader }) => new KeyVaultSecretReader(credential),
    );
    return (await vault).read(reference.vaultUrl, reference.secretName, reference.version);
  };

  const armOptions = {
    credential,
    subscriptionIds: [...new Set(settings.clusters.map((cluster) => cluster.subscriptionId))],
    ...(simulator === undefined ? {} : { endpoint: simulator.armEndpoint, ca: simulator.caPem }),
  };
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(METER_NAME);
  const compute = armCompute({ ...armOptions, meter });
  const armPermissions = new ArmPermissions(armOptions);

  const events =
    settings.eventsTopicEndpoint === undefined
      ? undefined
      : new EventGridRunEventPublisher({
          endpoint: settings.eventsTopicEndpoint,
          credential: options.events?.credential ?? credential,
          ...definedOnly({
            ca: options.events?.caPem,
            maxAttempts: options.events?.maxAttempts,
            firstDelayMs: options.events?.firstDelayMs,
            log: options.events?.log,
          }),
        });
  const now = options.now ?? (() => new Date());

  const handles = new Map<string, Promise<ClusterHandle>>();
  const dependencies: RefreshDependencies = {
    clusterNames: settings.clusters.map((cluster) => cluster.name),
    now,
    ...definedOnly({ events }),
    metrics: new RunMetrics(meter, now),
    // The simulator's ARM token is a credential like any other: scrubbed wherever these are.
    sensitiveValues: [
      ...checkPodEnvValues(settings),
      ...(simulator === undefined ? [] : [simulator.armToken]),
    ],
    runner: options.runner ?? { kind: 'function-app', host: options.env['WEBSITE_SITE_NAME'] ?? hostname() },
    ...definedOnly({ waitScale: settings.simulator?.waitScale }),
    cluster(name: string): Promise<ClusterHandle> {
      const existing = handles.get(name);
      if (existing !== undefined) return existing;
      const cluster = settings.clusters.find((candidate) => candidate.name === name);
      if (cluster === undefined) {
        return Promise.reject(
          new NotFoundError(
            'ClusterNotConfigured',
            `finding cluster ${name}: it is not configured (configured: ${settings.clusters.map((c) => c.name).join(', ')})`,
          ),
        );
      }
      const connection = async (apiServer: ClusterSettings['apiServer'], label: string) => ({
        server: apiServer.url,
        caPem: await resolveCa(apiServer.caCertificate, readSecret),
        token:
          apiServer.auth.kind === 'entra-id'
            ? entraTokenProvider(credential, apiServer.auth.scope)
            : cachedSecret(apiServer.auth.token, readSecret),
        cluster: label,
        ...definedOnly({ tlsServerName: apiServer.tlsServerName }),
      });
      const handle = (async (): Promise<ClusterHandle> => {
        const kubernetes = clientNodeKubernetes(await connection(cluster.apiServer, cluster.name));
        // The preflight's access reviews answer the planning's a moment later (access-review-memo.ts).
        const kube = { ...kubernetes, server: rememberAccessReviews(kubernetes.server, now) };
        const configuration = clusterConfiguration(settings, cluster);
        if (cluster.capz === undefined) return { configuration, compute, kube };
        // The management cluster's secrets are read and cached like the workload cluster's.
        const management = clientNodeClusterApi(
          await connection(cluster.capz.managementCluster, `${cluster.name} (management cluster)`),
        );
        return {
          configuration,
          compute,
          kube,
          clusterApi: { machinePools: management.machinePools },
          managementServer: rememberAccessReviews(management.server, now),
        };
      })();
      // A failed resolution (vault down) must not be cached forever: the next activity tries again.
      handle.catch(() => handles.delete(name));
      handles.set(name, handle);
      return handle;
    },
  };
  let queue: RebootNoticeSender | undefined;
  const rebootQueue = (): RebootNoticeSender => {
    if (queue !== undefined) return queue;
    const env = options.env;
    const connection = hostQueueConnection(env, () =>
      createAzureCredential(env['AzureWebJobsStorage__clientId'] ?? settings.azureClientId),
    );
    if (connection === undefined) {
      throw new TerminalError(
        'RebootQueueNotConfigured',
        'configuring the reboot queue: AzureWebJobsStorage (or AzureWebJobsStorage__accountName) is not set',
      );
    }
    const sender = import('./adapters/storage-queue/reboot-queue.js').then(
      ({ StorageRebootQueue }) => new StorageRebootQueue(connection, settings.rebootQueue),
    );
    // A failed load is not kept: the next send tries again.
    sender.catch(() => (queue = undefined));
    queue = { send: async (notice) => (await sender).send(notice) };
    return queue;
  };
  return {
    settings,
    dependencies,
    rebootQueue,
    armPermissions,
    readSecret,
    ...definedOnly({ events }),
  };
}

/**
 * Starts the function app's telemetry before anything is composed (functions/index.ts awaits it): the
 * Azure Monitor distro when `APPLICATIONINSIGHTS_CONNECTION_STRING` is set, nothing otherwise.
 */
export async function startWorkerTelemetry(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<boolean> {
  const authentication = env['APPLICATIONINSIGHTS_AUTHENTICATION_STRING'] ?? '';
  const clientId = /(?:^|;)\s*ClientId=([^;]+)/i.exec(authentication)?.[1]?.trim();
  const entra = /(?:^|;)\s*Authorization=AAD\s*(?:;|$)/i.test(authentication);
  return startAzureMonitor({
    connectionString: env['APPLICATIONINSIGHTS_CONNECTION_STRING'],
    ...(entra ? { credential: createAzureCredential(clientId ?? env['AZURE_CLIENT_ID']) } : {}),
  });
}

let worker: Composition | undefined;

/**
 * The function app's composition, built once per worker from the app settings (the one process.env read);
 * against the simulator when they carry VMSSP_SIMULATOR=true (docs/local-host.md).
 */
export function workerComposition(): Composition {
  worker ??= compose({ env: process.env });
  return worker;
}

async function resolveCa(
  certificate: CaCertificate,
  readSecret: (reference: SecretReference) => Promise<string>,
): Promise<string> {
  if ('pem' in certificate) return certificate.pem;
  return readSecret(certificate);
}

function cachedSecret(
  reference: SecretReference,
  readSecret: (reference: SecretReference) => Promise<string>,
): () => Promise<string> {
  let cached: { value: string; at: number } | undefined;
  return async () => {
    const now = Date.now();
    if (cached === undefined || now - cached.at > TOKEN_CACHE_MS) {
      cached = { value: (await readSecret(reference)).trim(), at: now };
    }
    return cached.value;
  };
}

/** The application's view of one cluster's settings. */
function clusterConfiguration(settings: Settings, cluster: ClusterSettings): ClusterConfiguration {
  const pools: 'all' | ConfiguredPool[] =
    cluster.pools === 'all'
      ? 'all'
      : cluster.pools.map((pool) => ({
          name: pool.name,
          scaleSet: {
            subscriptionId: cluster.subscriptionId,
            resourceGroup: pool.resourceGroup,
            name: pool.scaleSet,
          },
        }));
  return {
    name: cluster.name,
    subscriptionId: cluster.subscriptionId,
    resourceGroup: cluster.resourceGroup,
    maxParallelPools: settings.maxParallelPools,
    pools,
    ...(cluster.capz === undefined
      ? {}
      : {
          capz: { managementCluster: cluster.capz.managementCluster.url, namespace: cluster.capz.namespace },
        }),
    poolConfiguration(pool: ConfiguredPool): PoolConfiguration {
      const configured =
        cluster.pools === 'all' ? undefined : cluster.pools.find((p) => p.name === pool.name);
      const capture = cluster.capture;
      // Settings validation requires it unless Run Command prepares the disk; the type does not say so.
      if (capture.mode !== 'run-command' && capture.prepImage === undefined) {
        throw new TerminalError(
          'PrepImageMissing',
          `configuring pool ${pool.name} of cluster ${cluster.name}: capture.prepImage is not set`,
        );
      }
      const run: PoolRunSettings = {
        drainGracePeriodSeconds: capture.drainGracePeriod,
        drainTimeoutSeconds: capture.drainTimeout,
        captureMode: capture.mode,
        prepNamespace: capture.prepNamespace,
        ...definedOnly({ prepImage: capture.prepImage }),
        runCommandTimeoutSeconds: capture.runCommandTimeout,
        waitForSnapshotCompletion: capture.waitForSnapshotCompletion,
        keepExtensionTypes: cluster.capture.keepExtensions,
        history: cluster.history,
        storageAccountType: cluster.gallery.storageAccountType,
        extraRegions: cluster.gallery.targetRegions ?? [],
        pinVersion: cluster.gallery.pinVersion,
        // kubectl drain --delete-emptydir-data: node-local scratch data is expendable by definition.
        deleteEmptyDirData: true,
        // Unreplicated pods block the drain (kubectl's default): nothing would bring them back.
        forceUnreplicated: false,
        liveRootPartition: capture.live.rootPartition,
        liveMaxFreezeSeconds: capture.live.maxFreeze,
        ...promotionPolicyFor(cluster, pool.name),
        retirement: retirementFor(cluster, pool.name),
      };
      return {
        enabled: configured?.enabled ?? true,
        policy: selectionPolicyFor(cluster, pool.name),
        ...definedOnly({ bootstrapFlavour: configured?.bootstrapFlavour }),
        ...(cluster.capz === undefined
          ? {}
          : { capz: { namespace: cluster.capz.namespace, rollout: capzRolloutFor(cluster, pool.name) } }),
        run,
        gallery: {
          subscriptionId: cluster.subscriptionId,
          resourceGroup: cluster.gallery.resourceGroup,
          galleryName: cluster.gallery.name,
          imageDefinitionName: imageDefinitionNameFor(cluster.name, pool.name),
        },
      };
    },
  };
}

/** Every canary check pod's environment value, cluster-wide and per pool: redacted from what a check pod said and from run events. */
function checkPodEnvValues(settings: Settings): string[] {
  const values: string[] = [];
  for (const cluster of settings.clusters) {
    for (const entry of cluster.promotion.canary.checkPod?.env ?? []) values.push(entry.value);
    if (cluster.pools === 'all') continue;
    for (const pool of cluster.pools) {
      for (const entry of pool.promotion?.canary?.checkPod?.env ?? []) values.push(entry.value);
    }
  }
  return values;
}
