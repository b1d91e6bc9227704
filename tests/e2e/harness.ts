/**
 * End-to-end harness: an in-process simulator (sample scenario, optionally changed), the product
 * composed against it with least privilege, and the local durable runner driving the real
 * orchestrators with the simulator's clock.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { parse as parseYaml } from 'yaml';

import type { OrchestrationStatus, RunnerOptions } from '../../cli/runner/index.js';
import { createDurableRunner, createMemoryStore, type DurableRunner } from '../../cli/runner/index.js';
import { SAMPLE_SCENARIO } from '../../cli/session.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { startSimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import type { Composition, CompositionOptions } from '../../shared/composition-root.js';
import { compose } from '../../shared/composition-root.js';
import { skipSdkRetryWaits } from './sdk-waits.js';

export type ScenarioData = Record<string, unknown> & {
  region: { zoneRedundantStorage: boolean };
  clusters: (Record<string, unknown> & {
    workloads: Record<string, unknown>[];
    scaleSets: Record<string, unknown>[];
  })[];
};

export type ClusterSettingsData = Record<string, unknown> & {
  capture: Record<string, unknown>;
  gallery?: Record<string, unknown>;
  history?: number;
  selection?: Record<string, unknown>;
};

export interface HarnessOptions {
  /** Changes the sample scenario before the world is built. */
  readonly scenario?: (scenario: ScenarioData) => void;
  /** Changes the first cluster's settings (VMSSP_CLUSTERS[0]). */
  readonly settings?: (cluster: ClusterSettingsData) => void;
  readonly leastPrivilege?: boolean;
  /**
   * `manual`: simulated time moves only on durable timers (deterministic figures); the Azure SDK's
   * retry waits then cost no wall time either (sdk-waits.ts).
   */
  readonly clock?: 'manual' | 'scaled';
  /** Simulated seconds per wall second of the scaled clock (default 200). */
  readonly timeFactor?: number;
  readonly armActionsFile?: string;
  readonly rbacDir?: string;
  /** App settings added to the simulator's (e.g. VMSSP_EVENTS_TOPIC_ENDPOINT). */
  readonly env?: Readonly<Record<string, string>>;
  /** Composition options beyond the simulator's (run events' transport, the meter provider). */
  readonly compose?: Pick<CompositionOptions, 'events' | 'meterProvider'>;
  /** Every history event the runner persisted (the bench's ARM trace names activities from them). */
  readonly onEvent?: RunnerOptions['onEvent'];
}

export interface Harness {
  readonly sim: SimulatorSession;
  readonly composition: Composition;
  readonly runner: DurableRunner;
  /** Every status the runner reported, in order. */
  readonly statuses: OrchestrationStatus[];
  run(name: string, input: unknown, instanceId: string): Promise<OrchestrationStatus>;
  stop(): Promise<void>;
}

export function sampleScenario(): ScenarioData {
  return parseYaml(readFileSync(SAMPLE_SCENARIO, 'utf8')) as ScenarioData;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const scenario = sampleScenario();
  options.scenario?.(scenario);
  const sim = await startSimulatorSession({
    scenarioPath: scenario,
    timeFactor: options.timeFactor ?? 200,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.leastPrivilege === false ? { leastPrivilege: false } : {}),
    ...(options.armActionsFile === undefined ? {} : { armActionsFile: options.armActionsFile }),
    ...(options.rbacDir === undefined ? {} : { rbacDir: options.rbacDir }),
  });
  const restoreWaits = options.clock === 'manual' ? skipSdkRetryWaits() : () => undefined;
  const stop = async (): Promise<void> => {
    try {
      await sim.stop();
    } finally {
      restoreWaits();
    }
  };
  try {
    const env = { ...sim.env, ...options.env };
    const clusters = JSON.parse(env['VMSSP_CLUSTERS'] ?? '[]') as ClusterSettingsData[];
    const first = clusters[0];
    if (first !== undefined) {
      // The tests of one pipeline step keep the world's nodes across refreshes: a passed canary stays
      // (`keep`). keep-size, the product's default, has tests of its own (canary, keep-size, retirement),
      // which set the promotion they test.
      first['promotion'] = { canary: { afterPass: 'keep' } };
      options.settings?.(first);
    }
    env['VMSSP_CLUSTERS'] = JSON.stringify(clusters);
    const composition = compose({
      env,
      simulator: sim.endpoints,
      now: () => new Date(sim.clock.now()),
      ...options.compose,
    });
    const statuses: OrchestrationStatus[] = [];
    const runner = createDurableRunner({
      ...durableRegistry(composition.dependencies),
      clock: sim.clock,
      store: createMemoryStore(),
      maxConcurrentActivities: 8,
      onStatus: (status) => statuses.push(status),
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    });
    return {
      sim,
      composition,
      runner,
      statuses,
      run: (name, input, instanceId) => runner.startOrchestration(name, input, instanceId),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export const POOL1 = 'k8s-pool1-12345678-vmss';
export const POOL2 = 'k8s-pool2-12345678-vmss';
export function nodeOf(pool: string, index: number): string {
  return `${pool}${index.toString(36).padStart(6, '0')}`;
}

/**
 * The world's identity model (`world.identity()`, sim/world/identity.ts) has nothing to say: no
 * duplicated machine-id, hostname or SSH host key among running VMs, and no finding (an inherited
 * cloud-init instance, waagent state or journal, a kubelet authenticating as another node, a take-over,
 * …). Every e2e test that creates nodes from an image ends with it.
 */
export function assertIdentityClean(harness: Pick<Harness, 'sim'>, context: string): void {
  const identity = harness.sim.running.world.identity();
  assert.deepEqual(identity.violations, [], `${context}: no duplicated machine-id, hostname or SSH host key`);
  assert.deepEqual(identity.findings, [], `${context}: no identity finding`);
}

/**
 * Adds one instance to `pool` from its current model (after a refresh: the new image) and lets it boot
 * and join; returns the instance's name and whether a node of that name registered and is Ready.
 */
export function scaleOutOne(harness: Harness, pool: string): { nodeName: string; joined: boolean } {
  const world = harness.sim.running.world;
  const cluster = world.cluster('prod').world;
  const scaleSetId = cluster.instanceOfNode(nodeOf(pool, 0))?.scaleSetId;
  assert.ok(scaleSetId, `${pool} has an instance 0`);
  const [clone] = world.compute.scaleOut(scaleSetId, 1);
  assert.ok(clone, `${pool} scaled out`);
  harness.sim.running.clock.advanceBy(
    world.latency.newNodeJoinFromPrototypeWithKubeadmJoinSeconds +
      world.latency.newNodeJoinFromPrototypeSeconds +
      world.latency.nodeBootSeconds +
      5,
  );
  const nodeName = clone.computerName.toLowerCase();
  const node = cluster.store.get('nodes', undefined, nodeName) as
    { status?: { conditions?: { type: string; status: string }[] } } | undefined;
  const joined =
    node?.status?.conditions?.some(
      (condition) => condition.type === 'Ready' && condition.status === 'True',
    ) === true;
  return { nodeName, joined };
}

/**
 * A scenario change that pins a one-replica Deployment to `node` behind a PodDisruptionBudget that never
 * allows a disruption: the node cannot be drained.
 */
export function withUndrainablePod(node: string): (scenario: ScenarioData) => void {
  return (scenario) => {
    scenario.clusters[0]?.workloads.push({
      kind: 'Deployment',
      namespace: 'default',
      name: 'singleton-db',
      replicas: 1,
      nodeSelector: { 'kubernetes.io/hostname': node },
      pdb: { minAvailable: 1 },
    });
  };
}

/**
 * A settings change that turns the canary on (5m soak, 20m deadline) with a check pod that runs `script`
 * under `sh -c` in a pinned busybox image, with `env` as its environment.
 */
export function withCheckPodCanary(
  script: string,
  env: readonly { readonly name: string; readonly value: string }[],
): (cluster: ClusterSettingsData) => void {
  return (cluster) => {
    cluster['promotion'] = {
      canary: {
        soak: '5m',
        deadline: '20m',
        checkPod: {
          image: `registry.k8s.io/e2e-test-images/busybox:1.36.1-1@sha256:${'a'.repeat(64)}`,
          command: ['sh', '-c', script],
          env,
          timeout: '5m',
        },
      },
    };
  };
}

/** A bootstrap token the kubeadm pool's customData joins with (kubeadm's `[a-z0-9]{6}.[a-z0-9]{16}`). */
export const KUBEADM_TOKEN = 'k8sjn1.q4w7e2r9t6y3u8i5';

/**
 * A scenario change that makes `pool` a self-assembled kubeadm pool: its nodes are kubeadm's, its
 * customData runs `kubeadm join` with KUBEADM_TOKEN, which the cluster holds for 30 days.
 */
export function withKubeadmPool(pool: string): (scenario: ScenarioData) => void {
  return (scenario) => {
    const cluster = scenario.clusters[0];
    if (cluster === undefined) throw new Error('the scenario has no cluster');
    cluster['kubeadm'] = { tokens: [{ token: KUBEADM_TOKEN, ttl: '720h' }] };
    const scaleSet = cluster.scaleSets.find((entry) => entry['name'] === pool);
    if (scaleSet === undefined) throw new Error(`the scenario has no scale set ${pool}`);
    scaleSet['bootstrapFlavour'] = 'kubeadm';
    scaleSet['customData'] =
      '#cloud-config\nruncmd:\n' +
      `  - kubeadm join 10.0.0.4:6443 --token ${KUBEADM_TOKEN} --discovery-token-ca-cert-hash sha256:${'4e'.repeat(32)}\n`;
  };
}

/**
 * Cluster API's bootstrap data for a worker (CABPK, cluster-api bootstrap/kubeadm/pkg/cloudinit/node.go):
 * the JoinConfiguration written by cloud-init's write_files, then `kubeadm join --config` in runcmd.
 */
export function capiJoinData(token: string): string {
  return [
    '## template: jinja',
    '#cloud-config',
    'write_files:',
    '-   path: /run/kubeadm/kubeadm-join-config.yaml',
    '    owner: root:root',
    "    permissions: '0640'",
    '    content: |',
    '      ---',
    '      apiVersion: kubeadm.k8s.io/v1beta3',
    '      kind: JoinConfiguration',
    '      discovery:',
    '        bootstrapToken:',
    '          apiServerEndpoint: 10.0.0.4:6443',
    `          token: ${token}`,
    '          caCertHashes:',
    `          - sha256:${'4e'.repeat(32)}`,
    'runcmd:',
    '  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete',
    '',
  ].join('\n');
}

/** The simulated Cluster API management cluster withCapzPool adds, and the MachinePools' namespace. */
export const CAPZ_MANAGEMENT = { cluster: 'mgmt', namespace: 'default' } as const;

/**
 * A scenario change that makes `pool` a CAPZ MachinePool pool of a kubeadm cluster (withKubeadmPool):
 * its customData is Cluster API's (`kubeadm join --config`, capiJoinData), its scale set carries CAPZ's
 * owner tag for the cluster, and a management cluster `mgmt` serves its
 * MachinePool and AzureMachinePool, reconciled like CAPZ does (sim/README.md). The simulator's settings
 * give the cluster `capz` (rollout refused by default).
 */
export function withCapzPool(
  pool: string,
  strategy: Record<string, unknown> = { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' },
): (scenario: ScenarioData) => void {
  return (scenario) => {
    withKubeadmPool(pool)(scenario);
    const cluster = scenario.clusters[0];
    const scaleSet = cluster?.scaleSets.find((entry) => entry['name'] === pool);
    if (cluster === undefined || scaleSet === undefined)
      throw new Error(`the scenario has no scale set ${pool}`);
    const clusterName = String(cluster['name']);
    scaleSet['tags'] = {
      ...(scaleSet['tags'] as Record<string, string> | undefined),
      [`sigs.k8s.io_cluster-api-provider-azure_cluster_${clusterName}`]: 'owned',
      'sigs.k8s.io_cluster-api-provider-azure_role': 'node',
    };
    scaleSet['machinePool'] = { strategy };
    scaleSet['customData'] = capiJoinData(KUBEADM_TOKEN);
    cluster['managedBy'] = { managementCluster: CAPZ_MANAGEMENT.cluster };
    scenario.clusters.push({
      name: CAPZ_MANAGEMENT.cluster,
      resourceGroup: 'rg-capz-mgmt',
      clusterApi: { namespace: CAPZ_MANAGEMENT.namespace, syncPeriod: '10m' },
    } as unknown as (typeof scenario.clusters)[number]);
  };
}
