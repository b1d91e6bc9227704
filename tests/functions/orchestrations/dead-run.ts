/**
 * What a run that died holding its donor leaves in a fake world: node 0 of the pool marked with the run's
 * id and its prior state, cordoned, its VM stopped; and the run's lease, renewed some minutes ago.
 */
import assert from 'node:assert/strict';

import { leaseRefOf } from '../../../shared/application/pool-holdings.js';
import { CAPTURE_RUN_ANNOTATION } from '../../../shared/domain/cluster-node.js';
import {
  encodePriorState,
  LEASE_ANNOTATIONS,
  LEASE_DURATION_SECONDS,
  PRIOR_STATE_ANNOTATION,
} from '../../../shared/domain/ownership.js';
import { CLUSTER, type FakeWorld, nodeName, poolRef } from './fake-world.js';

export const MINUTE = 60_000;

export function leaseOf(pool: string): { namespace: string; name: string } {
  return leaseRefOf(poolRef(pool), 'vmss-prototype');
}

/** Node 0 of `pool` as a run `runId` left it when it died holding it (schedulable before the run). */
export async function leaveDonor(world: FakeWorld, pool: string, runId: string): Promise<string> {
  const donor = nodeName(pool, 0);
  await world.kube.nodes.patchAnnotations(donor, {
    [CAPTURE_RUN_ANNOTATION]: runId,
    [PRIOR_STATE_ANNOTATION]: encodePriorState({ unschedulable: false, scaleDownDisabled: null }),
  });
  await world.kube.nodes.setUnschedulable(donor, true);
  world.compute.schedulePowerOff(poolRef(pool), '0', world.clock.now());
  assert.equal(world.compute.instanceState(poolRef(pool), '0')?.powerState, 'stopped');
  return donor;
}

/** The lease of `pool` held by `holder` (`<kind>/<host>/<run id>`), last renewed `minutesAgo`. */
export function holdLease(
  world: FakeWorld,
  pool: string,
  holder: string,
  minutesAgo: number,
  annotations: Record<string, string> = {},
): void {
  const at = new Date(world.clock.now() - minutesAgo * MINUTE).toISOString();
  world.kube.leases.put({
    ...leaseOf(pool),
    holder,
    acquiredAt: at,
    renewedAt: at,
    durationSeconds: LEASE_DURATION_SECONDS,
    annotations: { [LEASE_ANNOTATIONS.instanceId]: `refresh:${CLUSTER}:${pool}`, ...annotations },
  });
}

/** Whether node 0 of `pool` is given back: schedulable, our marks gone, its VM running. */
export function givenBack(world: FakeWorld, pool: string): boolean {
  const donor = world.kube.nodes.node(nodeName(pool, 0));
  return (
    donor?.unschedulable === false &&
    donor.annotations[CAPTURE_RUN_ANNOTATION] === undefined &&
    donor.annotations[PRIOR_STATE_ANNOTATION] === undefined &&
    world.compute.instanceState(poolRef(pool), '0')?.powerState === 'running'
  );
}
