/**
 * App settings that point the product at a simulator, from its connection file: for the CLI's `--sim` and
 * `--sim-connect` and for `npm run sim -- --function-app-settings`. A module of its own, importing no other
 * simulator code, so that connecting to a running simulator (`--sim-connect`) does not load the simulator.
 */
import type { SimulatorConnection } from './connection.js';

/** A digest-pinned image for the prep pod; the simulator does not pull images. */
const SIM_PREP_IMAGE =
  'mcr.microsoft.com/cbl-mariner/busybox:2.0@sha256:2f3b1f4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d';
/**
 * The simulator accepts any bearer token on ARM and authorizes by action list. The security suite scans
 * everything the product emits for 16-character windows of it: it shares none with the product's names.
 */
export const SIM_ARM_TOKEN = 'simulated-arm-bearer-token-4f1c';

function tokenKeyOf(cluster: string): string {
  return `VMSSP_SECRET_SIM_${cluster.toUpperCase().replaceAll(/[^A-Z0-9]/g, '_')}_TOKEN`;
}

/**
 * One app-settings environment for every simulated cluster: pools discovered (`all`), defaults elsewhere.
 * A CAPZ-managed cluster gets `capz` pointing at its simulated management cluster (rollout: the default);
 * a management cluster is not refreshed itself (the simulator grants the product only
 * infra/kubernetes/management/ there), so it is no cluster of the settings, only its token is.
 */
export function settingsForConnection(connection: SimulatorConnection): Record<string, string> {
  const env: Record<string, string> = {};
  for (const cluster of connection.clusters) env[tokenKeyOf(cluster.name)] = cluster.serviceAccountToken;
  const refreshed = connection.clusters.filter((cluster) => cluster.clusterApi === undefined);
  const clusters = refreshed.map((cluster) => {
    const tokenKey = tokenKeyOf(cluster.name);
    const managedBy = cluster.managementCluster;
    const management =
      managedBy === undefined
        ? undefined
        : connection.clusters.find((candidate) => candidate.name === managedBy.name);
    return {
      name: cluster.name,
      subscriptionId: cluster.subscriptionId ?? connection.subscriptionId,
      resourceGroup: cluster.resourceGroup,
      apiServer: {
        url: cluster.kubeHttpsUrl,
        caCertificate: { pem: connection.caPem },
        auth: { serviceAccountToken: { env: tokenKey } },
      },
      pools: 'all',
      capture: { mode: 'drain-and-stop', prepImage: SIM_PREP_IMAGE, drainGracePeriod: '5s' },
      ...(managedBy === undefined || management === undefined
        ? {}
        : {
            capz: {
              managementCluster: {
                url: management.kubeHttpsUrl,
                caCertificate: { pem: connection.caPem },
                auth: { serviceAccountToken: { env: tokenKeyOf(management.name) } },
              },
              namespace: managedBy.namespace,
            },
          }),
    };
  });
  env['VMSSP_CLUSTERS'] = JSON.stringify(clusters);
  return env;
}

/** The simulator's settings with every CAPZ cluster's `capz.rollout` set (`--capz-rollout`); as they are without. */
export function withCapzRollout(
  env: Record<string, string>,
  rollout: 'allow' | 'refuse' | undefined,
): Record<string, string> {
  const text = env['VMSSP_CLUSTERS'];
  if (rollout === undefined || text === undefined) return env;
  const clusters = JSON.parse(text) as { capz?: Record<string, unknown> }[];
  for (const cluster of clusters) if (cluster.capz !== undefined) cluster.capz['rollout'] = rollout;
  return { ...env, VMSSP_CLUSTERS: JSON.stringify(clusters) };
}
