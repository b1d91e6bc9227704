/**
 * Pods over @kubernetes/client-node: the ones on a node (a drain lists and evicts them), the product's
 * own one-shot pods (created, read, deleted), and a namespace's pods by label.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';

import type { PodOnNode } from '../../domain/drain.js';
import { ignoreNotFound, isNotFound, TerminalError } from '../../domain/errors.js';
import type {
  CheckPodSpec,
  EvictionOutcome,
  PodOutcome,
  PodPhase,
  PodsPort,
  PodSummary,
  PrepPodSpec,
} from '../../ports/kubernetes/index.js';
import { type KubeConnection, PAGE_SIZE } from './client-node-connection.js';
import { disruptionBudgetRefusal, parseStatusBody, toRefreshError } from './errors.js';
import { checkPodManifest, prepPodManifest, toPodOutcome } from './pod-manifests.js';
import { toPodOnNode, toPodPhase } from './to-domain.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function qualifiedPod(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class ClientNodePods implements PodsPort {
  readonly #connection: KubeConnection;
  readonly #core: CoreV1Api;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#core = new CoreV1Api(connection.configuration);
  }

  async listOnNode(nodeName: string): Promise<PodOnNode[]> {
    // The name goes into a field selector: anything but a DNS subdomain could widen or break it.
    if (!DNS_SUBDOMAIN.test(nodeName)) {
      throw new TerminalError(
        'InvalidNodeName',
        `listing pods on node ${JSON.stringify(nodeName)}: not a valid node name`,
      );
    }
    const context = { action: `listing pods on node ${nodeName}`, kind: 'Pod' };
    const pods = await this.#connection.paged(context, (page) =>
      this.#core.listPodForAllNamespaces({
        fieldSelector: `spec.nodeName=${nodeName}`,
        limit: PAGE_SIZE,
        ...page,
      }),
    );
    return pods.map(toPodOnNode);
  }

  async list(namespace: string, labels: Readonly<Record<string, string>>): Promise<PodSummary[]> {
    const labelSelector = Object.entries(labels)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const context = { action: `listing pods of namespace ${namespace}`, kind: 'Pod' };
    const pods = await this.#connection.paged(context, (page) =>
      this.#core.listNamespacedPod({ namespace, labelSelector, limit: PAGE_SIZE, ...page }),
    );
    return pods.map((pod) => {
      const nodeName = pod.spec?.nodeName;
      return {
        namespace,
        name: pod.metadata?.name ?? '',
        labels: { ...pod.metadata?.labels },
        phase: toPodPhase(pod.status?.phase),
        ...(nodeName === undefined || nodeName === '' ? {} : { nodeName }),
      };
    });
  }

  async evict(
    namespace: string,
    name: string,
    gracePeriodSeconds: number | undefined,
  ): Promise<EvictionOutcome> {
    const context = { action: `evicting pod ${qualifiedPod(namespace, name)}`, kind: 'Pod' };
    try {
      await this.#core.createNamespacedPodEviction({
        namespace,
        name,
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace },
          ...(gracePeriodSeconds === undefined ? {} : { deleteOptions: { gracePeriodSeconds } }),
        },
      });
      return { kind: 'evicted' };
    } catch (error) {
      const mapped = toRefreshError(error, { ...context, apiServer: this.#connection.apiServer });
      if (isNotFound(mapped)) return { kind: 'gone' };
      if (mapped.code === 'EvictionBlockedByDisruptionBudget') {
        const status = parseStatusBody((error as { body?: unknown }).body);
        return { kind: 'blocked', message: disruptionBudgetRefusal(status) ?? mapped.message };
      }
      throw mapped;
    }
  }

  async createPrepPod(spec: PrepPodSpec): Promise<void> {
    const pod = qualifiedPod(spec.namespace, spec.name);
    try {
      await this.#connection.call(
        { action: `creating prep pod ${pod} on node ${spec.nodeName}`, kind: 'Pod' },
        () => this.#core.createNamespacedPod({ namespace: spec.namespace, body: prepPodManifest(spec) }),
      );
    } catch (error) {
      if (!(error instanceof TerminalError) || error.code !== 'KubeAlreadyExists') throw error;
      // A retried activity finds its own pod. A same-named pod on another node is someone else's.
      const existing = await this.#readPod(spec.namespace, spec.name);
      const boundTo = existing?.spec?.nodeName;
      if (existing !== undefined && boundTo !== undefined && boundTo !== spec.nodeName) {
        throw new TerminalError(
          'PrepPodConflict',
          `creating prep pod ${pod} on node ${spec.nodeName}: a pod of that name already runs on node ${boundTo}`,
          { cause: error },
        );
      }
    }
  }

  async getPhase(namespace: string, name: string): Promise<PodPhase | undefined> {
    const pod = await this.#readPod(namespace, name);
    return pod === undefined ? undefined : toPodPhase(pod.status?.phase);
  }

  async delete(namespace: string, name: string, gracePeriodSeconds = 0): Promise<void> {
    try {
      await this.#connection.call(
        { action: `deleting pod ${qualifiedPod(namespace, name)}`, kind: 'Pod' },
        () => this.#core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds }),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async createCheckPod(spec: CheckPodSpec): Promise<void> {
    const pod = qualifiedPod(spec.namespace, spec.name);
    try {
      await this.#connection.call(
        { action: `creating check pod ${pod} on node ${spec.nodeName}`, kind: 'Pod' },
        () => this.#core.createNamespacedPod({ namespace: spec.namespace, body: checkPodManifest(spec) }),
      );
    } catch (error) {
      // A retried activity finds its own pod.
      if (!(error instanceof TerminalError) || error.code !== 'KubeAlreadyExists') throw error;
    }
  }

  async getOutcome(namespace: string, name: string): Promise<PodOutcome | undefined> {
    const pod = await this.#readPod(namespace, name);
    return pod === undefined ? undefined : toPodOutcome(pod);
  }

  async #readPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    return this.#connection
      .call({ action: `reading pod ${qualifiedPod(namespace, name)}`, kind: 'Pod' }, () =>
        this.#core.readNamespacedPod({ namespace, name }),
      )
      .catch(ignoreNotFound);
  }
}
