/**
 * Node reads of one pool refresh on a 20 000-node cluster: the node-list pages the simulated
 * API server served during one refresh of one pool, with the canary on and the product's default
 * `canary.afterPass: keep-size` (one older node retired in the canary's place), beside the pages of one
 * listing of every node. The goal: at most two full listings' worth of pages per pool refresh, whatever
 * the cluster's size. Counted from the simulator's request log (one entry per request): deterministic on
 * the manual clock, so a test can bound it.
 *
 * The cluster is the sample scenario's, grown to 20 000 nodes by nodes of other pools (large-cluster.ts;
 * their scale sets are not in ARM, as this figure has always been measured: the refresh reads only its
 * own pool's).
 */
import { PAGE_SIZE } from '../../shared/adapters/kubernetes/client-node-connection.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { POOL1, startHarness } from '../e2e/harness.js';
import { growCluster, LARGE_CLUSTER_NODES, linuxDaemonSets } from './large-cluster.js';

export const NODE_READS_CLUSTER_NODES = LARGE_CLUSTER_NODES;

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
