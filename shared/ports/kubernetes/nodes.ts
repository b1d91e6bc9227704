/** The cluster's nodes (shared/ports/kubernetes/index.ts has the contract every port keeps). */
import type { ClusterNode, NodeTaint } from '../../domain/cluster-node.js';

/** Which nodes a scan lists: every node, or only those carrying every one of `labels` (an equality label selector). */
export interface NodeScanOptions {
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * A core/v1 Event about a node (`kubectl describe node` and `kubectl get events` show it), recorded in
 * namespace `default`, where the API server keeps the events of cluster-scoped objects.
 */
export interface NodeEvent {
  readonly node: string;
  readonly type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. `BuiltFromRejectedVersion`. */
  readonly reason: string;
  readonly message: string;
  /** What makes the event one of a kind: the same key is the same event, recorded once however often asked. */
  readonly key: string;
  /** RFC 3339. */
  readonly at: string;
}

export interface NodesPort {
  list(): Promise<ClusterNode[]>;
  /**
   * Lists the nodes page by page (limit/continue), each page converted as it arrives, so a caller that
   * folds the pages holds one page at a time. Every node is visited once, in list order; when the server
   * expires the continue token, `restart` is called and the pages come again from the first. With
   * `options.labels` the server lists only the nodes carrying those labels (`labelSelector=k=v,…`).
   */
  scan(
    visit: (page: readonly ClusterNode[]) => void | Promise<void>,
    restart: () => void,
    options?: NodeScanOptions,
  ): Promise<void>;
  get(name: string): Promise<ClusterNode>;
  /** Sets (string) or removes (null) annotations; other annotations are untouched. */
  patchAnnotations(name: string, changes: Readonly<Record<string, string | null>>): Promise<void>;
  /** Sets (string) or removes (null) labels; other labels are untouched. */
  patchLabels(name: string, changes: Readonly<Record<string, string | null>>): Promise<void>;
  /** Cordons (true) or uncordons (false) the node. */
  setUnschedulable(name: string, unschedulable: boolean): Promise<void>;
  /**
   * Puts `taint` on the node (replacing one with the same key), or removes every taint with `key` (null);
   * other taints are untouched. A concurrent change of the node is a TransientError (read again, retry).
   */
  setTaint(name: string, key: string, taint: NodeTaint | null): Promise<void>;
  /** Records an Event about a node; named after its key, so recording the same key again is a no-op. */
  recordEvent(event: NodeEvent): Promise<void>;
}
