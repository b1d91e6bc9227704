/**
 * App settings that point the product at a simulator, from its connection file. Apart from
 * sim-session.ts so that connecting to a running simulator (`--sim-connect`) does not load the simulator.
 */
import type { SimulatorConnection } from '../sim/connection.js';

/** A digest-pinned image for the prep pod; the simulator does not pull images. */
const SIM_PREP_IMAGE =
  'mcr.microsoft.com/cbl-mariner/busybox:2.0@sha256:2f3b1f4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d';
/** The simulator accepts any bearer token on ARM and authorizes by action list. */
export const SIM_ARM_TOKEN = 'vmss-prototype-sim-arm-token';

/** One app-settings environment for every simulated cluster: pools discovered (`all`), defaults elsewhere. */
export function settingsForConnection(connection: SimulatorConnection): Record<string, string> {
  const env: Record<string, string> = {};
  const clusters = connection.clusters.map((cluster) => {
    const tokenKey = `VMSSP_SECRET_SIM_${cluster.name.toUpperCase().replaceAll(/[^A-Z0-9]/g, '_')}_TOKEN`;
    env[tokenKey] = cluster.serviceAccountToken;
    return {
      name: cluster.name,
      subscriptionId: connection.subscriptionId,
      resourceGroup: cluster.resourceGroup,
      apiServer: {
        url: cluster.kubeHttpsUrl,
        caCertificate: { pem: connection.caPem },
        auth: { serviceAccountToken: { env: tokenKey } },
      },
      pools: 'all',
      capture: { mode: 'drain-and-stop', prepImage: SIM_PREP_IMAGE, drainGracePeriod: '5s' },
    };
  });
  env['VMSSP_CLUSTERS'] = JSON.stringify(clusters);
  return env;
}
