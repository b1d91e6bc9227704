/**
 * The benches' 20 000-node cluster: the sample scenario's `prod` cluster grown by nodes of other pools
 * written straight into the simulated API server (no guest behind them: they only have to be listed and
 * read). They run no DaemonSet pods (the DaemonSets select Linux nodes, these say Windows) and are
 * cordoned, so nothing is scheduled on them and a refresh's own work is the sample's.
 *
 * Two worlds: by default the filler pools' scale sets are not in ARM (what the orchestration benches
 * have always measured, and a cluster whose nodes name deleted scale sets); with `scaleSets: true` each
 * filler pool is a Windows scale set with ephemeral OS disks in the cluster's resource group with one
 * instance per node, the nodes named and pointing at their instances as cloud-provider-azure would
 * register them: a valid world, where every pool's status and plan can be read (the planner refuses
 * those pools: Windows, and an ephemeral OS disk).
 */
import type { KubeObject, KubeStore } from '../../sim/contracts.js';
import type { RunningSimulator } from '../../sim/index.js';
import { nodeNameOf, providerIdOf } from '../../sim/world/nodes.js';
import type { ScenarioData } from '../e2e/harness.js';

export const LARGE_CLUSTER_NODES = 20_000;
const FILLER_POOLS = 40;
/** The filler nodes' pools (and scale sets, `k8s-<pool>-12345678-vmss`) start with this. */
export const FILLER_POOL_PREFIX = 'filler';

export interface GrowOptions {
  /** Give every filler pool its scale set in ARM, one instance per node (a valid world). */
  readonly scaleSets?: boolean;
}

/** Every DaemonSet selects Linux nodes, so the filler nodes (Windows) get none of their pods. */
export function linuxDaemonSets(scenario: ScenarioData): void {
  for (const cluster of scenario.clusters) {
    for (const workload of cluster.workloads) {
      if (workload['kind'] !== 'DaemonSet') continue;
      const selector = (workload['nodeSelector'] ?? {}) as Record<string, string>;
      workload['nodeSelector'] = { ...selector, 'kubernetes.io/os': 'linux' };
    }
  }
}

interface FillerIdentity {
  readonly pool: string;
  readonly name: string;
  readonly providerId: string;
}

function fillerPoolOf(index: number): { pool: string; scaleSet: string } {
  const pool = `${FILLER_POOL_PREFIX}${index % FILLER_POOLS}`;
  return { pool, scaleSet: `k8s-${pool}-12345678-vmss` };
}

/** A filler node's name and providerID when its scale set is not in ARM: made up from its index. */
function madeUpIdentity(template: KubeObject, index: number): FillerIdentity {
  const { pool, scaleSet } = fillerPoolOf(index);
  const name = `${scaleSet.replace(/-vmss$/, '')}-${index.toString(36).padStart(6, '0')}`;
  const providerTemplate = (template.spec as Record<string, unknown> | undefined)?.['providerID'];
  const providerId = (typeof providerTemplate === 'string' ? providerTemplate : '').replace(
    /virtualMachineScaleSets\/[^/]+\/virtualMachines\/.*$/,
    `virtualMachineScaleSets/${scaleSet}/virtualMachines/${index}`,
  );
  return { pool, name, providerId };
}

/** A node of another pool, shaped like `template` (a real node of the sample), with its own identity. */
function fillerNode(template: KubeObject, identity: FillerIdentity): KubeObject {
  const raw = structuredClone(template) as KubeObject & {
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
  };
  const labels = { ...raw.metadata.labels };
  labels['agentpool'] = identity.pool;
  labels['kubernetes.io/hostname'] = identity.name;
  labels['kubernetes.io/os'] = 'windows';
  labels['beta.kubernetes.io/os'] = 'windows';
  return {
    ...raw,
    metadata: {
      name: identity.name,
      labels,
      ...(raw.metadata.annotations === undefined ? {} : { annotations: { ...raw.metadata.annotations } }),
    },
    // Cordoned, with the taint the node lifecycle controller would add: nothing to change on 20 000 nodes.
    spec: {
      ...raw.spec,
      providerID: identity.providerId,
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

/**
 * Each filler pool's scale set in ARM (Windows, in the cluster's resource group, tagged with its pool's
 * name as aks-engine does) with as many instances as the pool has nodes; the nodes' identities follow
 * the instances (the kubelet registers under the lowercased computer name).
 */
function seededIdentities(running: RunningSimulator, resourceGroup: string, from: number, total: number) {
  const perScaleSet = new Map<string, { pool: string; count: number }>();
  for (let index = from; index < total; index++) {
    const { pool, scaleSet } = fillerPoolOf(index);
    const entry = perScaleSet.get(scaleSet) ?? { pool, count: 0 };
    entry.count += 1;
    perScaleSet.set(scaleSet, entry);
  }
  const identities: FillerIdentity[] = [];
  for (const [scaleSet, { pool, count }] of perScaleSet) {
    const info = running.world.compute.addScaleSet({
      resourceGroup,
      name: scaleSet,
      osType: 'Windows',
      // No managed OS disk per instance: 20 000 disks in the cluster's resource group would be read
      // whole by every pool's status (its leftovers search lists the group's disks), 100 a page, and
      // the simulator renders the group's every disk for each page (docs/scale.md).
      ephemeralOsDisk: true,
      instances: count,
      tags: { poolName: pool, orchestrator: 'Kubernetes:1.30.6', resourceNameSuffix: '12345678' },
    });
    for (const instance of running.world.compute.listInstances(info.id)) {
      identities.push({ pool, name: nodeNameOf(instance), providerId: providerIdOf(instance) });
    }
  }
  return identities;
}

/** Grows the simulator's `prod` cluster to `total` nodes; returns its node count. */
export function growCluster(running: RunningSimulator, total: number, options: GrowOptions = {}): number {
  const cluster = running.world.clusters.get('prod');
  if (cluster === undefined) throw new Error('bench: no cluster prod in the scenario');
  const store = cluster.world.store;
  daemonSetsOnLinuxOnly(store);
  const existing = store.list('nodes');
  const template = existing.find((node) => node.metadata.labels?.['kubernetes.azure.com/role'] === 'agent');
  if (template === undefined) throw new Error('bench: the sample cluster has no agent node to copy');
  if (options.scaleSets === true) {
    for (const identity of seededIdentities(running, cluster.world.resourceGroup, existing.length, total))
      store.create('nodes', fillerNode(template, identity));
  } else {
    for (let index = existing.length; index < total; index++)
      store.create('nodes', fillerNode(template, madeUpIdentity(template, index)));
  }
  return store.list('nodes').length;
}
