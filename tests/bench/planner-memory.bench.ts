/**
 * The planner's memory on a 20 000-node cluster listed page by page ("Large clusters"): the
 * product's planner (one listing for 40 pools, pages folded as they arrive) against the whole-list way
 * planning worked before, each in its own child process so that each peak RSS is its own. The two must
 * choose the same donors.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { POOLS } from './selection.bench.js';

export const PLANNER_NODES = 20_000;
export const PLANNER_PAGE_SIZE = 500;

const CHILD = fileURLToPath(new URL('./planner-memory.child.js', import.meta.url));

export interface PlannerRun {
  readonly listRequests: number;
  readonly ms: number;
  readonly peakRssMb: number;
  readonly peakHeapAfterPageMb: number;
}

export interface PlannerMemoryFigures {
  readonly nodes: number;
  readonly pools: number;
  readonly pageSize: number;
  /** The product: one listing for every pool, each page folded as it arrives. */
  readonly paged: PlannerRun;
  /** Before: the whole list kept and converted, then selected per pool (once for all pools here). */
  readonly wholeList: PlannerRun;
  readonly sameDonors: boolean;
}

async function runChild(mode: 'paged' | 'whole'): Promise<PlannerRun & { chosen: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', CHILD, mode], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`bench: the planner (${mode}) exited ${String(code)}: ${stderr.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(stdout) as PlannerRun & { chosen: Record<string, unknown> });
    });
  });
}

export async function measurePlannerMemory(): Promise<PlannerMemoryFigures> {
  const { chosen: pagedChosen, ...paged } = await runChild('paged');
  const { chosen: wholeChosen, ...wholeList } = await runChild('whole');
  return {
    nodes: PLANNER_NODES,
    pools: POOLS,
    pageSize: PLANNER_PAGE_SIZE,
    paged: strip(paged),
    wholeList: strip(wholeList),
    sameDonors: JSON.stringify(pagedChosen) === JSON.stringify(wholeChosen),
  };
}

function strip(run: PlannerRun & { mode?: unknown }): PlannerRun {
  return {
    listRequests: run.listRequests,
    ms: run.ms,
    peakRssMb: run.peakRssMb,
    peakHeapAfterPageMb: run.peakHeapAfterPageMb,
  };
}

export function printPlannerMemory(figures: PlannerMemoryFigures): void {
  console.log(
    `\nplanner over a ${figures.nodes}-node cluster of ${figures.pools} pools, listed ${figures.pageSize} nodes a page (own process each)`,
  );
  for (const [label, run] of [
    ['paged (the product)', figures.paged],
    ['whole list (before)', figures.wholeList],
  ] as const) {
    console.log(
      `${label.padEnd(22)} list requests ${run.listRequests}, ${run.ms} ms, peak RSS ${run.peakRssMb} MB, ` +
        `largest heap after a page ${run.peakHeapAfterPageMb} MB`,
    );
  }
  console.log(`same donors chosen: ${figures.sameDonors ? 'yes' : 'NO'}`);
}
