import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { HttpResponse } from '@azure/functions';

import { MAX_BODY_BYTES } from '../../../functions/triggers/http-io.js';
import {
  API_ROUTES,
  handleCancelRequest,
  handlePlanRequest,
  handleRefreshRequest,
  handleReleaseRequest,
  handleRetireRequest,
  handleRollbackRequest,
  handleStatusPageRequest,
  handleStatusRequest,
} from '../../../functions/triggers/refresh-api.http.js';
import type { PoolOwnership } from '../../../shared/application/pool-status.js';
import { STATUS_PAGE_CSP } from '../../../shared/application/status-page/render-status-page.js';
import { FakeDurableClient } from './durable-client-double.js';
import { fakeDependencies, FREE_POOL, recordingContext, request } from './fixtures.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

async function refresh(
  body: string | undefined,
  options: { cluster?: string; headers?: Record<string, string>; client?: FakeDurableClient } = {},
): Promise<{ response: HttpResponse; client: FakeDurableClient; json: Record<string, unknown> }> {
  const client = options.client ?? new FakeDurableClient();
  const response = await handleRefreshRequest(
    request({
      params: { cluster: options.cluster ?? 'prod' },
      headers: options.headers ?? (body === undefined ? {} : JSON_HEADERS),
      ...(body === undefined ? {} : { body }),
    }),
    client,
    recordingContext(),
    fakeDependencies(),
  );
  const json = (response.body === null ? {} : await response.json()) as Record<string, unknown>;
  return { response, client, json };
}

function errorOf(json: Record<string, unknown>): {
  code: string;
  message: string;
  field?: string;
  running?: Record<string, unknown>;
} {
  return json['error'] as {
    code: string;
    message: string;
    field?: string;
    running?: Record<string, unknown>;
  };
}

/** The starts without their random run seeds (checked to be there). */
function withoutSeeds(started: readonly { name: string; instanceId: string; input?: unknown }[]): unknown[] {
  return started.map((start) => {
    const { runSeed, ...input } = start.input as { runSeed?: unknown };
    assert.match(String(runSeed), /^[0-9a-f-]{36}$/, 'a random run seed');
    return { ...start, input };
  });
}

void describe('POST /api/clusters/{cluster}/refresh', () => {
  void it('starts a cluster run for an empty body: 202 with status links', async () => {
    const { response, client, json } = await refresh(undefined);
    assert.equal(response.status, 202);
    assert.equal(json['id'], 'refresh:prod');
    assert.match(String(json['statusQueryGetUri']), /instances\/refresh%3Aprod$/);
    assert.deepEqual(withoutSeeds(client.started), [
      { name: 'refreshCluster', instanceId: 'refresh:prod', input: { cluster: 'prod', trigger: 'http' } },
    ]);
  });

  void it('starts one pool, one node, dry run', async () => {
    const { response, client } = await refresh(
      '{"pool":"pool1","node":"k8s-pool1-12345678-vmss000003","dryRun":true}',
    );
    assert.equal(response.status, 202);
    assert.deepEqual(withoutSeeds(client.started)[0], {
      name: 'refreshPool',
      instanceId: 'refresh:prod:pool1',
      input: {
        cluster: 'prod',
        pool: 'pool1',
        trigger: 'http',
        node: 'k8s-pool1-12345678-vmss000003',
        dryRun: true,
      },
    });
  });

  void it('404 names the known clusters', async () => {
    const { response, json } = await refresh('{}', { cluster: 'staging' });
    assert.equal(response.status, 404);
    assert.match(errorOf(json).message, /cluster staging is not configured; known clusters: prod, dev/);
  });

  void it('404 names the known pools', async () => {
    const { response, json } = await refresh('{"pool":"pool9"}');
    assert.equal(response.status, 404);
    assert.match(errorOf(json).message, /known pools: flex, off, pool1/);
  });

  void it('409 with the running instance and its step', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', {
      cluster: 'prod',
      pool: 'pool1',
      step: 'draining',
      node: 'n-1',
      since: 'x',
    });
    const { response, json } = await refresh('{"pool":"pool1"}', { client });
    assert.equal(response.status, 409);
    assert.equal(errorOf(json).running?.['instanceId'], 'refresh:prod:pool1');
    assert.equal(errorOf(json).running?.['step'], 'draining');
    assert.equal(client.started.length, 0);
  });

  void it('409 for a pool while its cluster run is active', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod', 'Running', { cluster: 'prod', step: 'refreshing' }, 'refreshCluster');
    const { response, json } = await refresh('{"pool":"pool1"}', { client });
    assert.equal(response.status, 409);
    assert.equal(errorOf(json).running?.['instanceId'], 'refresh:prod');
  });

  void it('409 for the cluster while one of its pools refreshes', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:flex', 'Pending');
    const { response } = await refresh('{}', { client });
    assert.equal(response.status, 409);
  });

  void it('413 by content-length', async () => {
    const { response, client } = await refresh('{}', {
      headers: { ...JSON_HEADERS, 'content-length': String(MAX_BODY_BYTES + 1) },
    });
    assert.equal(response.status, 413);
    assert.equal(client.started.length, 0);
  });

  void it('413 by the bytes actually read (no content-length)', async () => {
    const { response } = await refresh(`{"pool":"${'a'.repeat(MAX_BODY_BYTES)}"}`);
    assert.equal(response.status, 413);
  });

  void it('413 when content-length lies', async () => {
    const { response } = await refresh(`{"x":"${'a'.repeat(MAX_BODY_BYTES)}"}`, {
      headers: { ...JSON_HEADERS, 'content-length': '10' },
    });
    assert.equal(response.status, 413);
  });

  void it('415 for a non-JSON content type', async () => {
    const { response } = await refresh('pool=pool1', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(response.status, 415);
  });

  void it('415 for a body without a content type', async () => {
    const { response } = await refresh('{}', { headers: {} });
    assert.equal(response.status, 415);
  });

  void it('400 for invalid JSON', async () => {
    const { response, json } = await refresh('{"pool": ');
    assert.equal(response.status, 400);
    assert.equal(errorOf(json).code, 'InvalidJson');
  });

  void it('400 names an unknown field', async () => {
    const { response, json } = await refresh('{"pool":"pool1","force":true}');
    assert.equal(response.status, 400);
    assert.equal(errorOf(json).field, 'force');
    assert.match(errorOf(json).message, /unknown field force/);
  });

  void it('400 with the path of a wrong type', async () => {
    const { response, json } = await refresh('{"dryRun":"yes"}');
    assert.equal(response.status, 400);
    assert.equal(errorOf(json).field, 'dryRun');
  });

  void it('400: a node needs its pool', async () => {
    const { response, json } = await refresh('{"node":"n-1"}');
    assert.equal(response.status, 400);
    assert.equal(errorOf(json).field, 'node');
  });

  void it('accepts application/json with a charset', async () => {
    const { response } = await refresh('{"pool":"pool1"}', {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(response.status, 202);
  });
});

void describe('GET /api/clusters/{cluster}/status', () => {
  void it('shows each pool with its image, last run and in-flight run', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', {
      cluster: 'prod',
      pool: 'pool1',
      step: 'snapshotting',
      since: '2026-11-22T11:00:00Z',
    });
    client.instances.set('refresh:prod:flex', {
      instanceId: 'refresh:prod:flex',
      runtimeStatus: 'Completed',
      name: 'refreshPool',
      input: undefined,
      output: { outcome: 'refreshed', reason: 'newer patches' },
      lastUpdatedTime: new Date('2026-11-21T03:30:00Z'),
    });
    client.seed('signal:prod:off', 'Running', { step: 'waiting-quiet-period', notices: 3 }, 'poolSignal');
    const response = await handleStatusRequest(
      request({ method: 'GET', params: { cluster: 'prod' } }),
      client,
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(response.status, 200);
    const json = (await response.json()) as { pools: Record<string, unknown>[] };
    const byPool = new Map(json.pools.map((p) => [String(p['pool']), p]));
    assert.deepEqual((byPool.get('pool1')?.['inFlight'] as Record<string, unknown>)['step'], 'snapshotting');
    assert.deepEqual((byPool.get('flex')?.['lastRun'] as Record<string, unknown>)['outcome'], {
      outcome: 'refreshed',
      reason: 'newer patches',
    });
    assert.deepEqual((byPool.get('off')?.['pendingRebootSignal'] as Record<string, unknown>)['notices'], 3);
    assert.equal(
      (
        (byPool.get('pool1')?.['image'] as Record<string, unknown>)['currentVersion'] as Record<
          string,
          unknown
        >
      )['name'],
      '2026.11.20',
    );
  });

  void it('404 for an unknown cluster', async () => {
    const response = await handleStatusRequest(
      request({ method: 'GET', params: { cluster: 'Prod' } }),
      new FakeDurableClient(),
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(response.status, 404);
  });
});

void describe('GET /api/clusters/{cluster}/plan', () => {
  void it('plans one pool with ?pool=', async () => {
    const response = await handlePlanRequest(
      request({
        method: 'GET',
        url: 'https://x/api/clusters/prod/plan?pool=pool1',
        params: { cluster: 'prod' },
      }),
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(response.status, 200);
    const json = (await response.json()) as { pools: { pool: string; decision: { kind: string } }[] };
    assert.deepEqual(
      json.pools.map((p) => [p.pool, p.decision.kind]),
      [['pool1', 'up-to-date']],
    );
  });

  void it('plans every pool without ?pool=', async () => {
    const response = await handlePlanRequest(
      request({ method: 'GET', url: 'https://x/api/clusters/prod/plan', params: { cluster: 'prod' } }),
      recordingContext(),
      fakeDependencies(),
    );
    const json = (await response.json()) as { pools: unknown[] };
    assert.equal(json.pools.length, 3);
  });

  void it('404 for an unknown pool', async () => {
    const response = await handlePlanRequest(
      request({
        method: 'GET',
        url: 'https://x/api/clusters/prod/plan?pool=..%2Fetc',
        params: { cluster: 'prod' },
      }),
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(response.status, 404);
  });
});

void describe('POST /api/clusters/{cluster}/pools/{pool}/cancel', () => {
  async function cancel(
    pool: string,
    client: FakeDurableClient,
    body?: string,
  ): Promise<{ response: HttpResponse; json: Record<string, unknown> }> {
    const response = await handleCancelRequest(
      request({
        params: { cluster: 'prod', pool },
        headers: body === undefined ? {} : JSON_HEADERS,
        ...(body === undefined ? {} : { body }),
      }),
      client,
      recordingContext(),
      fakeDependencies(),
    );
    const json = (response.body === null ? {} : await response.json()) as Record<string, unknown>;
    return { response, json };
  }

  void it('raises the cancel event on the running refresh of the pool: 202', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', { step: 'draining' });

    const { response, json } = await cancel('pool1', client, '{"reason":"maintenance window closed"}');

    assert.equal(response.status, 202);
    assert.equal(json['id'], 'refresh:prod:pool1');
    assert.deepEqual(client.raised, [
      { instanceId: 'refresh:prod:pool1', eventName: 'cancel', data: 'maintenance window closed' },
    ]);
  });

  void it('409 when no refresh of the pool is running, and nothing is raised', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Completed');

    const { response, json } = await cancel('pool1', client);

    assert.equal(response.status, 409);
    assert.equal(errorOf(json).code, 'NotRefreshing');
    assert.deepEqual(client.raised, []);
  });

  void it('404 for an unknown pool and 400 for a bad reason, raising nothing', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running');

    assert.equal((await cancel('../pool1', client)).response.status, 404);
    const bad = await cancel('pool1', client, '{"reason":"a\\u0007b"}');
    assert.equal(bad.response.status, 400);
    const unknownField = await cancel('pool1', client, '{"why":"x"}');
    assert.equal(unknownField.response.status, 400);
    assert.deepEqual(client.raised, []);
  });
});

void describe('POST /api/clusters/{cluster}/pools/{pool}/release', () => {
  const HELD: PoolOwnership = {
    lease: {
      state: 'held',
      holder: 'cli/laptop/run-1',
      runId: 'run-1',
      runner: 'cli',
      host: 'laptop',
      expiresAt: '2026-11-22T12:10:00.000Z',
      description: 'run run-1 of cli on laptop; its lease expires at 2026-11-22T12:10:00.000Z unless renewed',
    },
    heldNodes: [],
    leftovers: [],
    kept: [],
  };
  const DEAD: PoolOwnership = {
    lease: { state: 'free' },
    heldNodes: [{ node: 'n0', runId: 'run-0', byLiveRun: false, cordoned: true, vm: 'stopped' }],
    leftovers: ['start the VM of node n0 (instance 0), stopped for a capture (left by run run-0)'],
    kept: [],
  };

  async function release(
    client: FakeDurableClient,
    ownership: PoolOwnership,
    body?: string,
    pool = 'pool1',
  ): Promise<{ response: HttpResponse; json: Record<string, unknown> }> {
    const deps = fakeDependencies();
    deps.ownership = ownership;
    const response = await handleReleaseRequest(
      request({
        params: { cluster: 'prod', pool },
        headers: body === undefined ? {} : JSON_HEADERS,
        ...(body === undefined ? {} : { body }),
      }),
      client,
      recordingContext(),
      deps,
    );
    const json = (response.body === null ? {} : await response.json()) as Record<string, unknown>;
    return { response, json };
  }

  void it('a dry run answers 200 with what would be given back and starts nothing', async () => {
    const client = new FakeDurableClient();
    const { response, json } = await release(client, DEAD, '{"dryRun":true}');
    assert.equal(response.status, 200);
    assert.deepEqual(json['wouldGiveBack'], DEAD.leftovers);
    assert.equal(client.started.length, 0);
  });

  void it('starts the release when something is left: 202 with status links', async () => {
    const client = new FakeDurableClient();
    const { response } = await release(client, DEAD);
    assert.equal(response.status, 202);
    assert.equal(client.started[0]?.name, 'releasePool');
    assert.equal(client.started[0]?.instanceId, 'release:prod:pool1');
  });

  void it('200 nothing-left when there is nothing to give back', async () => {
    const client = new FakeDurableClient();
    const { response, json } = await release(client, FREE_POOL);
    assert.equal(response.status, 200);
    assert.equal(json['outcome'], 'nothing-left');
    assert.equal(client.started.length, 0);
  });

  void it('409 while a live run holds the pool, saying who; force takes it over', async () => {
    const client = new FakeDurableClient();
    const held = await release(client, HELD);
    assert.equal(held.response.status, 409);
    assert.equal(errorOf(held.json).code, 'PoolHeld');
    assert.match(String(errorOf(held.json).message), /held by run run-1 of cli on laptop/);
    assert.equal(client.started.length, 0);
    const forced = await release(client, HELD, '{"force":true}');
    assert.equal(forced.response.status, 202);
    assert.deepEqual((client.started[0]?.input as { force?: boolean }).force, true);
  });

  void it('409 while a refresh of the pool runs in this task hub: cancel it instead', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', { step: 'draining' });
    const { response, json } = await release(client, DEAD);
    assert.equal(response.status, 409);
    assert.equal(errorOf(json).code, 'RefreshRunning');
  });

  void it('404 for an unknown pool, 400 for an unknown field', async () => {
    const client = new FakeDurableClient();
    assert.equal((await release(client, DEAD, undefined, 'nosuch')).response.status, 404);
    assert.equal((await release(client, DEAD, '{"everything":true}')).response.status, 400);
    assert.equal(client.started.length, 0);
  });
});

void describe('POST /api/clusters/{cluster}/pools/{pool}/rollback', () => {
  async function rollback(pool: string, client: FakeDurableClient, body?: string) {
    const response = await handleRollbackRequest(
      request({
        params: { cluster: 'prod', pool },
        headers: body === undefined ? {} : JSON_HEADERS,
        ...(body === undefined ? {} : { body }),
      }),
      client,
      recordingContext(),
      fakeDependencies(),
    );
    const json = (response.body === null ? {} : await response.json()) as Record<string, unknown>;
    return { response, json };
  }

  void it('starts the rollback of the pool to the named version: 202 with the status links', async () => {
    const client = new FakeDurableClient();
    const { response } = await rollback('pool1', client, '{"to":"2026.1120.20000"}');
    assert.equal(response.status, 202);
    assert.deepEqual(
      client.started.map((entry) => {
        const { runSeed, ...input } = entry.input as Record<string, unknown>;
        assert.equal(typeof runSeed, 'string', 'a run seed for the run id of the lease');
        return [entry.name, entry.instanceId, input];
      }),
      [
        [
          'rollbackPool',
          'rollback:prod:pool1',
          { cluster: 'prod', pool: 'pool1', trigger: 'http', to: '2026.1120.20000' },
        ],
      ],
    );
  });

  void it('a dry run gets an instance of its own and is never blocked', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', { step: 'draining' });
    const { response } = await rollback('pool1', client, '{"dryRun":true}');
    assert.equal(response.status, 202);
    const [started] = client.started;
    assert.match(started?.instanceId ?? '', /^rollback-plan:prod:pool1:\d+$/);
    const { runSeed: _seed, ...input } = started?.input as Record<string, unknown>;
    assert.deepEqual(input, { cluster: 'prod', pool: 'pool1', trigger: 'http', dryRun: true });
  });

  void it('409 while the pool is refreshing, and nothing starts', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', { step: 'testing-canaries' });
    const { response, json } = await rollback('pool1', client);
    assert.equal(response.status, 409);
    assert.equal(errorOf(json).code, 'PoolBusy');
    assert.equal(errorOf(json).running?.['step'], 'testing-canaries');
    assert.deepEqual(client.started, []);
  });

  void it('400 for a target that is not a version name, naming the field', async () => {
    const client = new FakeDurableClient();
    const { response, json } = await rollback('pool1', client, '{"to":"latest"}');
    assert.equal(response.status, 400);
    assert.equal(errorOf(json).field, 'to');
    assert.match(errorOf(json).message, /Major\.Minor\.Patch/);
    assert.deepEqual(client.started, []);
  });

  void it('404 for a pool the cluster does not have', async () => {
    const { response, json } = await rollback('nope', new FakeDurableClient());
    assert.equal(response.status, 404);
    assert.match(errorOf(json).message, /known pools/);
  });
});

void describe('POST /api/clusters/{cluster}/pools/{pool}/retire', () => {
  async function retire(pool: string, client: FakeDurableClient, body?: string) {
    const response = await handleRetireRequest(
      request({
        params: { cluster: 'prod', pool },
        headers: body === undefined ? {} : JSON_HEADERS,
        ...(body === undefined ? {} : { body }),
      }),
      client,
      recordingContext(),
      fakeDependencies(),
    );
    const json = (response.body === null ? {} : await response.json()) as Record<string, unknown>;
    return { response, json };
  }

  void it('starts the retirement of one generation of the pool: 202 with the status links', async () => {
    const client = new FakeDurableClient();
    const { response } = await retire('pool1', client, '{"generation":"2026.1120.20000"}');
    assert.equal(response.status, 202);
    assert.deepEqual(withoutSeeds(client.started), [
      {
        name: 'retirePool',
        instanceId: 'retire:prod:pool1',
        input: { cluster: 'prod', pool: 'pool1', trigger: 'http', generation: '2026.1120.20000' },
      },
    ]);
  });

  void it("without a body: the pool's scheduled policy, now", async () => {
    const client = new FakeDurableClient();
    const { response } = await retire('pool1', client);
    assert.equal(response.status, 202);
    assert.deepEqual(withoutSeeds(client.started), [
      {
        name: 'retirePool',
        instanceId: 'retire:prod:pool1',
        input: { cluster: 'prod', pool: 'pool1', trigger: 'http' },
      },
    ]);
  });

  void it('a dry run gets an instance of its own and is never blocked', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod:pool1', 'Running', { step: 'draining' });
    client.seed('retire:prod:pool1', 'Running', { step: 'draining-retired-node' });
    const { response } = await retire('pool1', client, '{"dryRun":true}');
    assert.equal(response.status, 202);
    const [started] = client.started;
    assert.equal(started?.name, 'retirePool');
    assert.match(started?.instanceId ?? '', /^retire-plan:prod:pool1:\d+$/);
    const { runSeed: _seed, ...input } = started?.input as Record<string, unknown>;
    assert.deepEqual(input, { cluster: 'prod', pool: 'pool1', trigger: 'http', dryRun: true });
  });

  for (const running of ['refresh:prod:pool1', 'refresh:prod', 'retire:prod:pool1']) {
    void it(`409 while ${running} runs, and nothing starts`, async () => {
      const client = new FakeDurableClient();
      client.seed(running, 'Running', { step: 'testing-canaries' });
      const { response, json } = await retire('pool1', client);
      assert.equal(response.status, 409);
      assert.equal(errorOf(json).code, 'PoolBusy');
      assert.match(errorOf(json).message, /retire once it ends/);
      assert.deepEqual(client.started, []);
    });
  }

  const badBodies: readonly (readonly [string, string, RegExp])[] = [
    [
      '{"generation":"latest"}',
      'generation',
      /generation: a gallery image version name: Major\.Minor\.Patch/,
    ],
    ['{"dryRun":"yes"}', 'dryRun', /dryRun: /],
    ['{"to":"2026.1120.20000"}', 'to', /unknown field "?to"?/],
    ['{"generation":"2026.1120.20000","force":true}', 'force', /unknown field "?force"?/],
  ];
  for (const [body, field, message] of badBodies) {
    void it(`400 for ${body}, naming the field ${field}, and nothing starts`, async () => {
      const client = new FakeDurableClient();
      const { response, json } = await retire('pool1', client, body);
      assert.equal(response.status, 400);
      assert.equal(errorOf(json).code, 'InvalidRequest');
      assert.equal(errorOf(json).field, field);
      assert.match(errorOf(json).message, message);
      assert.deepEqual(client.started, []);
    });
  }

  void it('404 for a pool the cluster does not have', async () => {
    const client = new FakeDurableClient();
    const { response, json } = await retire('nope', client);
    assert.equal(response.status, 404);
    assert.match(errorOf(json).message, /known pools/);
    assert.deepEqual(client.started, []);
  });

  void it('is a POST route behind a function key', () => {
    const route = API_ROUTES.find((entry) => entry.name === 'retirePoolApi');
    assert.deepEqual(route && [route.route, route.method, route.authLevel], [
      'clusters/{cluster}/pools/{pool}/retire',
      'POST',
      'function',
    ]);
  });
});

void describe('GET /api/status/page', () => {
  void it('is registered behind the function key like every route (the host answers 401 without one)', () => {
    const page = API_ROUTES.find((route) => route.name === 'statusPageApi');
    assert.deepEqual(page && { route: page.route, method: page.method }, {
      route: 'status/page',
      method: 'GET',
    });
    assert.deepEqual(
      API_ROUTES.filter((route) => route.authLevel !== 'function').map((route) => route.name),
      [],
    );
  });

  void it('answers the page as UTF-8 HTML with a strict Content-Security-Policy', async () => {
    const response = await handleStatusPageRequest(
      request({ method: 'GET', url: 'https://x/api/status/page' }),
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(response.headers.get('content-security-policy'), STATUS_PAGE_CSP);
    assert.match(STATUS_PAGE_CSP, /default-src 'none'/);
    assert.doesNotMatch(STATUS_PAGE_CSP, /script-src/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const html = await response.text();
    assert.match(html, /<html lang="en">/);
    for (const name of ['Cluster prod', 'Cluster dev', 'Pool pool1', 'Pool k8s-dev-vmss', '2026.11.20']) {
      assert.ok(html.includes(name), `the page shows ${name}`);
    }
    // The app's page says what `plan` decides (the cluster planned once), as `status --json` does.
    assert.doesNotMatch(html, /not planned/);
  });

  void it('?cluster= shows one cluster; an unknown one is 404 naming the known ones', async () => {
    const one = await handleStatusPageRequest(
      request({ method: 'GET', url: 'https://x/api/status/page?cluster=dev' }),
      recordingContext(),
      fakeDependencies(),
    );
    const html = await one.text();
    assert.ok(html.includes('Cluster dev') && !html.includes('Cluster prod'));
    const unknown = await handleStatusPageRequest(
      request({ method: 'GET', url: 'https://x/api/status/page?cluster=%3Cscript%3E' }),
      recordingContext(),
      fakeDependencies(),
    );
    assert.equal(unknown.status, 404);
    assert.match(
      errorOf((await unknown.json()) as Record<string, unknown>).message,
      /known clusters: prod, dev/,
    );
  });

  void it('a cluster whose status cannot be read says so on the page (escaped), the others still show', async () => {
    const deps = fakeDependencies();
    const failing = {
      ...deps,
      readClusterStatus: (cluster: string) =>
        cluster === 'dev' ? Promise.reject(new Error('API server <down>')) : deps.readClusterStatus(cluster),
    };
    const logs: { level: string; args: unknown[] }[] = [];
    const response = await handleStatusPageRequest(
      request({ method: 'GET', url: 'https://x/api/status/page' }),
      recordingContext(logs),
      failing,
    );
    assert.equal(response.status, 200);
    const html = await response.text();
    assert.ok(html.includes('Reading this cluster failed: API server &lt;down&gt;'));
    assert.ok(html.includes('Pool pool1'));
    assert.ok(logs.some((log) => log.level === 'warning'));
  });
});
