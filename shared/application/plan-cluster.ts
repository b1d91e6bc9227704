/**
 * Plans a cluster's pools from ONE listing of its nodes: the nodes come page by page (limit/continue),
 * each page is judged as it arrives and folded into its pool's selection (pool-selection-fold.ts), so
 * memory is bounded by a page and the best few nodes per pool, and 40 pools of a 20 000-node cluster cost
 * 40 pages, not 1 600. A pool plan (`planPoolForCluster`) is the same with one pool.
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import { isRefreshError, NotFoundError, TransientError } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import {
  DEFAULT_FOLD_LIMITS,
  finishPoolFold,
  foldPoolMember,
  type PoolSelectionFold,
  type SelectionFoldLimits,
  startPoolFold,
} from '../domain/pool-selection-fold.js';
import {
  parseComputeResourceId,
  parseProviderId,
  scaleSetKey,
  type ScaleSetRef,
  virtualMachineKey,
} from '../domain/resource-id.js';
import { planFromSelection, type PreparedPool, preparePool, selectionInputOf } from './plan-pool.js';
import { scaleSetsOfVirtualMachines } from './pool-membership.js';
import type { PoolPlan } from './pool-plan.js';
import { policyAwareHandle, policyAwareHandleFor } from './pool-policies.js';
import type { ClusterHandle, ConfiguredPool } from './refresh-dependencies.js';

/** One pool's plan, or why it could not be planned (the other pools are planned all the same). */
export type PoolPlanOutcome =
  | { readonly pool: string; readonly scaleSet: ScaleSetRef; readonly ok: true; readonly plan: PoolPlan }
  | { readonly pool: string; readonly scaleSet: ScaleSetRef; readonly ok: false; readonly error: unknown };

export interface ClusterPlanOptions {
  /** Plan only this pool (PoolNotFound, naming the known pools, when the cluster has none by that name). */
  readonly pool?: string;
  /** An operator-named donor (with `pool`). */
  readonly requestedNode?: string;
  readonly limits?: SelectionFoldLimits;
}

interface PoolState {
  readonly pool: ConfiguredPool;
  prepared?: PreparedPool;
  error?: unknown;
  fold?: PoolSelectionFold;
}

/**
 * Every pool's plan, in the configured order (discovered pools by name), from one node listing.
 * A transient failure reading one pool fails the whole call (the caller retries it); any other failure
 * of one pool is that pool's outcome.
 */
export async function planPoolsOfCluster(
  clusterHandle: ClusterHandle,
  now: Date,
  options: ClusterPlanOptions = {},
): Promise<PoolPlanOutcome[]> {
  // The pools' PoolImagePolicy objects override their settings (docs/pool-policy.md): read once.
  const handle =
    options.pool === undefined
      ? await policyAwareHandle(clusterHandle)
      : await policyAwareHandleFor(clusterHandle, options.pool);
  const configured = handle.configuration.pools;
  const limits: SelectionFoldLimits = {
    ...(options.limits ?? DEFAULT_FOLD_LIMITS),
    ...(options.requestedNode === undefined ? {} : { keepNames: new Set([options.requestedNode]) }),
  };
  const wanted = (name: string) => options.pool === undefined || options.pool === name;
  const accessChecks = new Map<string, Promise<void>>();
  const states = new Map<string, PoolState[]>();
  /** Flexible members (virtualMachineKey) → the pools that list them. */
  const flexibleOwners = new Map<string, PoolState[]>();
  const prepare = async (pool: ConfiguredPool): Promise<void> => {
    const state: PoolState = { pool };
    const key = scaleSetKey(pool.scaleSet);
    states.set(key, [...(states.get(key) ?? []), state]);
    if (!wanted(pool.name)) return;
    try {
      state.prepared = await preparePool(handle, pool, accessChecks);
    } catch (error) {
      if (error instanceof TransientError || !isRefreshError(error)) throw error;
      state.error = error;
      return;
    }
    state.fold = startPoolFold(selectionInputOf(state.prepared, now), limits);
    for (const id of state.prepared.flexibleMembers ?? []) {
      const parsed = parseComputeResourceId(id);
      if (!parsed.ok || parsed.providerId.kind !== 'virtual-machine') continue;
      const vmKey = virtualMachineKey(parsed.providerId.virtualMachine);
      flexibleOwners.set(vmKey, [...(flexibleOwners.get(vmKey) ?? []), state]);
    }
  };

  if (configured !== 'all') {
    if (options.pool !== undefined && !configured.some((pool) => pool.name === options.pool)) {
      throw poolNotFound(handle, options.pool, configured);
    }
    for (const pool of configured) await prepare(pool);
  }

  // `all`: pools are the scale sets that have nodes, found as the pages arrive (Uniform ones from the
  // providerIDs; Flexible ones from one VM list per resource group holding a plain-VM node).
  /** Per resource group holding a plain-VM node: its VMs' scale sets by VM name (one ARM list each). */
  const vmScaleSets = new Map<string, Map<string, ScaleSetRef>>();
  const discover = async (page: readonly ClusterNode[]): Promise<void> => {
    for (const node of page) {
      const parsed = parseProviderId(node.providerId);
      if (!parsed.ok) continue;
      const id = parsed.providerId;
      let scaleSet: ScaleSetRef | undefined;
      if (id.kind === 'scale-set-instance') {
        scaleSet = id.scaleSet;
      } else {
        const vm = id.virtualMachine;
        const groupKey = `${vm.subscriptionId}/${vm.resourceGroup}`.toLowerCase();
        let group = vmScaleSets.get(groupKey);
        if (group === undefined) {
          group = await scaleSetsOfVirtualMachines(handle.compute, vm.subscriptionId, vm.resourceGroup);
          vmScaleSets.set(groupKey, group);
        }
        // Standalone VMs (control planes outside any scale set) name none and are in no pool.
        scaleSet = group.get(vm.name.toLowerCase());
      }
      if (scaleSet !== undefined && !states.has(scaleSetKey(scaleSet))) {
        await prepare({ name: scaleSet.name.toLowerCase(), scaleSet });
      }
    }
  };

  let listed = 0;
  await handle.kube.nodes.scan(
    async (page) => {
      if (configured === 'all') await discover(page);
      listed += page.length;
      for (const node of page) {
        for (const state of poolsOfNode(node, states, flexibleOwners)) {
          if (state.fold !== undefined) foldPoolMember(state.fold, node);
        }
      }
    },
    () => {
      // The list restarted from its first page: the pools keep what was read about them, not the nodes.
      listed = 0;
      for (const state of [...states.values()].flat()) {
        if (state.prepared !== undefined)
          state.fold = startPoolFold(selectionInputOf(state.prepared, now), limits);
      }
    },
  );

  let pools = [...states.values()].flat();
  if (configured === 'all') {
    pools = dedupeByName(pools).sort((a, b) => a.pool.name.localeCompare(b.pool.name));
    if (options.pool !== undefined && !pools.some((state) => state.pool.name === options.pool)) {
      throw poolNotFound(
        handle,
        options.pool,
        pools.map((state) => state.pool),
      );
    }
  }
  const outcomes: PoolPlanOutcome[] = [];
  for (const state of pools) {
    if (!wanted(state.pool.name)) continue;
    const named = { pool: state.pool.name, scaleSet: state.pool.scaleSet };
    if (state.prepared === undefined || state.fold === undefined) {
      outcomes.push({ ...named, ok: false, error: state.error });
      continue;
    }
    const folded = finishPoolFold(state.fold, listed - state.fold.members);
    try {
      const plan = await planFromSelection(handle, state.prepared, folded, options.requestedNode, now);
      outcomes.push({ ...named, ok: true, plan });
    } catch (error) {
      if (error instanceof TransientError || !isRefreshError(error)) throw error;
      outcomes.push({ ...named, ok: false, error });
    }
  }
  return outcomes;
}

/** One pool's plan (the cluster's nodes listed once, page by page, for it). */
export async function planPoolForCluster(
  handle: ClusterHandle,
  poolName: string,
  requestedNode: string | undefined,
  now: Date,
): Promise<PoolPlan> {
  const [outcome] = await planPoolsOfCluster(handle, now, {
    pool: poolName,
    ...definedOnly({ requestedNode }),
  });
  if (outcome === undefined) throw poolNotFound(handle, poolName, []);
  if (!outcome.ok) throw outcome.error;
  return outcome.plan;
}

function poolsOfNode(
  node: ClusterNode,
  states: ReadonlyMap<string, PoolState[]>,
  flexibleOwners: ReadonlyMap<string, PoolState[]>,
): readonly PoolState[] {
  const parsed = parseProviderId(node.providerId);
  if (!parsed.ok) return [];
  const id = parsed.providerId;
  if (id.kind === 'scale-set-instance') return states.get(scaleSetKey(id.scaleSet)) ?? [];
  return flexibleOwners.get(virtualMachineKey(id.virtualMachine)) ?? [];
}

function dedupeByName(states: readonly PoolState[]): PoolState[] {
  const byName = new Map<string, PoolState>();
  for (const state of states) if (!byName.has(state.pool.name)) byName.set(state.pool.name, state);
  return [...byName.values()];
}

function poolNotFound(
  handle: ClusterHandle,
  poolName: string,
  pools: readonly ConfiguredPool[],
): NotFoundError {
  return new NotFoundError(
    'PoolNotFound',
    `finding pool ${poolName} of cluster ${handle.configuration.name}: known pools are ${
      pools.map((p) => p.name).join(', ') || 'none'
    }`,
  );
}
