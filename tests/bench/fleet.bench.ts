/**
 * The fleet bench (issue 32): 1 000 pools (5 subscriptions × 20 clusters × 10 pools of 3 nodes) on one
 * local durable runner against one simulator with Compute's per-subscription throttling enforced,
 * refreshed through the schedule's path (tests/chaos/fleet-harness.ts). `BENCH_FLEET_SHAPE=SxCxP`
 * (e.g. `2x5x4`) measures a smaller fleet with the same admission.
 */
import type { FleetFigures, FleetShape } from '../chaos/fleet-harness.js';
import { fleetTable, runFleet } from '../chaos/fleet-harness.js';

/** 20 pools of a subscription at once, as 2 clusters of 10: 200 pools in about ten rounds of one pool's refresh. */
export const FLEET_SHAPE: FleetShape = {
  subscriptions: 5,
  clustersPerSubscription: 20,
  poolsPerCluster: 10,
  maxPoolsPerSubscription: 20,
  maxParallelPools: 10,
  timeFactor: 100,
};

function shapeFromEnvironment(): FleetShape {
  const text = process.env['BENCH_FLEET_SHAPE'];
  if (text === undefined || text === '') return FLEET_SHAPE;
  const match = /^(\d+)x(\d+)x(\d+)$/.exec(text);
  if (match === null) {
    throw new Error(`BENCH_FLEET_SHAPE=${text}: expected subscriptions x clusters x pools, such as 2x5x4`);
  }
  return {
    ...FLEET_SHAPE,
    subscriptions: Number(match[1]),
    clustersPerSubscription: Number(match[2]),
    poolsPerCluster: Number(match[3]),
  };
}

export async function fleetFigures(): Promise<{ shape: FleetShape; figures: FleetFigures }> {
  const shape = shapeFromEnvironment();
  return { shape, figures: await runFleet(shape) };
}

export function printFleetFigures({ shape, figures }: { shape: FleetShape; figures: FleetFigures }): void {
  console.log(`\n${fleetTable(shape, figures)}`);
  for (const failure of figures.failures.slice(0, 20)) console.log(`  failed: ${failure}`);
}
