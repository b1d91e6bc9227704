/**
 * One pool's refresh, then the next, on the simulator with the timing model's seeded jitter
 * (sim/world/timing.ts): every long operation takes its own drawn time around the `kamino-observed`
 * figure, so a wait that reads once at the expected completion misses some. The figures per seed: ARM
 * requests of the first and the next refresh (budgets 45 and 35), and the donor's time out of service.
 * Seeds make it the same on every machine; several seeds show the spread.
 */
import type { HarnessOptions } from '../e2e/harness.js';
import { POOL1 } from '../e2e/harness.js';
import { measureRefresh } from './refresh.bench.js';

export const JITTER_SEEDS: readonly number[] = [1, 2, 3, 4, 5];

export interface JitterRow {
  readonly seed: number;
  readonly armFirst: number;
  readonly armNext: number;
  readonly donorOutOfServiceS: number;
  readonly donorCordonToReadyS: number;
  readonly refreshS: number;
  /** Reads of the image version, first refresh: the wait for its replication is most of them. */
  readonly versionReads: number;
  /** Reads of the instances, first refresh: the power-off and start waits are most of them. */
  readonly instanceReads: number;
}

/** The sample scenario with jitter on, drawn from `seed`. */
export function withJitterSeed(seed: number): NonNullable<HarnessOptions['scenario']> {
  return (scenario) => {
    scenario['seed'] = seed;
    const latency = (scenario['latency'] ?? {}) as Record<string, unknown>;
    scenario['latency'] = { ...latency, jitter: true };
  };
}

export async function jitterFigures(seeds: readonly number[] = JITTER_SEEDS): Promise<JitterRow[]> {
  const rows: JitterRow[] = [];
  for (const seed of seeds) {
    const figures = await measureRefresh(POOL1, 'drain-and-stop', withJitterSeed(seed));
    if ('refused' in figures) throw new Error(`bench: drain-and-stop refused: ${figures.refused}`);
    rows.push({
      seed,
      armFirst: figures.armRequests.total,
      armNext: figures.armRequests.again,
      donorOutOfServiceS: figures.donorOutOfServiceS,
      donorCordonToReadyS: figures.donorCordonToReadyS,
      refreshS: figures.refreshS,
      versionReads: figures.armByOperation['galleries/images/versions/read'] ?? 0,
      instanceReads: figures.armByOperation['virtualMachineScaleSets/virtualMachines/read'] ?? 0,
    });
  }
  return rows;
}

export function printJitterFigures(rows: readonly JitterRow[]): void {
  console.log('\nrefresh of one pool with seeded jitter (kamino-observed ± the timing model), manual clock');
  console.log(
    'seed  ARM first (≤ 45)  ARM next (≤ 35)  donor out of service  cordon → Ready  refresh  version/instance reads',
  );
  for (const row of rows) {
    console.log(
      `${String(row.seed).padStart(4)}  ${String(row.armFirst).padStart(16)}  ${String(row.armNext).padStart(15)}  ` +
        `${String(row.donorOutOfServiceS).padStart(18)} s  ${String(row.donorCordonToReadyS).padStart(12)} s  ${row.refreshS} s` +
        `  ${row.versionReads}/${row.instanceReads}`,
    );
  }
}
