/**
 * The planner or the status reads of every pool, through the product's composition over the real
 * adapters (@kubernetes/client-node over HTTPS to the simulated API server, ARM over HTTPS), in a
 * process of its own so that its peak RSS is its own (run by planner-rss.bench.ts:
 * `node planner-rss.child.js plan|status <connection.json>`). No forced collection: the figure is what a
 * user's process pays. Prints one JSON object: the mode, the pools, wall ms and the peak RSS
 * (`process.resourceUsage().maxRSS`, KiB: https://nodejs.org/api/process.html#processresourceusage).
 */
import { pathToFileURL } from 'node:url';

import { connectSimulator } from '../../cli/sim-connection.js';
import { planPoolsOfCluster } from '../../shared/application/plan-cluster.js';
import { listPoolsOfCluster } from '../../shared/application/pool-lookup.js';
import { readPoolStatus } from '../../shared/application/pool-status.js';
import { compose } from '../../shared/composition-root.js';
import { FILLER_POOL_PREFIX } from './large-cluster.js';

export interface PlannerRssChildResult {
  readonly mode: 'plan' | 'status';
  readonly pools: number;
  /** Pools whose plan or status was read without an error. */
  readonly ok: number;
  readonly ms: number;
  readonly peakRssMiB: number;
}

/** The bench's filler nodes name scale sets ARM does not have (node-reads.bench.ts): not pools to read. */
function isFiller(poolOrScaleSet: string): boolean {
  return poolOrScaleSet.startsWith(`k8s-${FILLER_POOL_PREFIX}`);
}

async function main(mode: string, connectionPath: string): Promise<void> {
  if (mode !== 'plan' && mode !== 'status')
    throw new Error(`planner-rss child: unknown mode ${mode} (plan or status)`);
  const connected = await connectSimulator(connectionPath);
  const now = (): Date => new Date(connected.clock.now());
  const { dependencies } = compose({ env: connected.env, simulator: connected.endpoints, now });
  const handle = await dependencies.cluster('prod');
  const started = performance.now();
  let ok = 0;
  let pools = 0;
  if (mode === 'plan') {
    for (const outcome of await planPoolsOfCluster(handle, now())) {
      if (isFiller(outcome.pool)) continue;
      pools += 1;
      if (outcome.ok) ok += 1;
    }
  } else {
    // As `vmss-prototype status` does (the clusterStatus orchestration): list the pools, then each one's status.
    for (const pool of await listPoolsOfCluster(handle)) {
      if (isFiller(pool.scaleSet.name)) continue;
      pools += 1;
      await readPoolStatus(handle, pool.name, now());
      ok += 1;
    }
  }
  const result: PlannerRssChildResult = {
    mode,
    pools,
    ok,
    ms: Math.round(performance.now() - started),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  process.stdout.write(JSON.stringify(result));
}

// Only as the entry point (the bench imports its types only).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv[2] ?? '', process.argv[3] ?? '').catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
