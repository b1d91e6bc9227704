/**
 * In-memory Kubernetes ports for fast tests: one fake per resource (server, nodes, pods, DaemonSets,
 * leases, pool policies), sharing one clock and one call log. They keep the ports' contract: NotFoundError for missing
 * reads, no-op deletions of absent pods, idempotent writes. Calls are logged as `<port>.<method>`
 * (`nodes.get`, `pods.evict`); `nextError` queues one-shot failures, `failAllUntil` an API server
 * outage; `reset` starts afresh. Each fake has its own test controls (`nodes.add`, `pods.add`,
 * `leases.put`, `server.deny`…). `onPrepPodCreated` lets a test connect the prep pod to a compute fake
 * (it powers the host off).
 */
import type { KubernetesMethod, KubernetesPorts } from '../../kubernetes/index.js';
import { CallLog, RecordingFake } from '../recording-fake.js';
import { FakeDaemonSets } from './daemon-sets.js';
import { FakeLeases } from './leases.js';
import { FakeNodes } from './nodes.js';
import { FakePods, type FakePodsOptions } from './pods.js';
import { FakePoolPolicies } from './pool-policies.js';
import { FakeServer } from './server.js';

export { FakeDaemonSets } from './daemon-sets.js';
export { FakeLeases } from './leases.js';
export { FakeNodes } from './nodes.js';
export { FakePods, type FakePodsOptions } from './pods.js';
export { FakePoolPolicies } from './pool-policies.js';
export { FakeServer } from './server.js';

export interface FakeKubernetesOptions extends FakePodsOptions {
  /** The clock pod phases follow (epoch ms); a test's virtual clock. Default: Date.now. */
  readonly now?: () => number;
  /** The API server's clock, sent with every lease answer (`serverTime`). Default: none (no `Date` header). */
  readonly serverNow?: () => number;
  /** Nodes per page of `nodes.scan` (each page is one recorded `nodes.scan` call). Default 500. */
  readonly nodePageSize?: number;
}

export class FakeKubernetes extends RecordingFake<KubernetesMethod> implements KubernetesPorts {
  readonly server: FakeServer;
  readonly nodes: FakeNodes;
  readonly pods: FakePods;
  readonly daemonSets: FakeDaemonSets;
  readonly leases: FakeLeases;
  readonly poolPolicies: FakePoolPolicies;

  constructor(options: FakeKubernetesOptions = {}) {
    super(new CallLog<KubernetesMethod>(options.now ?? (() => Date.now())));
    this.server = new FakeServer(this.log);
    this.nodes = new FakeNodes(this.log, options.nodePageSize);
    this.pods = new FakePods(this.log, options);
    this.daemonSets = new FakeDaemonSets(this.log);
    this.leases = new FakeLeases(this.log, options.serverNow);
    this.poolPolicies = new FakePoolPolicies(this.log);
  }

  /** Removes a node and the pods bound to it. */
  removeNode(name: string): void {
    this.nodes.remove(name);
    this.pods.removeOn(name);
  }

  override reset(): void {
    super.reset();
    this.server.reset();
    this.nodes.reset();
    this.pods.reset();
    this.daemonSets.reset();
    this.leases.reset();
    this.poolPolicies.reset();
  }
}
