/**
 * Peak RSS of the planner and of the status reads on a 20 000-node cluster through the real Kubernetes
 * adapter: the simulator runs in this process, its `prod` cluster grown to that many nodes
 * written straight into the simulated API server (node-reads.bench.ts), and the planner
 * (`planPoolsOfCluster`, as `vmss-prototype plan` runs it) or `readPoolStatus` of every pool runs in a
 * child process over the product's composition: @kubernetes/client-node over HTTPS, ARM over HTTPS. The
 * status, as `vmss-prototype status` does, lists the pools (every node, to discover them) and reads each
 * one's status; the filler pools, which have no scale set, are left out.
 * The goal (≤ 200 MiB) is reported, never asserted: RSS is noisy. `planner-memory.bench.ts` measures the
 * planner over an in-process fake with forced collections beside it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { PAGE_SIZE } from '../../shared/adapters/kubernetes/client-node-connection.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { sampleScenario } from '../e2e/harness.js';
import { growCluster } from './large-cluster.js';
import type { PlannerRssChildResult } from './planner-rss.child.js';

export const PLANNER_RSS_NODES = 20_000;
export const PLANNER_RSS_GOAL_MIB = 200;

const CHILD = fileURLToPath(new URL('./planner-rss.child.js', import.meta.url));

export interface PlannerRssRun {
  readonly peakRssMiB: number;
  readonly ms: number;
  readonly pools: number;
  readonly ok: number;
  /** Node-list requests the simulated API server served to the child (from its request log). */
  readonly nodeListRequests: number;
}

export interface PlannerRssFigures {
  readonly nodes: number;
  readonly pageSize: number;
  readonly goalMiB: number;
  readonly plan: PlannerRssRun;
  readonly status: PlannerRssRun;
}

function runChild(mode: 'plan' | 'status', connection: string): Promise<PlannerRssChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, mode, connection], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`bench: the ${mode} child exited ${String(code)}: ${stderr.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(stdout) as PlannerRssChildResult);
    });
  });
}

export async function measurePlannerRss(nodes = PLANNER_RSS_NODES): Promise<PlannerRssFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-bench-rss-'));
  const sim = await startSimulatorSession({ scenarioPath: sampleScenario(), clock: 'manual' });
  try {
    const clusterNodes = growCluster(sim.running, nodes);
    const connection = join(dir, 'connection.json');
    await writeConnectionFile(connection, connectionOf(sim.running));
    const log = sim.running.world.log;
    const run = async (mode: 'plan' | 'status'): Promise<PlannerRssRun> => {
      log.reset();
      const result = await runChild(mode, connection);
      return {
        peakRssMiB: result.peakRssMiB,
        ms: result.ms,
        pools: result.pools,
        ok: result.ok,
        nodeListRequests: log.count({ api: 'kube', operation: 'nodes:list' }),
      };
    };
    const plan = await run('plan');
    const status = await run('status');
    return { nodes: clusterNodes, pageSize: PAGE_SIZE, goalMiB: PLANNER_RSS_GOAL_MIB, plan, status };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function printPlannerRss(figures: PlannerRssFigures): void {
  console.log(
    `\nplanner and status through @kubernetes/client-node over HTTPS on a ${figures.nodes}-node cluster, ` +
      `${figures.pageSize} nodes a page (own process each, no forced GC; goal ≤ ${figures.goalMiB} MiB)`,
  );
  for (const [label, run] of [
    ['plan (every pool)', figures.plan],
    ['status (every pool)', figures.status],
  ] as const) {
    console.log(
      `${label.padEnd(22)} peak RSS ${run.peakRssMiB} MiB, ${run.ms} ms, ${run.ok}/${run.pools} pools, ` +
        `node-list requests ${run.nodeListRequests}`,
    );
  }
}
