/**
 * Which pools a cluster has and where one named pool is: the configured ones, or with `all` every scale
 * set that has nodes in the cluster (found page by page, keeping one node per scale set), or the one of
 * that name in the cluster's own resource group when a step names its pool.
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import { ignoreNotFound, NotFoundError } from '../domain/errors.js';
import { parseProviderId, scaleSetKey } from '../domain/resource-id.js';
import type { ScaleSet } from '../domain/scale-set.js';
import { keptNodes } from './node-scan.js';
import { scaleSetsWithNodes } from './pool-membership.js';
import type { ClusterHandle, ConfiguredPool } from './refresh-dependencies.js';

/**
 * The pools of a cluster: configured ones, or every scale set that has nodes in it (`all`). Pass the
 * cluster's nodes when the caller has them already: `all` is discovered from them instead of listing again.
 */
export async function listPoolsOfCluster(
  handle: ClusterHandle,
  listed?: readonly ClusterNode[],
): Promise<ConfiguredPool[]> {
  const configured = handle.configuration.pools;
  if (configured !== 'all') return [...configured];
  const nodes = listed ?? (await discoveryNodes(handle));
  // Uniform scale sets from the providerIDs, Flexible ones from ARM (pool-membership.ts).
  const scaleSets = await scaleSetsWithNodes(handle.compute, nodes);
  const pools = new Map<string, ConfiguredPool>();
  for (const scaleSet of scaleSets) {
    pools.set(scaleSetKey(scaleSet), { name: scaleSet.name.toLowerCase(), scaleSet });
  }
  return [...pools.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The nodes pool discovery needs, kept page by page: one node of each Uniform scale set (its providerID
 * names the scale set) and the nodes of plain VMs (Flexible members and standalone VMs, told apart by
 * ARM), never the whole list.
 */
async function discoveryNodes(handle: ClusterHandle): Promise<ClusterNode[]> {
  const seen = new Set<string>();
  return keptNodes(handle.kube, (node) => {
    const parsed = parseProviderId(node.providerId);
    if (!parsed.ok) return false;
    if (parsed.providerId.kind !== 'scale-set-instance') return true;
    const key = scaleSetKey(parsed.providerId.scaleSet);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * With `all`, the pool `poolName` would be if its scale set is in the cluster's own resource group (where
 * aks-engine puts them): not read, the caller's first ARM read of it says whether it is there.
 */
export function ownGroupPool(handle: ClusterHandle, poolName: string): ConfiguredPool | undefined {
  if (handle.configuration.pools !== 'all') return undefined;
  const { subscriptionId, resourceGroup } = handle.configuration;
  return { name: poolName, scaleSet: { subscriptionId, resourceGroup, name: poolName } };
}

/**
 * The pool named `poolName` as a scale set of that name in the cluster's own resource group (with `all`),
 * with its model: one ARM read instead of a listing of every node. `unreadable` decides what a failed read
 * means (undefined: look among the nodes; a throw: the caller's failure).
 */
async function ownGroupPoolModel(
  handle: ClusterHandle,
  poolName: string,
  unreadable: (error: unknown) => undefined,
): Promise<{ readonly pool: ConfiguredPool; readonly model: ScaleSet } | undefined> {
  const own = ownGroupPool(handle, poolName);
  if (own === undefined) return undefined;
  const model = await handle.compute.scaleSets.get(own.scaleSet).catch(unreadable);
  if (model === undefined || model.name.toLowerCase() !== poolName) return undefined;
  return { pool: { name: poolName, scaleSet: { ...own.scaleSet, name: model.name } }, model };
}

/**
 * The pool named `poolName` and its scale set's model, read once. With `all`, a scale set of that name
 * in the cluster's own resource group is the pool without listing the cluster's nodes (the model read
 * that the caller needs anyway, instead of a listing of every node for every step that names its pool);
 * one elsewhere is found by discovery (listPoolsOfCluster).
 */
export async function findPoolModel(
  handle: ClusterHandle,
  poolName: string,
): Promise<{ readonly pool: ConfiguredPool; readonly model: ScaleSet }> {
  const own = await ownGroupPoolModel(handle, poolName, ignoreNotFound);
  if (own !== undefined) return own;
  const pool = await findPool(handle, poolName);
  return { pool, model: await handle.compute.scaleSets.get(pool.scaleSet) };
}

/**
 * The pool named `poolName`, its scale set's model and the other scale sets of its resource group, from one
 * listing of that group where the pool's group is known before any read (a configured pool; with `all`,
 * the cluster's own group): the group's listing carries every model in it, etag included, so reading the
 * pool's model apart as well would read it twice (readPoolHoldings needs the listing for canary scale
 * sets). A pool not in that listing is looked for as findPoolModel does, without a group listing.
 */
export async function findPoolModelInGroup(
  handle: ClusterHandle,
  poolName: string,
): Promise<{
  readonly pool: ConfiguredPool;
  readonly model: ScaleSet;
  readonly groupScaleSets?: readonly ScaleSet[];
}> {
  const configured = handle.configuration.pools;
  const known =
    configured === 'all'
      ? ownGroupPool(handle, poolName)
      : configured.find((candidate) => candidate.name === poolName);
  if (known !== undefined) {
    const { subscriptionId, resourceGroup, name } = known.scaleSet;
    const groupScaleSets = await handle.compute.scaleSets.list(subscriptionId, resourceGroup);
    const model = groupScaleSets.find((scaleSet) => scaleSet.name.toLowerCase() === name.toLowerCase());
    if (model !== undefined) {
      return {
        pool: { name: poolName, scaleSet: { ...known.scaleSet, name: model.name } },
        model,
        groupScaleSets,
      };
    }
  }
  return findPoolModel(handle, poolName);
}

/**
 * The pool named `poolName` if the cluster has it, else undefined: a configured pool by its name; with
 * `all`, a scale set of that name in the cluster's own resource group (one ARM read, as findPoolModel),
 * otherwise the pools discovered from the cluster's nodes. For a check that the pool an operator named
 * exists: a listing of every node (40 pages at 20 000 nodes) only when the pool is elsewhere or missing.
 */
export async function namedPool(
  handle: ClusterHandle,
  poolName: string,
): Promise<ConfiguredPool | undefined> {
  // Any failure of the read (not found, or ARM down: the permission check that follows names an outage,
  // with "nothing was changed") leaves the pool to be found among the nodes, as without the read.
  const own = await ownGroupPoolModel(handle, poolName, () => undefined);
  if (own !== undefined) return own.pool;
  return (await listPoolsOfCluster(handle)).find((candidate) => candidate.name === poolName);
}

export async function findPool(
  handle: ClusterHandle,
  poolName: string,
  listed?: readonly ClusterNode[],
): Promise<ConfiguredPool> {
  const pools = await listPoolsOfCluster(handle, listed);
  const pool = pools.find((candidate) => candidate.name === poolName);
  if (pool === undefined) {
    throw new NotFoundError(
      'PoolNotFound',
      `finding pool ${poolName} of cluster ${handle.configuration.name}: known pools are ${
        pools.map((p) => p.name).join(', ') || 'none'
      }`,
    );
  }
  return pool;
}
