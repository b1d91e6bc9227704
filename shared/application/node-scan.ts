/**
 * The nodes a step needs, read page by page and kept only when they matter to it: memory holds one page
 * and what is kept (a pool's members, the nodes carrying our marker), never the whole cluster's list —
 * 20 000 nodes are ~280 MB as one list (issue 14, bench `planner-memory`).
 */
import type { ClusterNode } from '../domain/cluster-node.js';
import type { NodesPort } from '../ports/kubernetes/index.js';

export async function keptNodes(
  kube: { readonly nodes: Pick<NodesPort, 'scan'> },
  keep: (node: ClusterNode) => boolean,
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
  );
  return kept;
}
