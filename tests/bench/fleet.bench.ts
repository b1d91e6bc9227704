/**
 * The fleet bench: 1 000 pools (5 subscriptions × 20 clusters × 10 pools of 3 nodes) on one
 * local durable runner against one simulator with Compute's per-subscription throttling enforced,
 * refreshed through the schedule's path (tests/chaos/fleet-harness.ts), with a progress line every
 * `BENCH_FLEET_EVERY` (default 50) pool runs ended. `BENCH_FLEET_SHAPE=SxCxP` (e.g. `2x5x4`) measures a
 * smaller fleet with the same admission; `BENCH_FLEET_SESSIONS=1` keeps orchestrators in memory between
 * episodes (extended sessions) instead of replaying each history.
 */
import type { FleetFigures, FleetShape } from '../chaos/fleet-harness.js';
import { fleetTable, runFleet } from '../chaos/fleet-harness.js';

/**
 * 50 pools of a subscription at once, at most 10 of one cluster: a subscription's 200 pools in about four
 * rounds of one pool's refresh (about 1.7 simulated hours), within one night.
 */
export const FLEET_SHAPE: FleetShape = {
  subscriptions: 5,
  clustersPerSubscription: 20,
  poolsPerCluster: 10,
  maxPoolsPerSubscription: 50,
  maxParallelPools: 10,
};

function shapeFromEnvironment(): FleetShape {
  const shape = { ...FLEET_SHAPE, extendedSessions: process.env['BENCH_FLEET_SESSIONS'] === '1' };
  const factor = process.env['BENCH_FLEET_TIME_FACTOR'];
  if (factor !== undefined && factor !== '') {
    if (!/^\d+$/.test(factor) || Number(factor) < 1) {
      throw new Error(
        `BENCH_FLEET_TIME_FACTOR=${factor}: expected simulated seconds per wall second, such as 100`,
      );
    }
    Object.assign(shape, { timeFactor: Number(factor) });
  }
  const text = process.env['BENCH_FLEET_SHAPE'];
  if (text === undefined || text === '') return shape;
  const match = /^(\d+)x(\d+)x(\d+)$/.exec(text);
  if (match === null) {
    throw new Error(`BENCH_FLEET_SHAPE=${text}: expected subscriptions x clusters x pools, such as 2x5x4`);
  }
  return {
    ...shape,
    subscriptions: Number(match[1]),
    clustersPerSubscription: Number(match[2]),
    poolsPerCluster: Number(match[3]),
  };
}

export async function fleetFigures(
  print: (line: string) => void,
): Promise<{ shape: FleetShape; figures: FleetFigures }> {
  const shape = shapeFromEnvironment();
  const every = Number(process.env['BENCH_FLEET_EVERY'] ?? '50');
  if (!Number.isInteger(every) || every < 1) {
    throw new Error(
      `BENCH_FLEET_EVERY=${process.env['BENCH_FLEET_EVERY']}: expected a whole number of pools, such as 50`,
    );
  }
  return { shape, figures: await runFleet(shape, { every, print }) };
}

export function printFleetFigures({ shape, figures }: { shape: FleetShape; figures: FleetFigures }): void {
  console.log(`\n${fleetTable(shape, figures)}`);
  for (const failure of figures.failures.slice(0, 20)) console.log(`  failed: ${failure}`);
}
