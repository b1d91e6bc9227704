/**
 * What the real-engine tier's scenarios do to a side's world between runs (docs/real-engine.md): kured
 * patching nodes, waiting for a run to reach a step, a dead run's lease left to expire. Each works on
 * both sides: the engine's world moves by itself (×1), the runner's on the manual clock is moved here.
 */
import assert from 'node:assert/strict';

import { IMAGE_VERSION_LABEL } from '../../shared/domain/generations.js';
import { PRIOR_STATE_ANNOTATION } from '../../shared/domain/ownership.js';
import type { Side } from './sides.js';

interface NodeObject {
  readonly metadata: {
    readonly name: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly spec?: { readonly unschedulable?: boolean };
}

export function nodesOf(side: Side, cluster: string, pool: string): NodeObject[] {
  return (side.sim.running.world.cluster(cluster).world.store.list('nodes') as unknown as NodeObject[])
    .filter((node) => node.metadata.name.startsWith(pool))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/** The generation (image version label) of each node of `pool`, by node name. */
export function generationsOf(side: Side, cluster: string, pool: string): Record<string, string> {
  return Object.fromEntries(
    nodesOf(side, cluster, pool).map((node) => [
      node.metadata.name,
      node.metadata.labels?.[IMAGE_VERSION_LABEL] ?? '(none)',
    ]),
  );
}

/**
 * kured patches and reboots the first node of each pool: their newest patch is newer than their image
 * again. The runner's world is on the manual clock: it is moved until kured is done.
 */
export async function patchAndReboot(side: Side, cluster: string, pools: readonly string[]): Promise<void> {
  const world = side.sim.running.world.cluster(cluster);
  const first = pools.map((pool) => {
    const name = nodesOf(side, cluster, pool)[0]?.metadata.name;
    assert.ok(name, `a node of ${pool}`);
    return name;
  });
  const run = world.kured.patchAndReboot(first);
  if (side.name === 'runner') {
    for (let second = 0; second < 600 && run.state === 'running'; second += 1) {
      side.sim.running.clock.advanceBy(1);
      await new Promise((done) => setImmediate(done));
    }
  }
  await run.done;
}

/**
 * Terminates `instanceId` the moment its run cordons a node of `pool` (cordoned, with the state the node had
 * before recorded on it: not kured's cordon for a reboot), from the store's own event, so the run dies at
 * the same step on both hosts: the runner on the manual clock would otherwise be far past the cordon by the
 * time a wall-clock poll saw it. Returns the node's name once the instance is terminated.
 */
export async function terminateAtCordon(
  side: Side,
  target: { readonly cluster: string; readonly pool: string; readonly instanceId: string },
  start: () => Promise<void>,
): Promise<string> {
  const store = side.sim.running.world.cluster(target.cluster).world.store;
  let stop: () => void = () => undefined;
  const cordoned = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${side.name}: no node of ${target.pool} was cordoned in 4 minutes`));
    }, 4 * 60_000);
    stop = store.subscribe((event) => {
      const node = event.object as unknown as NodeObject;
      if (event.resource !== 'nodes' || !node.metadata.name.startsWith(target.pool)) return;
      if (node.spec?.unschedulable !== true) return;
      if (node.metadata.annotations?.[PRIOR_STATE_ANNOTATION] === undefined) return;
      stop();
      clearTimeout(timer);
      side
        .terminate(target.instanceId, 'real-engine: the run died')
        .then(() => resolve(node.metadata.name), reject);
    });
  });
  try {
    await start();
  } catch (error) {
    stop();
    throw error;
  }
  return cordoned;
}

interface LeaseObject {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
  };
  spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string };
}

/**
 * A dead run's lease, as it is once its holder stopped renewing long ago: every held pool lease's acquire
 * and renew times moved a day back, on whichever clock a reader judges it by (the world's, the caller's).
 * Node heartbeats (kube-node-lease) are not ours and stay. Returns the holders it aged.
 */
export function ageHeldLeases(side: Side, cluster: string): string[] {
  const store = side.sim.running.world.cluster(cluster).world.store;
  const dayAgo = Math.min(Date.now(), side.sim.running.clock.nowMs()) - 24 * 3_600_000;
  const micro = new Date(dayAgo).toISOString().replace(/Z$/, '000Z');
  const aged: string[] = [];
  for (const lease of store.list('leases') as unknown as LeaseObject[]) {
    const holder = lease.spec?.holderIdentity;
    if (holder === undefined || holder === '') continue;
    if (lease.metadata.labels?.['app.kubernetes.io/managed-by'] !== 'vmss-prototype') continue;
    store.mutate('leases', lease.metadata.namespace, lease.metadata.name, (object) => {
      const spec = (object as unknown as LeaseObject).spec ?? {};
      spec.acquireTime = micro;
      spec.renewTime = micro;
    });
    aged.push(holder);
  }
  return aged;
}
