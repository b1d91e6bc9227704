/**
 * Node reads of one pool refresh on a 20 000-node cluster: the node-list pages the simulated
 * API server served during one refresh of one pool, with the canary on and the product's default
 * `canary.afterPass: keep-size` (one older node retired in the canary's place), beside the pages of one
 * listing of every node. The goal: at most two full listings' worth of pages per pool refresh, whatever
 * the cluster's size. Counted from the simulator's request log (one entry per request): deterministic on
 * the manual clock, so a test can bound it.
 *
 * The cluster is the sample scenario's, grown to 20 000 nodes by nodes of other pools written straight
 * into the simulated API server (no VM behind them: they only have to be listed). They run no DaemonSet
 * pods (the DaemonSets select Linux nodes, these say Windows) and are cordoned, so nothing is scheduled on
 * them and the refresh's own work is the sample's.
 */
import { PAGE_SIZE } from '../../shared/adapters/kubernetes/client-node-connection.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { KubeObject, KubeStore } from '../../sim/contracts.js';
import type { RunningSimulator } from '../../sim/index.js';
import { POOL1, type ScenarioData, startHarness } from '../e2e/harness.js';

export const NODE_READS_CLUSTER_NODES = 20_000;
const FILLER_POOLS = 40;
/** The filler nodes' pools (and scale sets, `k8s-<pool>-12345678-vmss`) start with this; ARM has none of them. */
export const FILLER_POOL_PREFIX = 'filler';

export interface NodeReadFigures {
  readonly clusterNodes: number;
  readonly pageSize: number;
  /** Pages of one listing of every node (ceil(nodes / page size)). */
  readonly pagesPerFullListing: number;
  /** Node-list requests (pages, selected or not) the API server served during the refresh. */
  readonly nodeListPagesPerPoolRefresh: number;
  /** Node GETs (by name) during the refresh. */
  readonly nodeGetsPerPoolRefresh: number;
  readonly outcome: string;
}

/** Every DaemonSet selects Linux nodes, so the filler nodes (Windows) get none of their pods. */
function linuxDaemonSets(scenario: ScenarioData): void {
  for (const cluster of scenario.clusters) {
    for (const workload of cluster.workloads) {
      if (workload['kind'] !== 'DaemonSet') continue;
      const selector = (workload['nodeSelector'] ?? {}) as Record<string, string>;
      workload['nodeSelector'] = { ...selector, 'kubernetes.io/os': 'linux' };
    }
  }
}

/** A node of another pool, shaped like `template` (a real node of the sample), under another name and VM. */
function fillerNode(template: KubeObject, index: number): KubeObject {
  const raw = structuredClone(template) as KubeObject & {
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
  };
  const pool = `${FILLER_POOL_PREFIX}${index % FILLER_POOLS}`;
  const scaleSet = `k8s-${pool}-12345678-vmss`;
  const name = `${scaleSet.replace(/-vmss$/, '')}-${index.toString(36).padStart(6, '0')}`;
  const providerTemplate = raw.spec?.['providerID'];
  const providerId = (typeof providerTemplate === 'string' ? providerTemplate : '').replace(
    /virtualMachineScaleSets\/[^/]+\/virtualMachines\/.*$/,
    `virtualMachineScaleSets/${scaleSet}/virtualMachines/${index}`,
  );
  const labels = { ...raw.metadata.labels };
  labels['agentpool'] = pool;
  labels['kubernetes.io/hostname'] = name;
  labels['kubernetes.io/os'] = 'windows';
  labels['beta.kubernetes.io/os'] = 'windows';
  return {
    ...raw,
    metadata: {
      name,
      labels,
      ...(raw.metadata.annotations === undefined ? {} : { annotations: { ...raw.metadata.annotations } }),
    },
    // Cordoned, with the taint the node lifecycle controller would add: nothing to change on 20 000 nodes.
    spec: {
      ...raw.spec,
      providerID: providerId,
      unschedulable: true,
      taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }],
    },
  };
}

/**
 * Makes every DaemonSet select Linux nodes (as `linuxDaemonSets` does in a scenario), so that the filler
 * nodes (Windows) get none of their pods: without it, each filler node would get a pod of every DaemonSet
 * (60 000 pods at 20 000 nodes) the simulator starts and keeps, which measures the simulator, not reads.
 */
function daemonSetsOnLinuxOnly(store: KubeStore): void {
  for (const daemonSet of store.list('daemonsets')) {
    const { namespace, name } = daemonSet.metadata;
    store.mutate('daemonsets', namespace, name, (target) => {
      const spec = (target.spec ?? {}) as { template?: { spec?: { nodeSelector?: Record<string, string> } } };
      const podSpec = spec.template?.spec;
      if (podSpec === undefined) return;
      podSpec.nodeSelector = { ...podSpec.nodeSelector, 'kubernetes.io/os': 'linux' };
    });
  }
}

/** Grows the simulator's `prod` cluster to `total` nodes. */
export function growCluster(running: RunningSimulator, total: number): number {
  const cluster = running.world.clusters.get('prod');
  if (cluster === undefined) throw new Error('bench: no cluster prod in the scenario');
  const store = cluster.world.store;
  daemonSetsOnLinuxOnly(store);
  const existing = store.list('nodes');
  const template = existing.find((node) => node.metadata.labels?.['kubernetes.azure.com/role'] === 'agent');
  if (template === undefined) throw new Error('bench: the sample cluster has no agent node to copy');
  for (let index = existing.length; index < total; index++)
    store.create('nodes', fillerNode(template, index));
  return store.list('nodes').length;
}

export async function measureNodeReads(total = NODE_READS_CLUSTER_NODES): Promise<NodeReadFigures> {
  const harness = await startHarness({
    clock: 'manual',
    scenario: linuxDaemonSets,
    settings: (cluster) => {
      // The product's default: the passed canary stays and one older node is retired in its place.
      const promotion = (cluster['promotion'] ?? {}) as { canary?: Record<string, unknown> };
      cluster['promotion'] = { ...promotion, canary: { ...promotion.canary, afterPass: 'keep-size' } };
    },
  });
  try {
    const clusterNodes = growCluster(harness.sim.running, total);
    const log = harness.sim.running.world.log;
    log.reset();
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL1, trigger: 'bench' },
      'bench-node-reads',
    );
    if (status.runtimeStatus !== 'Completed')
      throw new Error(`bench: the refresh failed: ${JSON.stringify(status.failure)}`);
    const result = status.output as PoolRefreshResult;
    return {
      clusterNodes,
      pageSize: PAGE_SIZE,
      pagesPerFullListing: Math.ceil(clusterNodes / PAGE_SIZE),
      nodeListPagesPerPoolRefresh: log.count({ api: 'kube', operation: 'nodes:list' }),
      nodeGetsPerPoolRefresh: log.count({ api: 'kube', operation: 'nodes:get' }),
      outcome: result.outcome,
    };
  } finally {
    await harness.stop();
  }
}

export function printNodeReads(figures: NodeReadFigures): void {
  console.log(
    `\nnode reads of one pool refresh (canary on, keep-size) on a ${figures.clusterNodes}-node cluster, ` +
      `${figures.pageSize} nodes a page: ${figures.nodeListPagesPerPoolRefresh} node-list pages ` +
      `(one full listing: ${figures.pagesPerFullListing}; goal ≤ ${2 * figures.pagesPerFullListing}), ` +
      `${figures.nodeGetsPerPoolRefresh} node GETs; outcome ${figures.outcome}`,
  );
}
