/**
 * The nodes a step needs, read page by page and kept only when they matter to it: memory holds one page
 * and what is kept (a pool's members, the nodes carrying our marker), never the whole cluster's list —
 * 20 000 nodes are ~280 MB as one list (bench `planner-memory`). A pool's members are listed
 * by the pool's label where its nodes carry one (`poolMemberNodes`), so a step of one pool's refresh
 * reads that pool's pages, not the cluster's (bench `nodeListPagesPerPoolRefresh`).
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import type { ScaleSetInstance } from '../domain/compute.js';
import { ignoreNotFound } from '../domain/errors.js';
import { parseComputeResourceId, parseProviderId, sameResourceId } from '../domain/resource-id.js';
import type { NodeScanOptions, NodesPort } from '../ports/kubernetes/index.js';

export async function keptNodes(
  kube: { readonly nodes: Pick<NodesPort, 'scan'> },
  keep: (node: ClusterNode) => boolean,
  options: NodeScanOptions = {},
): Promise<ClusterNode[]> {
  let kept: ClusterNode[] = [];
  await kube.nodes.scan(
    (page) => {
      for (const node of page) if (keep(node)) kept.push(node);
    },
    () => {
      // The list restarted from its first page (its continue token expired): what was kept comes again.
      kept = [];
    },
    options,
  );
  return kept;
}

/** The resource id a node's providerID names (a Uniform instance or a Flexible member VM). */
export function resourceIdOfNode(node: Pick<ClusterNode, 'providerId'>): string | undefined {
  const parsed = parseProviderId(node.providerId);
  if (!parsed.ok) return undefined;
  const id = parsed.providerId;
  return id.kind === 'scale-set-instance'
    ? `/subscriptions/${id.scaleSet.subscriptionId}/resourceGroups/${id.scaleSet.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${id.scaleSet.name}/virtualMachines/${id.instanceId}`
    : `/subscriptions/${id.virtualMachine.subscriptionId}/resourceGroups/${id.virtualMachine.resourceGroup}/providers/Microsoft.Compute/virtualMachines/${id.virtualMachine.name}`;
}

/**
 * Labels that name a node's agent pool: aks-engine's `agentpool` (its kubelet's `--node-labels`, from
 * the pool's name) and AKS's `kubernetes.azure.com/agentpool`. Every node of a pool carries the same
 * value, so an equality selector on one lists exactly the pool's nodes — when the pool's nodes carry it.
 */
export const POOL_LABELS: readonly string[] = ['agentpool', 'kubernetes.azure.com/agentpool'];

/** Scale set tags naming the pool, and the node label carrying the same name (aks-engine's, AKS's). */
const POOL_NAME_TAGS: readonly (readonly [tag: string, label: string])[] = [
  ['poolName', 'agentpool'],
  ['aks-managed-poolName', 'kubernetes.azure.com/agentpool'],
];

/**
 * The pool label (POOL_LABELS) a scale set's tags suggest, read from ARM with the model, without a node
 * read: aks-engine tags its scale sets `poolName` and its kubelets label the nodes `agentpool` with the
 * same value; AKS tags `aks-managed-poolName` and labels `kubernetes.azure.com/agentpool`. Only a
 * suggestion: a caller trusts it only when the nodes it selects include a member of the pool.
 */
export function suggestedPoolLabel(
  tags: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> | undefined {
  for (const [tag, label] of POOL_NAME_TAGS) {
    const entry = Object.entries(tags).find(([key]) => key.toLowerCase() === tag.toLowerCase());
    if (entry !== undefined && entry[1] !== '') return { [label]: entry[1] };
  }
  return undefined;
}

/** Nodes looked up by name (one GET each) before a pool list falls back to the whole cluster's. */
export const MAX_NAME_LOOKUPS = 10;

/** Nodes of the pool whose labels are read to find the pool's label. */
const LABEL_PROBES = 3;

type PoolInstance = Pick<ScaleSetInstance, 'resourceId' | 'computerName'>;

/**
 * The nodes of `wanted` (by default every one of `instances`, a scale set's instances as ARM lists them),
 * matched by providerID, without listing
 * the whole cluster where the pool's nodes carry a pool label (POOL_LABELS): the label's value is read off
 * a member found by its computer name (a GET), the pool's nodes are listed with that label, and a member
 * the selected list missed (a node relabelled, or one not registered yet) is looked up by its computer
 * name. When no member can be found by name, a member carries no pool label, or more than
 * MAX_NAME_LOOKUPS members are missing from the selected list, the whole cluster is scanned as before:
 * correct whatever the nodes carry. A node registered under another machine's name (a clone) is found
 * when it carries the pool's label (a clone takes over its donor's node, a node of the same pool).
 */
export async function poolMemberNodes(
  kube: { readonly nodes: Pick<NodesPort, 'scan' | 'get'> },
  instances: readonly PoolInstance[],
  wanted: readonly PoolInstance[] = instances,
): Promise<ClusterNode[]> {
  if (wanted.length === 0) return [];
  return poolMemberNodesByLabel(kube, wanted, await poolLabelOf(kube, instances));
}

/**
 * poolMemberNodes with the pool's label already read (poolLabelOf; undefined: scan the whole cluster), for a
 * caller that selects other nodes of the pool by the same label (status: the holdings' marked nodes).
 */
export async function poolMemberNodesByLabel(
  kube: { readonly nodes: Pick<NodesPort, 'scan' | 'get'> },
  wanted: readonly PoolInstance[],
  labels: Readonly<Record<string, string>> | undefined,
): Promise<ClusterNode[]> {
  if (wanted.length === 0) return [];
  return (await poolMembersAndKept(kube, wanted, labels, () => false)).members;
}

/**
 * poolMemberNodesByLabel, and from the same pages the other nodes `alsoKept` accepts (status: the nodes a
 * run marked, which the holdings read looks for under the same label): one listing of the pool's nodes
 * instead of two. Where the members need the whole cluster scanned, the others are looked for there too.
 * A node's membership is one lookup by its resource ID (a pool's pages hold hundreds of nodes).
 */
export async function poolMembersAndKept(
  kube: { readonly nodes: Pick<NodesPort, 'scan' | 'get'> },
  wanted: readonly PoolInstance[],
  labels: Readonly<Record<string, string>> | undefined,
  alsoKept: (node: ClusterNode) => boolean,
): Promise<{ readonly members: ClusterNode[]; readonly kept: ClusterNode[] }> {
  const ids = new Set(
    wanted
      .filter((instance) => parseComputeResourceId(instance.resourceId).ok)
      .map((instance) => instance.resourceId.toLowerCase()),
  );
  const isMember = (node: ClusterNode): boolean => memberIdOf(node, ids) !== undefined;
  const keep = (node: ClusterNode): boolean => isMember(node) || alsoKept(node);
  let found = await keptNodes(kube, keep, labels === undefined ? {} : { labels });
  if (labels !== undefined) {
    const foundIds = new Set(found.map((node) => memberIdOf(node, ids)));
    const missing = wanted.filter((instance) => !foundIds.has(instance.resourceId.toLowerCase()));
    if (missing.length > MAX_NAME_LOOKUPS) {
      found = await keptNodes(kube, keep);
    } else {
      const names = new Set(found.map((node) => node.name));
      for (const instance of missing) {
        const name = instance.computerName?.toLowerCase();
        if (name === undefined || names.has(name)) continue;
        const node = await kube.nodes.get(name).catch(ignoreNotFound);
        if (node !== undefined && sameResourceId(resourceIdOfNode(node), instance.resourceId))
          found.push(node);
      }
    }
  }
  return { members: found.filter(isMember), kept: found.filter(alsoKept) };
}

const AZURE_SCHEME = 'azure://';

/**
 * The node's resource id lowercased (`resourceIdOfNode`) when it is one of `ids` (lowercased resource ids
 * that parse), else undefined, without parsing the providerID: the path after its scheme, lowercased, is
 * that id whenever the providerID parses, and a path equal to an id that parses parses too. A status
 * tested every node of every pool this way, and parsing each providerID (segments, refs, the id built
 * again) three times was 96 MB of a 20 000-node status's allocations (docs/scale.md).
 */
function memberIdOf(node: Pick<ClusterNode, 'providerId'>, ids: ReadonlySet<string>): string | undefined {
  const value = node.providerId?.trim();
  if (value === undefined || value.slice(0, AZURE_SCHEME.length).toLowerCase() !== AZURE_SCHEME)
    return undefined;
  const id = value.slice(AZURE_SCHEME.length).toLowerCase();
  return ids.has(id) ? id : undefined;
}

/**
 * The pool label (POOL_LABELS) of the first member found under its computer name, as a selector; undefined
 * when none is found among the first few, or the one found carries no pool label (then no label is
 * trusted to select the pool).
 */
export async function poolLabelOf(
  kube: { readonly nodes: Pick<NodesPort, 'get'> },
  instances: readonly PoolInstance[],
): Promise<Readonly<Record<string, string>> | undefined> {
  let probes = 0;
  for (const instance of instances) {
    const name = instance.computerName?.toLowerCase();
    if (name === undefined) continue;
    if (probes++ >= LABEL_PROBES) return undefined;
    const node = await kube.nodes.get(name).catch(ignoreNotFound);
    if (node === undefined || !sameResourceId(resourceIdOfNode(node), instance.resourceId)) continue;
    return poolLabelOn(node);
  }
  return undefined;
}

/**
 * The pool label (POOL_LABELS) of the node named `name`, a node known to be of the pool (one GET), or
 * undefined when it is gone or carries none.
 */
export async function poolLabelOfNode(
  kube: { readonly nodes: Pick<NodesPort, 'get'> },
  name: string,
): Promise<Readonly<Record<string, string>> | undefined> {
  const node = await kube.nodes.get(name).catch(ignoreNotFound);
  return node === undefined ? undefined : poolLabelOn(node);
}

function poolLabelOn(node: Pick<ClusterNode, 'labels'>): Readonly<Record<string, string>> | undefined {
  for (const key of POOL_LABELS) {
    const value = node.labels[key];
    if (value !== undefined && value !== '') return { [key]: value };
  }
  return undefined;
}
