/**
 * The Cluster API ports of one management cluster over @kubernetes/client-node: one connection, built
 * like the workload cluster's (shared/adapters/kubernetes/client-node-connection.ts), shared by the
 * MachinePools adapter and the server port `doctor` checks the management cluster with.
 */
import type { ClusterApiPorts } from '../../ports/cluster-api/machine-pools.js';
import type { ServerPort } from '../../ports/kubernetes/index.js';
import { type ClientNodeKubernetesOptions, KubeConnection } from '../kubernetes/client-node-connection.js';
import { ClientNodeServer } from '../kubernetes/client-node-server.js';
import { ClientNodeMachinePools } from './client-node-machine-pools.js';

/** The ports, the management cluster's server (version, access reviews), and what closes the connections. */
export interface ClientNodeClusterApi extends ClusterApiPorts {
  readonly server: ServerPort;
  close(): Promise<void>;
}

/** Validates the options (a TerminalError names what is wrong) and binds the ports to the management cluster. */
export function clientNodeClusterApi(options: ClientNodeKubernetesOptions): ClientNodeClusterApi {
  const connection = new KubeConnection(options);
  return {
    machinePools: new ClientNodeMachinePools(connection),
    server: new ClientNodeServer(connection),
    close: () => connection.close(),
  };
}
