/** The fake cluster's DaemonSets: each runs everywhere (no selector, tolerates every taint). */
import type { DaemonSetTarget } from '../../../domain/canary.js';
import type { DaemonSetsPort, KubernetesMethod } from '../../kubernetes/index.js';
import type { CallLog } from '../recording-fake.js';

export class FakeDaemonSets implements DaemonSetsPort {
  #daemonSets = new Set<string>();

  constructor(private readonly log: CallLog<KubernetesMethod>) {}

  add(namespace: string, name: string): void {
    this.#daemonSets.add(`${namespace}/${name}`);
  }

  reset(): void {
    this.#daemonSets = new Set();
  }

  exists(namespace: string, name: string): Promise<boolean> {
    return this.log.call('daemonSets.exists', [namespace, name], () =>
      this.#daemonSets.has(`${namespace}/${name}`),
    );
  }

  list(): Promise<DaemonSetTarget[]> {
    return this.log.call('daemonSets.list', [], () =>
      [...this.#daemonSets].map((key) => {
        const [namespace = '', name = ''] = key.split('/');
        return {
          namespace,
          name,
          uid: key,
          nodeSelector: {},
          requiredNodeAffinity: [],
          tolerations: [{ operator: 'Exists' }],
        };
      }),
    );
  }
}
