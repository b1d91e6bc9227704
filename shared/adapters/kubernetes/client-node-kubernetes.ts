/**
 * The Kubernetes ports of one cluster over @kubernetes/client-node: one connection (client setup, error
 * mapping, pooled connections) shared by the per-resource adapters.
 */
import type { KubernetesPorts } from '../../ports/kubernetes/index.js';
import { type ClientNodeKubernetesOptions, KubeConnection } from './client-node-connection.js';
import { ClientNodeDaemonSets } from './client-node-daemon-sets.js';
import { ClientNodeLeases } from './client-node-leases.js';
import { ClientNodeNodes } from './client-node-nodes.js';
import { ClientNodePods } from './client-node-pods.js';
import { ClientNodePoolPolicies } from './client-node-pool-policies.js';
import { ClientNodeServer } from './client-node-server.js';

export type { ClientNodeKubernetesOptions } from './client-node-connection.js';

/** The ports, and what closes their pooled connections (for the CLI and tests, which must exit cleanly). */
export interface ClientNodeKubernetes extends KubernetesPorts {
  close(): Promise<void>;
}

/** Validates the options (a TerminalError names what is wrong) and binds the ports to one API server. */
export function clientNodeKubernetes(options: ClientNodeKubernetesOptions): ClientNodeKubernetes {
  const connection = new KubeConnection(options);
  return {
    server: new ClientNodeServer(connection),
    nodes: new ClientNodeNodes(connection),
    pods: new ClientNodePods(connection),
    daemonSets: new ClientNodeDaemonSets(connection),
    leases: new ClientNodeLeases(connection),
    poolPolicies: new ClientNodePoolPolicies(connection),
    close: () => connection.close(),
  };
}
