// Tests for the simulator seam's settings (VMSSP_SIMULATOR*): honoured only under the flag, all three
// required with it, loopback only, refused on App Service, each problem naming its key, the token never echoed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { loadSettings, SettingsError, type SettingsIssue } from '../../../shared/config/settings.js';

const TOKEN = 'sim-token-3f9a1c77d2b84e0b';
const PEM =
  '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUXk1hc2ltdWxhdG9yLWNh\n-----END CERTIFICATE-----\n';
const ENDPOINT = 'https://127.0.0.1:40443';

const CLUSTER = {
  name: 'prod',
  subscriptionId: '11111111-2222-3333-4444-555555555555',
  resourceGroup: 'k8s-prod',
  apiServer: {
    url: 'https://127.0.0.1:40444',
    caCertificate: { pem: PEM },
    auth: { serviceAccountToken: { env: 'VMSSP_SECRET_PROD_TOKEN' } },
  },
  pools: 'all',
  capture: {
    mode: 'drain-and-stop',
    prepImage: `registry.example.com/busybox:1.37@sha256:${'a'.repeat(64)}`,
  },
};

function envWith(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return { VMSSP_CLUSTERS: JSON.stringify([CLUSTER]), VMSSP_SECRET_PROD_TOKEN: 'kube-token', ...extra };
}

const SEAM = {
  VMSSP_SIMULATOR: 'true',
  VMSSP_SIMULATOR_ARM_ENDPOINT: ENDPOINT,
  VMSSP_SIMULATOR_CA: PEM,
  VMSSP_SIMULATOR_ARM_TOKEN: TOKEN,
};

function failure(env: Record<string, string | undefined>): SettingsError {
  try {
    loadSettings(env);
  } catch (error) {
    assert.ok(error instanceof SettingsError, `expected a SettingsError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected loadSettings to throw');
}

void describe('VMSSP_SIMULATOR*: accepted', () => {
  const cases: readonly {
    readonly name: string;
    readonly env: Record<string, string | undefined>;
    readonly armEndpoint?: string;
    readonly waitScale?: number;
  }[] = [
    { name: 'nothing set: no seam', env: {} },
    { name: 'the flag false alone: no seam', env: { VMSSP_SIMULATOR: 'false' } },
    { name: 'the keys empty (unset): no seam', env: { VMSSP_SIMULATOR: '', VMSSP_SIMULATOR_ARM_TOKEN: ' ' } },
    { name: 'all four', env: SEAM, armEndpoint: ENDPOINT },
    {
      name: 'the flag in capitals, a trailing slash',
      env: { ...SEAM, VMSSP_SIMULATOR: 'TRUE', VMSSP_SIMULATOR_ARM_ENDPOINT: `${ENDPOINT}/` },
      armEndpoint: ENDPOINT,
    },
    {
      name: 'localhost',
      env: { ...SEAM, VMSSP_SIMULATOR_ARM_ENDPOINT: 'https://localhost:8443' },
      armEndpoint: 'https://localhost:8443',
    },
    {
      name: 'IPv6 loopback',
      env: { ...SEAM, VMSSP_SIMULATOR_ARM_ENDPOINT: 'https://[::1]:8443' },
      armEndpoint: 'https://[::1]:8443',
    },
    {
      name: 'a wait scale',
      env: { ...SEAM, VMSSP_SIMULATOR_WAIT_SCALE: '0.05' },
      armEndpoint: ENDPOINT,
      waitScale: 0.05,
    },
    {
      name: 'a wait scale of 1 (as against Azure)',
      env: { ...SEAM, VMSSP_SIMULATOR_WAIT_SCALE: '1' },
      armEndpoint: ENDPOINT,
      waitScale: 1,
    },
    {
      name: 'under Core Tools (WEBSITE_HOSTNAME=localhost:7071)',
      env: { ...SEAM, WEBSITE_HOSTNAME: 'localhost:7071' },
      armEndpoint: ENDPOINT,
    },
  ];
  for (const { name, env, armEndpoint, waitScale } of cases) {
    void it(name, () => {
      const settings = loadSettings(envWith(env));
      if (armEndpoint === undefined) {
        assert.equal(settings.simulator, undefined);
        return;
      }
      assert.deepEqual(settings.simulator, {
        armEndpoint,
        caPem: PEM.trim(),
        armToken: TOKEN,
        ...(waitScale === undefined ? {} : { waitScale }),
      });
    });
  }
});

void describe('VMSSP_SIMULATOR*: refused, naming the key and the fix', () => {
  const cases: readonly {
    readonly name: string;
    readonly env: Record<string, string | undefined>;
    readonly path: string;
    /** A fragment of "what is accepted". */
    readonly accepts: string;
    readonly received?: string;
  }[] = [
    {
      name: 'an endpoint without the flag',
      env: { VMSSP_SIMULATOR_ARM_ENDPOINT: ENDPOINT },
      path: 'VMSSP_SIMULATOR_ARM_ENDPOINT',
      accepts: 'counts only with VMSSP_SIMULATOR=true',
    },
    {
      name: 'a CA without the flag',
      env: { VMSSP_SIMULATOR_CA: PEM },
      path: 'VMSSP_SIMULATOR_CA',
      accepts: 'remove it, or set VMSSP_SIMULATOR=true',
    },
    {
      name: 'a token without the flag',
      env: { VMSSP_SIMULATOR_ARM_TOKEN: TOKEN },
      path: 'VMSSP_SIMULATOR_ARM_TOKEN',
      accepts: 'counts only with VMSSP_SIMULATOR=true',
      received: '<redacted 26-character value> while VMSSP_SIMULATOR is not "true"',
    },
    {
      name: 'the three with the flag false',
      env: { ...SEAM, VMSSP_SIMULATOR: 'false' },
      path: 'VMSSP_SIMULATOR_ARM_ENDPOINT',
      accepts: 'counts only with VMSSP_SIMULATOR=true',
    },
    {
      name: 'a wait scale without the flag',
      env: { VMSSP_SIMULATOR_WAIT_SCALE: '0.05' },
      path: 'VMSSP_SIMULATOR_WAIT_SCALE',
      accepts: "against Azure every wait is Azure's",
    },
    {
      name: 'a wait scale below 0.01',
      env: { ...SEAM, VMSSP_SIMULATOR_WAIT_SCALE: '0.001' },
      path: 'VMSSP_SIMULATOR_WAIT_SCALE',
      accepts: 'a number from 0.01 to 1',
    },
    {
      name: 'a wait scale above 1',
      env: { ...SEAM, VMSSP_SIMULATOR_WAIT_SCALE: '2' },
      path: 'VMSSP_SIMULATOR_WAIT_SCALE',
      accepts: 'a number from 0.01 to 1',
    },
    {
      name: 'a wait scale that is not a number',
      env: { ...SEAM, VMSSP_SIMULATOR_WAIT_SCALE: '5%' },
      path: 'VMSSP_SIMULATOR_WAIT_SCALE',
      accepts: 'a number from 0.01 to 1',
    },
    {
      name: 'a flag that is not true or false',
      env: { ...SEAM, VMSSP_SIMULATOR: 'yes' },
      path: 'VMSSP_SIMULATOR',
      accepts: '"true" to run against the simulator',
      received: '"yes"',
    },
    ...(['VMSSP_SIMULATOR_ARM_ENDPOINT', 'VMSSP_SIMULATOR_CA', 'VMSSP_SIMULATOR_ARM_TOKEN'] as const).map(
      (key) => ({
        name: `the flag without ${key}`,
        env: { ...SEAM, [key]: undefined },
        path: key,
        accepts: 'required with VMSSP_SIMULATOR=true (`npm run sim -- --function-app-settings <file>`',
        received: 'nothing (not set)',
      }),
    ),
    ...[
      'http://127.0.0.1:40443',
      'https://sim.example.com:40443',
      'https://127.0.0.1.nip.io:40443',
      'https://10.0.0.4:40443',
      'https://127.0.0.1:40443/subscriptions',
      'https://127.0.0.1:40443/?api-version=1',
      '127.0.0.1:40443',
    ].map((endpoint) => ({
      name: `endpoint ${endpoint}`,
      env: { ...SEAM, VMSSP_SIMULATOR_ARM_ENDPOINT: endpoint },
      path: 'VMSSP_SIMULATOR_ARM_ENDPOINT',
      accepts: 'a loopback host',
      received: JSON.stringify(endpoint),
    })),
    {
      name: 'an endpoint with credentials, not echoed',
      env: { ...SEAM, VMSSP_SIMULATOR_ARM_ENDPOINT: 'https://user:hunter2@127.0.0.1:40443' },
      path: 'VMSSP_SIMULATOR_ARM_ENDPOINT',
      accepts: 'no path, credentials',
      received: '"https://<redacted>@127.0.0.1:40443"',
    },
    {
      name: 'a CA that is not PEM',
      env: { ...SEAM, VMSSP_SIMULATOR_CA: '/work/.sim/ca.pem' },
      path: 'VMSSP_SIMULATOR_CA',
      accepts: 'PEM text of one or more certificates',
    },
    {
      name: 'a token with a space, not echoed',
      env: { ...SEAM, VMSSP_SIMULATOR_ARM_TOKEN: `Bearer ${TOKEN}` },
      path: 'VMSSP_SIMULATOR_ARM_TOKEN',
      accepts: 'visible ASCII characters, no spaces',
      received: '<redacted 33-character value>',
    },
    {
      name: 'the flag on an App Service instance (WEBSITE_INSTANCE_ID)',
      env: { ...SEAM, WEBSITE_INSTANCE_ID: 'a1b2c3d4e5f6' },
      path: 'VMSSP_SIMULATOR',
      accepts: 'unset in Azure',
      received: '"true" where WEBSITE_INSTANCE_ID is set',
    },
    {
      name: 'the flag where WEBSITE_HOSTNAME is an app host name',
      env: { ...SEAM, WEBSITE_HOSTNAME: 'func-vmssp.azurewebsites.net' },
      path: 'VMSSP_SIMULATOR',
      accepts: 'remove every VMSSP_SIMULATOR* app setting',
      received: '"true" where WEBSITE_HOSTNAME is "func-vmssp.azurewebsites.net", not a loopback host',
    },
    {
      name: 'a misspelt key',
      env: { VMSSP_SIMULATR: 'true' },
      path: 'VMSSP_SIMULATR',
      accepts: '(did you mean VMSSP_SIMULATOR?)',
    },
  ];
  for (const { name, env, path, accepts, received } of cases) {
    void it(name, () => {
      const error = failure(envWith(env));
      const issue = error.issues.find((candidate: SettingsIssue) => candidate.path === path);
      assert.ok(issue, `no issue at ${path}: ${error.message}`);
      assert.ok(issue.expected.includes(accepts), `${issue.expected} lacks ${accepts}`);
      if (received !== undefined) assert.ok(issue.received.startsWith(received), issue.received);
      assert.ok(!error.message.includes(TOKEN), `the token is echoed: ${error.message}`);
      assert.ok(!error.message.includes('hunter2'), `a password is echoed: ${error.message}`);
    });
  }

  void it('reports them with every other problem at once', () => {
    const error = failure({
      ...envWith({ ...SEAM, VMSSP_SIMULATOR_CA: undefined }),
      VMSSP_SCHEDULE: 'daily',
    });
    assert.deepEqual(error.issues.map((issue) => issue.path).sort(), [
      'VMSSP_SCHEDULE',
      'VMSSP_SIMULATOR_CA',
    ]);
  });
});
