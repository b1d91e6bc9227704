/** The fake cluster's nodes: annotations, labels, cordons and taints; listed in pages of `pageSize`. */
import type { ClusterNode, NodeTaint } from '../../../domain/cluster-node.js';
import { NotFoundError } from '../../../domain/errors.js';
import type { KubernetesMethod, NodeEvent, NodeScanOptions, NodesPort } from '../../kubernetes/index.js';
import type { CallLog } from '../recording-fake.js';

export class FakeNodes implements NodesPort {
  #nodes = new Map<string, ClusterNode>();
  readonly #events = new Map<string, NodeEvent>();

  /** `pageSize`: nodes per page of `scan` (each page is one recorded `nodes.scan` call). */
  constructor(
    private readonly log: CallLog<KubernetesMethod>,
    private readonly pageSize = 500,
  ) {}

  // ---- test controls -----------------------------------------------------------------------------

  add(node: ClusterNode): void {
    this.#nodes.set(node.name, node);
  }

  remove(name: string): void {
    this.#nodes.delete(name);
  }

  /** A node as it is now (test setup and assertions). */
  node(name: string): ClusterNode | undefined {
    return this.#nodes.get(name);
  }

  reset(): void {
    this.#nodes = new Map();
    this.#events.clear();
  }

  /** The events recorded about nodes, one per key, in the order first recorded. */
  events(): NodeEvent[] {
    return [...this.#events.values()];
  }

  // ---- the port ----------------------------------------------------------------------------------

  list(): Promise<ClusterNode[]> {
    return this.log.call('nodes.list', [], () => [...this.#nodes.values()]);
  }

  async scan(
    visit: (page: readonly ClusterNode[]) => void | Promise<void>,
    _restart: () => void,
    options: NodeScanOptions = {},
  ): Promise<void> {
    const size = Math.max(1, this.pageSize);
    const wanted = Object.entries(options.labels ?? {});
    // The server filters before it pages: a selected list has only the matching nodes' pages.
    const names = [...this.#nodes.values()]
      .filter((node) => wanted.every(([key, value]) => node.labels[key] === value))
      .map((node) => node.name);
    const selector = wanted.length === 0 ? [] : [options.labels];
    let offset = 0;
    do {
      // One recorded call per page, as the API server sees one list request per page.
      const page = await this.log.call('nodes.scan', [offset, ...selector], () =>
        names.slice(offset, offset + size).flatMap((name) => {
          const node = this.#nodes.get(name);
          return node === undefined ? [] : [node];
        }),
      );
      await visit(page);
      offset += size;
    } while (offset < names.length);
  }

  get(name: string): Promise<ClusterNode> {
    return this.log.call('nodes.get', [name], () => this.#node(name, `reading node ${name}`));
  }

  patchAnnotations(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.log.call('nodes.patchAnnotations', [name, changes], () => {
      const node = this.#node(name, `annotating node ${name}`);
      this.#nodes.set(name, { ...node, annotations: patched(node.annotations, changes) });
    });
  }

  patchLabels(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.log.call('nodes.patchLabels', [name, changes], () => {
      const node = this.#node(name, `labelling node ${name}`);
      this.#nodes.set(name, { ...node, labels: patched(node.labels, changes) });
    });
  }

  setUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    return this.log.call('nodes.setUnschedulable', [name, unschedulable], () => {
      const node = this.#node(name, `${unschedulable ? 'cordoning' : 'uncordoning'} node ${name}`);
      this.#nodes.set(name, { ...node, unschedulable });
    });
  }

  setTaint(name: string, key: string, taint: NodeTaint | null): Promise<void> {
    return this.log.call('nodes.setTaint', [name, key, taint], () => {
      const node = this.#node(name, `tainting node ${name}`);
      const taints = node.taints.filter((entry) => entry.key !== key);
      this.#nodes.set(name, { ...node, taints: taint === null ? taints : [...taints, taint] });
    });
  }

  recordEvent(event: NodeEvent): Promise<void> {
    return this.log.call('nodes.recordEvent', [event], () => {
      if (!this.#events.has(event.key)) this.#events.set(event.key, structuredClone(event));
    });
  }

  #node(name: string, action: string): ClusterNode {
    const node = this.#nodes.get(name);
    if (node === undefined) throw new NotFoundError('NodeNotFound', `${action}: not found`);
    return node;
  }
}

/** `current` with each change set (string) or removed (null), as a JSON merge patch does. */
function patched(
  current: Readonly<Record<string, string>>,
  changes: Readonly<Record<string, string | null>>,
): Record<string, string> {
  const next: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}
