/**
 * The cluster's nodes over @kubernetes/client-node: paged lists, reads, merge patches of annotations,
 * labels, the cordon and taints, and the core/v1 Events recorded about them.
 */
import { createHash } from 'node:crypto';

import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Taint,
} from '@kubernetes/client-node';

import type { ClusterNode, NodeTaint } from '../../domain/cluster-node.js';
import { TerminalError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import type { NodeEvent, NodeScanOptions, NodesPort } from '../../ports/kubernetes/index.js';
import { type KubeConnection, PAGE_SIZE } from './client-node-connection.js';
import { toClusterNode } from './to-domain.js';

/** Events about nodes live in `default` (the API server's rule for core/v1 Events of cluster-scoped objects). */
export const NODE_EVENTS_NAMESPACE = 'default';

export class ClientNodeNodes implements NodesPort {
  readonly #connection: KubeConnection;
  readonly #core: CoreV1Api;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#core = new CoreV1Api(connection.configuration);
  }

  async list(): Promise<ClusterNode[]> {
    let nodes: ClusterNode[] = [];
    await this.scan(
      (page) => {
        nodes.push(...page);
      },
      () => {
        nodes = [];
      },
    );
    return nodes;
  }

  async scan(
    visit: (page: readonly ClusterNode[]) => void | Promise<void>,
    restart: () => void,
    options: NodeScanOptions = {},
  ): Promise<void> {
    const labelSelector = Object.entries(options.labels ?? {})
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const context = {
      action: labelSelector === '' ? 'listing nodes' : `listing nodes with labels ${labelSelector}`,
      kind: 'Node',
    };
    // Each page is converted as it arrives and its raw objects dropped: memory is bounded by a page. The
    // page is read as plain JSON (getJson), not deserialised into V1Node instances: toClusterNode reads
    // the same fields, and takes the timestamps as the RFC 3339 strings the server sent.
    await this.#connection.eachPage(
      context,
      async (page) =>
        toNodeListPage(
          await this.#connection.getJson(context, '/api/v1/nodes', {
            limit: String(PAGE_SIZE),
            ...(labelSelector === '' ? {} : { labelSelector }),
            ...(page._continue === undefined ? {} : { continue: page._continue }),
          }),
        ),
      (items) => visit(items.map(toClusterNode)),
      restart,
    );
  }

  async get(name: string): Promise<ClusterNode> {
    const node = await this.#connection.call({ action: `reading node ${name}`, kind: 'Node' }, () =>
      this.#core.readNode({ name }),
    );
    return toClusterNode(node);
  }

  async patchAnnotations(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    // JSON merge patch: a key set to null is removed, keys not named are left alone.
    await this.#patch(`annotating node ${name}`, name, { metadata: { annotations: { ...changes } } });
  }

  async patchLabels(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    await this.#patch(`labelling node ${name}`, name, { metadata: { labels: { ...changes } } });
  }

  async setUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    // Uncordon removes the field rather than writing false, leaving the node exactly as kubectl
    // uncordon does (its two-way strategic merge patch sends null for the omitempty field).
    const body = { spec: { unschedulable: unschedulable ? true : null } };
    await this.#patch(`${unschedulable ? 'cordoning' : 'uncordoning'} node ${name}`, name, body);
  }

  async setTaint(name: string, key: string, taint: NodeTaint | null): Promise<void> {
    const action = `${taint === null ? 'untainting' : 'tainting'} node ${name}`;
    const node = await this.#connection.call({ action, kind: 'Node' }, () => this.#core.readNode({ name }));
    const current = node.spec?.taints ?? [];
    const next = withTaint(current, key, taint);
    if (JSON.stringify(next) === JSON.stringify(current)) return;
    // spec.taints is replaced as a whole: the resourceVersion makes a concurrent change a 409, not a loss.
    await this.#patch(action, name, {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      spec: { taints: next },
    });
  }

  async recordEvent(event: NodeEvent): Promise<void> {
    // Events about cluster-scoped objects live in `default` (as the kubelet's about its node do).
    const namespace = NODE_EVENTS_NAMESPACE;
    const name = `${event.node}.${createHash('sha256').update(event.key).digest('hex').slice(0, 16)}`;
    const at = new Date(event.at);
    try {
      await this.#connection.call(
        { action: `recording event ${event.reason} about node ${event.node}`, kind: 'Event' },
        () =>
          this.#core.createNamespacedEvent({
            namespace,
            body: {
              metadata: { name, namespace },
              involvedObject: { apiVersion: 'v1', kind: 'Node', name: event.node },
              type: event.type,
              reason: event.reason,
              message: event.message.slice(0, 1024),
              source: { component: 'vmss-prototype' },
              reportingComponent: 'vmss-prototype',
              firstTimestamp: at,
              lastTimestamp: at,
              count: 1,
            },
          }),
      );
    } catch (error) {
      // The same key was recorded by an earlier attempt: the event is there.
      if (error instanceof TerminalError && error.code === 'KubeAlreadyExists') return;
      throw error;
    }
  }

  async #patch(action: string, name: string, body: object): Promise<void> {
    await this.#connection.call({ action, kind: 'Node' }, () =>
      // Without an explicit Content-Type the generated client sends json-patch+json.
      this.#core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
    );
  }
}

/** A NodeList as the server sent it: `items` are V1Node-shaped (timestamps still strings). */
function toNodeListPage(body: unknown): { items: V1Node[]; metadata: { _continue?: string } } {
  const list = body as { items?: unknown; metadata?: { continue?: unknown } } | null;
  if (list === null || typeof list !== 'object' || !Array.isArray(list.items)) {
    throw new TerminalError(
      'MalformedKubeObject',
      'listing nodes: the API server answered without an items list; check that the URL is the API server',
    );
  }
  const token = list.metadata?.continue;
  return {
    items: list.items as V1Node[],
    metadata: typeof token === 'string' && token !== '' ? { _continue: token } : {},
  };
}

/** The node's taints with `key`'s replaced by `taint` (or removed), others kept as they were. */
function withTaint(current: readonly V1Taint[], key: string, taint: NodeTaint | null): V1Taint[] {
  const others = current.filter((entry) => entry.key !== key);
  return taint === null
    ? others
    : [
        ...others,
        {
          key: taint.key,
          effect: taint.effect,
          ...definedOnly({ value: taint.value }),
        },
      ];
}
