/** Starts the whole simulator in-process and talks to it over the wire: ARM, Kubernetes, admin API, kubectl. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

import { type RunningSimulator, SAMPLE_SCENARIO, startSimulator } from '../../sim/index.js';

const run = promisify(execFile);

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

function call(
  url: string,
  options: { token?: string; ca?: string; method?: string; body?: unknown } = {},
): Promise<Reply> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      {
        method: options.method ?? 'GET',
        ...(options.ca ? { ca: options.ca } : {}),
        headers: {
          accept: 'application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // Not JSON; keep the text.
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

void describe('simulated time', () => {
  void it('starts at a whole second of the wall clock when the caller names no start', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-start-'));
    // Two simulators: each start misses a whole second by chance once in a thousand at most.
    for (let attempt = 0; attempt < 2; attempt++) {
      const before = Math.floor(Date.now() / 1000) * 1000;
      const sim = await startSimulator({ scenario: SAMPLE_SCENARIO, outDir, clock: 'manual' });
      try {
        const startMs = sim.clock.nowMs();
        assert.equal(startMs % 1000, 0, `started at ${new Date(startMs).toISOString()}`);
        assert.ok(startMs >= before && startMs <= Date.now(), 'at the wall clock second it started in');
      } finally {
        await sim.stop();
      }
    }
    await rm(outDir, { recursive: true, force: true });
  });
});

void describe('simulator over the wire', () => {
  let sim: RunningSimulator;
  let outDir: string;

  void before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-'));
    sim = await startSimulator({
      scenario: SAMPLE_SCENARIO,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
    });
  });

  void after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  void it('writes ca.pem and a kubeconfig with both contexts and the CA embedded', async () => {
    assert.equal(await readFile(sim.caPath, 'utf8'), sim.caPem);
    const config = parseYaml(await readFile(sim.kubeconfigPath, 'utf8')) as {
      contexts: { name: string }[];
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    };
    assert.deepEqual(
      config.contexts.map((context) => context.name),
      ['sim-admin', 'vmss-prototype'],
    );
    assert.equal(config.clusters[0]?.cluster.server, sim.kubeHttpsUrl);
    assert.equal(
      Buffer.from(config.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
      sim.caPem,
    );
  });

  void it('serves ARM over TLS signed by the generated CA', async () => {
    const reply = await call(
      `${sim.armEndpoint}/subscriptions/${sim.subscriptionId}/resourceGroups/rg-K8s-Prod/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=2024-07-01`,
      { token: 'arm-token', ca: sim.caPem },
    );
    assert.equal(reply.status, 200);
    const names = (reply.body as { value: { name: string }[] }).value.map((scaleSet) => scaleSet.name);
    assert.ok(names.includes('k8s-pool1-12345678-vmss'));
    assert.ok(sim.log.count({ api: 'arm' }) >= 1);
  });

  void it('serves Kubernetes over HTTPS and HTTP with token authentication', async () => {
    const nodes = await call(`${sim.kubeHttpsUrl}/api/v1/nodes`, { token: sim.tokens.admin, ca: sim.caPem });
    assert.equal(nodes.status, 200);
    assert.equal((nodes.body as { items: unknown[] }).items.length, 16);
    const version = await call(`${sim.kubeHttpUrl}/version`, { token: sim.tokens.serviceAccount });
    assert.equal(version.status, 200);
    const anonymous = await call(`${sim.kubeHttpUrl}/api/v1/nodes`);
    assert.equal(anonymous.status, 401);
  });

  void it("keeps an idle keep-alive connection past Node's 5 s, as the API server does (90 s)", async () => {
    // A client reusing a socket the server closed meets ECONNRESET and retries: figures that move.
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: sim.caPem });
    try {
      const sockets: unknown[] = [];
      const get = () =>
        new Promise<number>((resolve, reject) => {
          const request = httpsRequest(
            `${sim.kubeHttpsUrl}/api/v1/nodes`,
            { agent, headers: { authorization: `Bearer ${sim.tokens.admin}` } },
            (response) => {
              response.resume();
              response.on('end', () => resolve(response.statusCode ?? 0));
            },
          );
          request.on('socket', (socket) => sockets.push(socket));
          request.on('error', reject);
          request.end();
        });
      assert.equal(await get(), 200);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      assert.equal(await get(), 200);
      assert.equal(sockets.length, 2);
      assert.equal(sockets[0], sockets[1], 'the second request reused the idle connection');
    } finally {
      agent.destroy();
    }
  });

  void it('admin API: refuses without the token, moves time, injects faults, counts requests', async () => {
    const refused = await call(`${sim.armEndpoint}/_sim/time`, { ca: sim.caPem });
    assert.equal(refused.status, 401);
    const before = sim.clock.nowMs();
    const advanced = await call(`${sim.armEndpoint}/_sim/time/advance`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
      method: 'POST',
      body: { seconds: 120 },
    });
    assert.equal(advanced.status, 200);
    assert.equal(sim.clock.nowMs(), before + 120_000);

    const added = await call(`${sim.armEndpoint}/_sim/faults`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
      method: 'POST',
      body: { preset: 'arm-5xx-burst', count: 1 },
    });
    assert.equal(added.status, 201);
    const url = `${sim.armEndpoint}/subscriptions/${sim.subscriptionId}/resourceGroups/rg-K8s-Prod/providers/Microsoft.Compute/virtualMachineScaleSets/k8s-pool1-12345678-vmss?api-version=2024-07-01`;
    assert.equal((await call(url, { token: 'arm-token', ca: sim.caPem })).status, 500);
    assert.equal((await call(url, { token: 'arm-token', ca: sim.caPem })).status, 200);

    const bad = await call(`${sim.armEndpoint}/_sim/faults`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
      method: 'POST',
      body: { preset: 'arm-429-storm' },
    });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /for/);

    const requests = await call(`${sim.armEndpoint}/_sim/requests`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
    });
    assert.ok((requests.body as { byApi: { arm: number } }).byApi.arm >= 2);
  });

  void it('admin API: triggers kured and dumps the world', async () => {
    const node = 'k8s-pool2-12345678-vmss000002';
    const started = await call(`${sim.armEndpoint}/_sim/kured`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
      method: 'POST',
      body: { nodes: [node] },
    });
    assert.equal(started.status, 202);
    await call(`${sim.armEndpoint}/_sim/time/advance`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
      method: 'POST',
      body: { seconds: 600 },
    });
    const state = await call(`${sim.armEndpoint}/_sim/state`, { token: sim.tokens.admin, ca: sim.caPem });
    const summary = (
      state.body as { clusters: { nodes: { name: string; ready: string; rebootInProgress?: string }[] }[] }
    ).clusters[0]?.nodes.find((entry) => entry.name === node);
    assert.equal(summary?.ready, 'True');
    assert.equal(summary?.rebootInProgress, undefined);
    assert.equal(sim.world.guestReboots.length, 1);
  });

  void it('works with @kubernetes/client-node through the kubeconfig', async () => {
    const config = new KubeConfig();
    config.loadFromFile(sim.kubeconfigPath);
    config.setCurrentContext('vmss-prototype');
    const nodes = await config.makeApiClient(CoreV1Api).listNode({ labelSelector: 'agentpool=pool1' });
    assert.deepEqual(
      nodes.items.map((node) => node.metadata?.name),
      [0, 1, 2, 3].map((index) => `k8s-pool1-12345678-vmss00000${index}`),
    );
  });

  void it('works with the machine kubectl through the kubeconfig', async () => {
    const { stdout } = await run(
      'kubectl',
      ['--kubeconfig', sim.kubeconfigPath, '--context', 'sim-admin', 'get', 'nodes', '-o', 'name'],
      { timeout: 30_000 },
    );
    const names = stdout.trim().split('\n');
    assert.equal(names.length, 16);
    assert.ok(names.includes('node/k8s-pool1-12345678-vmss000000'));
  });
});

void describe('simulator with the product permissions', () => {
  let sim: RunningSimulator;
  let outDir: string;

  void before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'vmss-sim-rbac-'));
    sim = await startSimulator({
      scenario: SAMPLE_SCENARIO,
      outDir,
      clock: 'manual',
      startMs: Date.parse('2026-11-22T12:00:00Z'),
      rbacDir: 'infra/kubernetes',
      armActionsFile: 'infra/azure/compute-actions.json',
    });
  });

  void after(async () => {
    await sim.stop();
    await rm(outDir, { recursive: true, force: true });
  });

  void it('authorizes the service-account token against infra/kubernetes, the admin token as system:masters', async () => {
    const list = await call(`${sim.kubeHttpsUrl}/api/v1/nodes`, {
      token: sim.tokens.serviceAccount,
      ca: sim.caPem,
    });
    assert.equal(list.status, 200);
    const node = 'k8s-pool1-12345678-vmss000000';
    const remove = await call(`${sim.kubeHttpsUrl}/api/v1/nodes/${node}`, {
      token: sim.tokens.serviceAccount,
      ca: sim.caPem,
      method: 'DELETE',
    });
    assert.equal(remove.status, 403);
    const namespaces = await call(`${sim.kubeHttpsUrl}/api/v1/namespaces`, {
      token: sim.tokens.admin,
      ca: sim.caPem,
    });
    assert.equal(namespaces.status, 200);
    const { stdout } = await run(
      'kubectl',
      ['--kubeconfig', sim.kubeconfigPath, '--context', 'vmss-prototype', 'get', 'nodes', '-o', 'name'],
      { timeout: 30_000 },
    );
    assert.equal(stdout.trim().split('\n').length, 16);
  });
});
