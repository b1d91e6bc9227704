/**
 * One planner run over a 20 000-node cluster of 40 pools, in its own process so that its peak RSS is its
 * own (run by planner-memory.bench.ts: `node --expose-gc planner-memory.child.js paged|whole`). The nodes
 * come page by page (500 a page) as JSON text, like the API server sends them, parsed and converted by the
 * Kubernetes adapter's converter.
 * - `paged`: the product's planner (planPoolsOfCluster): every pool from one listing, each page folded
 *   into the pools' selections as it arrives.
 * - `whole`: what planning did before: every raw page kept, the whole list converted, grouped, selected
 *   per pool (and that once per pool plan; here once for all, the most favourable case).
 * Prints one JSON object: list requests, wall ms, peak RSS, the largest heap after a page (after a
 * collection), and each pool's chosen donor (the two modes must agree).
 */
import { pathToFileURL } from 'node:url';

import type { V1Node } from '@kubernetes/client-node';

import { toClusterNode } from '../../shared/adapters/kubernetes/to-domain.js';
import { planPoolsOfCluster } from '../../shared/application/plan-cluster.js';
import type {
  ClusterConfiguration,
  ClusterHandle,
  ConfiguredPool,
} from '../../shared/application/refresh-dependencies.js';
import type { ClusterNode } from '../../shared/domain/cluster-node.js';
import { imageDefinitionNameFor } from '../../shared/domain/gallery-naming.js';
import { groupNodesByScaleSet, selectPrototypeNodeForPool } from '../../shared/domain/prototype-selection.js';
import { DEFAULT_SELECTION_POLICY } from '../../shared/domain/selection-policy.js';
import { FakeCompute } from '../../shared/ports/fake/compute/index.js';
import { FakeKubernetes, FakeNodes } from '../../shared/ports/fake/kubernetes/index.js';
import { CallLog } from '../../shared/ports/fake/recording-fake.js';
import type { KubernetesMethod, KubernetesPorts } from '../../shared/ports/kubernetes/index.js';
import { aScaleSet } from '../builders/scale-set.js';
import { RUN_SETTINGS } from '../functions/orchestrations/fake-world.js';
import { PLANNER_NODES, PLANNER_PAGE_SIZE } from './planner-memory.bench.js';
import { mulberry32, NOW, poolRef, POOLS, rawNode } from './selection.bench.js';

interface Sampler {
  pages: number;
  peakHeapBytes: number;
  readonly baseHeapBytes: number;
}

function heapAfterCollection(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

/** The cluster's node list, generated page by page: only the page being served exists. */
async function servePages(sampler: Sampler, visit: (raw: V1Node[]) => void | Promise<void>): Promise<void> {
  const random = mulberry32(PLANNER_NODES);
  for (let offset = 0; offset < PLANNER_NODES; offset += PLANNER_PAGE_SIZE) {
    const count = Math.min(PLANNER_PAGE_SIZE, PLANNER_NODES - offset);
    const text = JSON.stringify({
      items: Array.from({ length: count }, (_, k) =>
        rawNode(offset + k, poolRef((offset + k) % POOLS), random),
      ),
    });
    sampler.pages += 1;
    await visit((JSON.parse(text) as { items: V1Node[] }).items);
    sampler.peakHeapBytes = Math.max(sampler.peakHeapBytes, heapAfterCollection() - sampler.baseHeapBytes);
  }
}

/** Nodes served as the simulated API server's pages, converted page by page as the adapter does. */
class PagedNodes extends FakeNodes {
  constructor(private readonly sampler: Sampler) {
    super(new CallLog<KubernetesMethod>(() => NOW.getTime()));
  }

  override async scan(visit: (page: readonly ClusterNode[]) => void | Promise<void>): Promise<void> {
    await servePages(this.sampler, (raw) => visit(raw.map(toClusterNode)));
  }
}

function pagedNodeSource(sampler: Sampler): KubernetesPorts {
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  return { ...portsOf(kube), nodes: new PagedNodes(sampler) };
}

function portsOf(kube: FakeKubernetes): KubernetesPorts {
  const { server, nodes, pods, daemonSets, leases, poolPolicies } = kube;
  return { server, nodes, pods, daemonSets, leases, poolPolicies };
}

function handleOf(kube: KubernetesPorts): { handle: ClusterHandle; pools: ConfiguredPool[] } {
  const compute = new FakeCompute({ now: () => NOW.getTime() });
  const pools = Array.from({ length: POOLS }, (_, i): ConfiguredPool => {
    const scaleSet = poolRef(i);
    compute.addScaleSet(aScaleSet(scaleSet));
    return { name: scaleSet.name, scaleSet };
  });
  const configuration: ClusterConfiguration = {
    name: 'bench',
    subscriptionId: poolRef(0).subscriptionId,
    resourceGroup: poolRef(0).resourceGroup,
    maxParallelPools: 2,
    pools,
    poolConfiguration: (pool) => ({
      enabled: true,
      policy: { ...DEFAULT_SELECTION_POLICY, maximumImageAgeSeconds: 30 * 86_400 },
      bootstrapFlavour: 'aks-engine',
      run: RUN_SETTINGS,
      gallery: {
        subscriptionId: pool.scaleSet.subscriptionId,
        resourceGroup: pool.scaleSet.resourceGroup,
        galleryName: 'bench_gallery',
        imageDefinitionName: imageDefinitionNameFor('bench', pool.name),
      },
    }),
  };
  return { handle: { configuration, compute, kube }, pools };
}

async function main(mode: string): Promise<void> {
  const sampler: Sampler = { pages: 0, peakHeapBytes: 0, baseHeapBytes: heapAfterCollection() };
  const started = performance.now();
  const chosen: Record<string, string | null> = {};
  if (mode === 'paged') {
    const { handle } = handleOf(pagedNodeSource(sampler));
    for (const outcome of await planPoolsOfCluster(handle, NOW)) {
      chosen[outcome.pool] =
        outcome.ok && outcome.plan.decision.kind === 'refresh' ? outcome.plan.decision.node : null;
    }
  } else if (mode === 'whole') {
    const { pools } = handleOf(new FakeKubernetes());
    const raw: V1Node[] = [];
    await servePages(sampler, (page) => {
      raw.push(...page);
    });
    const groups = groupNodesByScaleSet(raw.map(toClusterNode));
    sampler.peakHeapBytes = Math.max(sampler.peakHeapBytes, heapAfterCollection() - sampler.baseHeapBytes);
    for (const pool of pools) {
      const selection = selectPrototypeNodeForPool(groups, {
        pool: { scaleSet: pool.scaleSet },
        policy: { ...DEFAULT_SELECTION_POLICY, maximumImageAgeSeconds: 30 * 86_400 },
        rejectedBuilds: [],
        now: NOW,
      });
      chosen[pool.name] = selection.chosen?.name ?? null;
    }
  } else {
    throw new Error(`planner-memory child: unknown mode ${mode} (paged or whole)`);
  }
  process.stdout.write(
    JSON.stringify({
      mode,
      listRequests: sampler.pages,
      ms: Math.round(performance.now() - started),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      peakHeapAfterPageMb: Math.round(sampler.peakHeapBytes / 1_048_576),
      chosen,
    }),
  );
}

// Only as the entry point (the bench imports nothing from here; this guards against that changing).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv[2] ?? '').catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
