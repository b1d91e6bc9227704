/**
 * The simulator's connection file: what a client in another process needs to reach a running
 * simulator (endpoints, CA, tokens). `npm run sim` writes it; `vmss-prototype --sim-connect` reads it.
 */
import { writeFile } from 'node:fs/promises';

import type { RunningSimulator } from './index.js';

/** What a client needs to reach a running simulator: written by one process, read by another. */
export interface SimulatorConnection {
  readonly armEndpoint: string;
  readonly caPem: string;
  readonly subscriptionId: string;
  /** Opens `/_sim/` on the ARM endpoint (time, faults, world state). */
  readonly adminToken: string;
  readonly clusters: readonly {
    readonly name: string;
    /** The cluster's subscription when it is not the simulator's (a fleet over several). */
    readonly subscriptionId?: string;
    readonly resourceGroup: string;
    readonly kubeHttpsUrl: string;
    readonly serviceAccountToken: string;
    /** A CAPZ-managed workload cluster: where its Cluster API objects live. */
    readonly managementCluster?: {
      readonly name: string;
      readonly namespace: string;
      readonly clusterName: string;
    };
    /** A Cluster API management cluster: the namespace its objects live in by default. */
    readonly clusterApi?: { readonly namespace: string };
  }[];
}

export function connectionOf(running: RunningSimulator): SimulatorConnection {
  return {
    armEndpoint: running.armEndpoint,
    caPem: running.caPem,
    subscriptionId: running.subscriptionId,
    adminToken: running.tokens.admin,
    clusters: running.clusters.map((endpoint) => {
      const spec = running.world.cluster(endpoint.name).world.spec;
      const managedBy = spec.managedBy;
      const management = running.world.scenario.clusters.find(
        (cluster) => cluster.name === managedBy?.managementCluster,
      );
      return {
        name: endpoint.name,
        ...(spec.subscriptionId === undefined ? {} : { subscriptionId: spec.subscriptionId }),
        resourceGroup: spec.resourceGroup,
        kubeHttpsUrl: endpoint.kubeHttpsUrl,
        serviceAccountToken: endpoint.tokens.serviceAccount,
        ...(managedBy && management?.clusterApi
          ? {
              managementCluster: {
                name: managedBy.managementCluster,
                namespace: managedBy.namespace ?? management.clusterApi.namespace,
                clusterName: managedBy.clusterName ?? spec.name,
              },
            }
          : {}),
        ...(spec.clusterApi ? { clusterApi: { namespace: spec.clusterApi.namespace } } : {}),
      };
    }),
  };
}

export async function writeConnectionFile(path: string, connection: SimulatorConnection): Promise<void> {
  await writeFile(path, `${JSON.stringify(connection, null, 2)}\n`, { encoding: 'utf8', mode: 0o600 });
}
