/** The cluster's DaemonSets over @kubernetes/client-node: whether one exists, and every one's targets. */
import { AppsV1Api, type V1DaemonSet } from '@kubernetes/client-node';

import type { DaemonSetTarget, NodeSelectorRequirement, TolerationLike } from '../../domain/canary.js';
import { isNotFound } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import type { DaemonSetsPort } from '../../ports/kubernetes/index.js';
import { type KubeConnection, PAGE_SIZE } from './client-node-connection.js';

export class ClientNodeDaemonSets implements DaemonSetsPort {
  readonly #connection: KubeConnection;
  readonly #apps: AppsV1Api;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#apps = new AppsV1Api(connection.configuration);
  }

  async exists(namespace: string, name: string): Promise<boolean> {
    try {
      await this.#connection.call(
        { action: `reading daemonset ${namespace}/${name}`, kind: 'DaemonSet' },
        () => this.#apps.readNamespacedDaemonSet({ namespace, name }),
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async list(): Promise<DaemonSetTarget[]> {
    const context = { action: 'listing daemonsets', kind: 'DaemonSet' };
    const daemonSets = await this.#connection.paged(context, (page) =>
      this.#apps.listDaemonSetForAllNamespaces({ limit: PAGE_SIZE, ...page }),
    );
    return daemonSets.map(toDaemonSetTarget);
  }
}

/** A DaemonSet as the canary sees it: what decides which nodes it runs on. */
function toDaemonSetTarget(daemonSet: V1DaemonSet): DaemonSetTarget {
  const spec = daemonSet.spec?.template.spec;
  const terms =
    spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return {
    namespace: daemonSet.metadata?.namespace ?? '',
    name: daemonSet.metadata?.name ?? '',
    uid: daemonSet.metadata?.uid ?? '',
    nodeSelector: { ...spec?.nodeSelector },
    requiredNodeAffinity: terms.map((term) =>
      (term.matchExpressions ?? []).map((expression): NodeSelectorRequirement => ({
        key: expression.key,
        operator: expression.operator,
        values: [...(expression.values ?? [])],
      })),
    ),
    tolerations: (spec?.tolerations ?? []).map((toleration): TolerationLike => ({
      ...definedOnly({
        key: toleration.key,
        operator: toleration.operator,
        value: toleration.value,
        effect: toleration.effect,
      }),
    })),
  };
}
