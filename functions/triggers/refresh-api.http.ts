/**
 * The HTTP API (function key): start a refresh of a cluster, a pool or a named node
 * (`POST /api/clusters/{cluster}/refresh`), read per-pool status and in-flight runs (`GET …/status`),
 * show what auto mode would do (`GET …/plan`), cancel a pool's capture
 * (`POST /api/clusters/{cluster}/pools/{pool}/cancel`: the run gives the node back, then fails), give
 * back what a pool's dead or stuck runs hold (`POST …/pools/{pool}/release`, like `vmss-prototype release`),
 * roll a pool back to a retained earlier version (`POST …/pools/{pool}/rollback`), and retire nodes of
 * older image versions (`POST …/pools/{pool}/retire`, docs/retirement.md). The status page
 * (`GET /api/status/page[?cluster=]`) is the same status as one self-contained HTML document.
 * Starts answer 202 with the durable status links.
 */
import { randomUUID } from 'node:crypto';

import type { HttpRequest, HttpResponse, InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';
import { z } from 'zod';

import {
  clusterInstanceId,
  EVENT,
  poolInstanceId,
  releaseInstanceId,
  retireInstanceId,
  rollbackInstanceId,
  signalInstanceId,
} from '../../shared/application/orchestration-ids.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import type { PoolStatus } from '../../shared/application/pool-status.js';
import type { InstanceStatus, OrchestrationClient } from '../../shared/application/singleton.js';
import { isActive, readStatus, startSingleton } from '../../shared/application/singleton.js';
import {
  renderStatusPage,
  STATUS_PAGE_CONTENT_TYPE,
  STATUS_PAGE_CSP,
  type StatusPageCluster,
} from '../../shared/application/status-page/render-status-page.js';
import { DNS_SUBDOMAIN_RULE } from '../../shared/config/names.js';
import { describeError, isNotFound, messageOf } from '../../shared/domain/errors.js';
import { definedOnly } from '../../shared/domain/optional.js';
import type { StartRequest } from '../orchestration.js';
import { outputOf, startRequest } from '../orchestration.js';
import { orchestrations } from '../orchestrations/index.js';
import { runStatusOf } from '../orchestrations/run-status.js';
import { htmlDocument, isClusterName, isPoolName, json, problem, readJsonBody, shown } from './http-io.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

/** The durable client of an HTTP trigger: the singleton port plus the status links. */
export interface HttpOrchestrationClient extends OrchestrationClient {
  createCheckStatusResponse(request: HttpRequest | undefined, instanceId: string): HttpResponse;
}

export type ApiDependencies = Pick<
  TriggerDependencies,
  'clusters' | 'listPools' | 'readPoolStatus' | 'readClusterStatus' | 'planPool' | 'readPoolOwnership' | 'now'
>;

const PoolField = z
  .string()
  .refine((value) => value === value.toLowerCase() && /^[a-z0-9][-\w.]{0,62}$/.test(value), {
    error: 'a pool name: lowercase letters, digits, "-", "_" and ".", at most 64 characters',
  });

const RefreshRequest = z
  .strictObject({
    pool: PoolField.optional(),
    node: z.string().refine(DNS_SUBDOMAIN_RULE.test, { error: DNS_SUBDOMAIN_RULE.accepts }).optional(),
    dryRun: z.boolean().optional(),
  })
  .refine((body) => body.node === undefined || body.pool !== undefined, {
    error: 'a node needs its pool',
    path: ['node'],
  });
export type RefreshRequest = z.output<typeof RefreshRequest>;

/** A running instance as the API shows it: id, state and the step from its custom status. */
function runView(status: InstanceStatus): Record<string, unknown> {
  const custom = runStatusOf(status.customStatus);
  return {
    instanceId: status.instanceId,
    runtimeStatus: status.runtimeStatus,
    ...definedOnly({ step: custom.step, detail: custom.detail, node: custom.node, since: custom.since }),
  };
}

function iso(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const date = typeof value === 'string' ? new Date(value) : value;
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function conflict(what: string, running: InstanceStatus): HttpResponse {
  return problem(409, 'AlreadyRefreshing', `${what} is already refreshing (instance ${running.instanceId})`, {
    running: runView(running),
  });
}

function dependencyFailure(context: InvocationContext, action: string, error: unknown): HttpResponse {
  const message = describeError(error);
  if (isNotFound(error)) return problem(404, 'NotFound', message);
  context.error('refresh api: a dependency failed', { action, error: message });
  return problem(502, 'DependencyFailed', `${action}: ${message}`);
}

type Resolved<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly response: HttpResponse };

/** Validates the route's cluster (name rule first: nothing unvalidated reaches an id or a call). */
function resolveCluster(request: HttpRequest, deps: ApiDependencies): Resolved<string> {
  const cluster = request.params['cluster'];
  const known = deps.clusters.map((c) => c.name);
  if (!isClusterName(cluster) || !known.includes(cluster)) {
    return {
      ok: false,
      response: problem(
        404,
        'ClusterNotFound',
        `cluster ${shown(cluster ?? '')} is not configured; known clusters: ${known.join(', ')}`,
      ),
    };
  }
  return { ok: true, value: cluster };
}

async function resolvePools(
  context: InvocationContext,
  deps: ApiDependencies,
  cluster: string,
  pool: string | undefined,
): Promise<Resolved<string[]>> {
  let pools: string[];
  try {
    pools = await deps.listPools(cluster);
  } catch (error) {
    return { ok: false, response: dependencyFailure(context, `listing pools of cluster ${cluster}`, error) };
  }
  if (pool === undefined) return { ok: true, value: pools };
  if (!isPoolName(pool) || !pools.includes(pool)) {
    return {
      ok: false,
      response: problem(
        404,
        'PoolNotFound',
        `pool ${shown(pool)} is not a pool of cluster ${cluster}; known pools: ${pools.join(', ') || 'none'}`,
      ),
    };
  }
  return { ok: true, value: [pool] };
}

/**
 * Where a route's pools come from: every pool of the cluster, the path's `{pool}`, `?pool=`, or a field of
 * the body (then the body is read first).
 */
type PoolsFrom<B> = 'all' | 'path' | 'query' | { readonly body: (body: B) => string | undefined };

/** What a route checks before it acts: the cluster (always), its pools, and its body's schema. */
interface RoutePrelude<B> {
  readonly pools: PoolsFrom<B>;
  readonly body?: z.ZodType<B>;
}

/** A request past its route's prelude: a configured cluster, pools of it, a valid body. */
interface RouteInput<B> {
  readonly cluster: string;
  /** One pool for a route on one pool (the first is it), else every pool of the cluster. */
  readonly pools: readonly string[];
  readonly pool: string;
  readonly body: B;
}

function prelude<B = undefined>(pools: PoolsFrom<B>, body?: z.ZodType<B>): RoutePrelude<B> {
  return body === undefined ? { pools } : { pools, body };
}

/**
 * Runs a route's prelude, in one order for every route: the cluster (name rule first: nothing unvalidated
 * reaches an id or a call), then the pools and the body (the body first when it names the pool).
 */
async function resolveRoute<B>(
  request: HttpRequest,
  context: InvocationContext,
  deps: ApiDependencies,
  route: RoutePrelude<B>,
): Promise<Resolved<RouteInput<B>>> {
  const cluster = resolveCluster(request, deps);
  if (!cluster.ok) return cluster;
  const readBody = async (): Promise<Resolved<B>> => {
    if (route.body === undefined) return { ok: true, value: undefined as B };
    const body = await readJsonBody(request, route.body, {});
    return body.ok ? { ok: true, value: body.value } : body;
  };
  const from = route.pools;
  const body = typeof from === 'object' ? await readBody() : undefined;
  if (body !== undefined && !body.ok) return body;
  const named =
    from === 'all'
      ? undefined
      : from === 'path'
        ? request.params['pool']
        : from === 'query'
          ? (request.query.get('pool') ?? undefined)
          : body?.ok === true
            ? from.body(body.value)
            : undefined;
  const pools = await resolvePools(context, deps, cluster.value, named);
  if (!pools.ok) return pools;
  const read = body ?? (await readBody());
  if (!read.ok) return read;
  return {
    ok: true,
    value: { cluster: cluster.value, pools: pools.value, pool: pools.value[0] ?? '', body: read.value },
  };
}

/** POST /api/clusters/{cluster}/refresh: body `{ pool?, node?, dryRun? }`. */
export async function handleRefreshRequest(
  request: HttpRequest,
  client: HttpOrchestrationClient,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.refresh);
  if (!resolved.ok) return resolved.response;
  const { cluster, pools } = resolved.value;
  const { pool, node, dryRun } = resolved.value.body;

  const clusterId = clusterInstanceId(cluster);
  const start =
    pool === undefined
      ? startRequest(
          orchestrations.refreshCluster,
          clusterId,
          {
            cluster,
            trigger: 'http',
            runSeed: randomUUID(),
            ...definedOnly({ dryRun }),
          },
          pools.map((p) => poolInstanceId(cluster, p)),
        )
      : startRequest(
          orchestrations.refreshPool,
          poolInstanceId(cluster, pool),
          {
            cluster,
            pool,
            trigger: 'http',
            runSeed: randomUUID(),
            ...definedOnly({ node, dryRun }),
          },
          // A cluster run refreshes this pool too.
          [clusterId],
        );
  try {
    const outcome = await startSingleton(client, start);
    if (outcome.kind === 'running') {
      return conflict(
        pool === undefined ? `cluster ${cluster}` : `pool ${pool} of cluster ${cluster}`,
        outcome.status,
      );
    }
    context.log('refresh api: started', { instanceId: outcome.instanceId, dryRun: dryRun ?? false });
    return client.createCheckStatusResponse(request, outcome.instanceId);
  } catch (error) {
    context.error('refresh api: starting the refresh failed', {
      instanceId: start.instanceId,
      error: messageOf(error),
    });
    return problem(503, 'StartFailed', `starting refresh ${start.instanceId} failed; try again`);
  }
}

/** GET /api/clusters/{cluster}/status: per pool, the image in use, the last run and any run in flight. */
export async function handleStatusRequest(
  request: HttpRequest,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.status);
  if (!resolved.ok) return resolved.response;
  const { cluster, pools } = resolved.value;
  const clusterRun = await readStatus(client, clusterInstanceId(cluster));
  const views = await Promise.all(
    pools.map(async (pool) => {
      const [image, run, signal] = await Promise.all([
        deps.readPoolStatus(cluster, pool).then(
          (status): PoolStatus | { error: string } => status,
          (error: unknown) => ({ error: messageOf(error) }),
        ),
        readStatus(client, poolInstanceId(cluster, pool)),
        readStatus(client, signalInstanceId(cluster, pool)),
      ]);
      return {
        pool,
        image,
        ...(run === undefined
          ? {}
          : isActive(run)
            ? { inFlight: runView(run) }
            : {
                lastRun: {
                  ...runView(run),
                  finishedAt: iso(run.lastUpdatedTime),
                  outcome: outcomeOf(outputOf(orchestrations.refreshPool, run)),
                },
              }),
        ...(signal !== undefined && isActive(signal)
          ? { pendingRebootSignal: signal.customStatus ?? {} }
          : {}),
      };
    }),
  );
  return json(200, {
    cluster,
    ...(clusterRun === undefined
      ? {}
      : isActive(clusterRun)
        ? { clusterRun: runView(clusterRun) }
        : { lastClusterRun: { ...runView(clusterRun), finishedAt: iso(clusterRun.lastUpdatedTime) } }),
    pools: views,
  });
}

function outcomeOf(output: { readonly outcome: string; readonly reason: string } | undefined): unknown {
  return output === undefined ? undefined : { outcome: output.outcome, reason: output.reason };
}

/** GET /api/clusters/{cluster}/plan[?pool=]: auto mode's decision per pool, with every node's verdict. */
export async function handlePlanRequest(
  request: HttpRequest,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.plan);
  if (!resolved.ok) return resolved.response;
  const { cluster, pools } = resolved.value;
  try {
    const plans: PoolPlan[] = await Promise.all(pools.map((p) => deps.planPool(cluster, p)));
    return json(200, {
      cluster,
      pools: plans.map((plan) => ({
        pool: plan.pool,
        scaleSet: plan.scaleSet.name,
        decision: plan.decision,
        verdicts: plan.verdicts,
        ...definedOnly({ currentImageId: plan.currentImageId }),
      })),
    });
  } catch (error) {
    return dependencyFailure(context, `planning cluster ${cluster}`, error);
  }
}

const CancelRequest = z.strictObject({
  reason: z
    .string()
    .max(200, { error: 'a reason of at most 200 characters' })
    .refine((value) => ![...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f), {
      error: 'a reason without control characters',
    })
    .optional(),
});

/**
 * Cancels the running refresh of one pool: raises the `cancel` event the orchestration waits for while
 * it holds the node. 202 when delivered; 409 when no refresh of that pool is running.
 */
export async function handleCancelRequest(
  request: HttpRequest,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.cancel);
  if (!resolved.ok) return resolved.response;
  const { cluster, pool, body } = resolved.value;
  const instanceId = poolInstanceId(cluster, pool);
  const running = await readStatus(client, instanceId);
  if (running === undefined || !isActive(running)) {
    return problem(409, 'NotRefreshing', `pool ${pool} of cluster ${cluster} has no refresh running`);
  }
  await client.raiseEvent(instanceId, EVENT.cancel, body.reason ?? 'cancelled through the API');
  context.log('refresh api: cancel requested', { instanceId });
  return json(202, { id: instanceId, cancelRequested: true, running: runView(running) });
}

const ReleaseRequest = z.strictObject({ dryRun: z.boolean().optional(), force: z.boolean().optional() });

/**
 * Gives back what a pool's dead or stuck runs hold (the reaper, on demand). `dryRun`: 200 with what would be
 * given back and who holds the pool. Otherwise: 409 while a refresh of the pool runs in this task hub
 * (cancel it) or a live run of any runner holds the pool's lease (unless `force`); 200 when there is
 * nothing to give back; 202 with status links when the release starts.
 */
export async function handleReleaseRequest(
  request: HttpRequest,
  client: HttpOrchestrationClient,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.release);
  if (!resolved.ok) return resolved.response;
  const { cluster, pool, body } = resolved.value;
  const { dryRun, force } = body;
  let ownership;
  try {
    ownership = await deps.readPoolOwnership(cluster, pool);
  } catch (error) {
    return dependencyFailure(context, `reading who holds pool ${pool} of cluster ${cluster}`, error);
  }
  const heldBy = ownership.lease.state === 'held' ? ownership.lease.description : undefined;
  if (dryRun === true) {
    return json(200, {
      cluster,
      pool,
      dryRun: true,
      ...definedOnly({ heldBy }),
      wouldGiveBack: ownership.leftovers,
      kept: ownership.kept,
    });
  }
  const running = await readStatus(client, poolInstanceId(cluster, pool));
  if (running !== undefined && isActive(running)) {
    return problem(
      409,
      'RefreshRunning',
      `pool ${pool} of cluster ${cluster} is being refreshed (instance ${running.instanceId}): ` +
        'cancel it (POST …/cancel) instead; it gives its node back',
      { running: runView(running) },
    );
  }
  if (heldBy !== undefined && force !== true) {
    return problem(
      409,
      'PoolHeld',
      `pool ${pool} of cluster ${cluster} is held by ${heldBy}: cancel that run, wait until its lease ` +
        'expires, or send {"force":true} if you know that runner is gone',
    );
  }
  if (ownership.leftovers.length === 0 && !(force === true && heldBy !== undefined)) {
    return json(200, { cluster: cluster, pool, outcome: 'nothing-left', kept: ownership.kept });
  }
  return startPoolRun(request, client, context, {
    what: 'release',
    start: startRequest(orchestrations.releasePool, releaseInstanceId(cluster, pool), {
      cluster,
      pool,
      trigger: 'http',
      runSeed: randomUUID(),
      ...(force === true ? { force: true } : {}),
    }),
    busy: (instanceId) => ({
      code: 'AlreadyReleasing',
      message: `pool ${pool} is already being released (instance ${instanceId})`,
    }),
    logged: { force: force ?? false },
  });
}

/**
 * Starts one pool's release, rollback or retirement as a singleton: 409 with the running instance when it (or a
 * blocker) runs, 202 with the status links when started, 503 when the start failed.
 */
async function startPoolRun(
  request: HttpRequest,
  client: HttpOrchestrationClient,
  context: InvocationContext,
  run: {
    readonly what: 'release' | 'rollback' | 'retirement';
    readonly start: StartRequest;
    readonly busy: (runningId: string) => { readonly code: string; readonly message: string };
    readonly logged: Record<string, unknown>;
  },
): Promise<HttpResponse> {
  const { instanceId } = run.start;
  try {
    const outcome = await startSingleton(client, run.start);
    if (outcome.kind === 'running') {
      const busy = run.busy(outcome.instanceId);
      return problem(409, busy.code, busy.message, { running: runView(outcome.status) });
    }
    context.log(`refresh api: ${run.what} started`, { instanceId, ...run.logged });
    return client.createCheckStatusResponse(request, instanceId);
  } catch (error) {
    context.error(`refresh api: starting the ${run.what} failed`, {
      instanceId,
      error: messageOf(error),
    });
    return problem(503, 'StartFailed', `starting ${run.what} ${instanceId} failed; try again`);
  }
}

const VersionField = z.string().regex(/^\d{1,10}\.\d{1,10}\.\d{1,10}$/, {
  error: 'a gallery image version name: Major.Minor.Patch, e.g. 2026.1123.101500 (see status)',
});

/** A dry run changes nothing: an instance id of its own (this suffix), never blocked. */
function dryRunSuffix(): string {
  return new Date().toISOString().replaceAll(/[^0-9]/g, '');
}

const VERSION_OR_UNKNOWN =
  'a gallery image version name: Major.Minor.Patch, e.g. 2026.1123.101500 (see status), or "unknown" for the nodes built from the original image';

const RollbackRequest = z.strictObject({
  to: VersionField.optional(),
  dryRun: z.boolean().optional(),
});

/**
 * POST /api/clusters/{cluster}/pools/{pool}/rollback: body `{ to?, dryRun? }`. Points the pool at a
 * retained earlier version (default: the previous usable one). Refused while the pool or its cluster is
 * refreshing or rolling back; the run itself refuses a target that is gone, not Succeeded or rejected.
 */
export async function handleRollbackRequest(
  request: HttpRequest,
  client: HttpOrchestrationClient,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.rollback);
  if (!resolved.ok) return resolved.response;
  const { cluster, pool, body } = resolved.value;
  const { to, dryRun } = body;
  const instanceId =
    dryRun === true ? rollbackInstanceId(cluster, pool, dryRunSuffix()) : rollbackInstanceId(cluster, pool);
  return startPoolRun(request, client, context, {
    what: 'rollback',
    start: startRequest(
      orchestrations.rollbackPool,
      instanceId,
      {
        cluster,
        pool,
        trigger: 'http',
        runSeed: randomUUID(),
        ...definedOnly({ to }),
        ...(dryRun === true ? { dryRun } : {}),
      },
      dryRun === true ? [] : [poolInstanceId(cluster, pool), clusterInstanceId(cluster)],
    ),
    busy: (runningId) => ({
      code: 'PoolBusy',
      message: `pool ${pool} of cluster ${cluster} is busy (instance ${runningId}); roll back once it ends`,
    }),
    logged: { dryRun: dryRun ?? false },
  });
}

const RetireRequest = z.strictObject({
  // "unknown": the nodes built from the pool's original image (not one of our versions).
  generation: z.union([VersionField, z.literal('unknown')], { error: VERSION_OR_UNKNOWN }).optional(),
  dryRun: z.boolean().optional(),
});

/**
 * POST /api/clusters/{cluster}/pools/{pool}/retire: body `{ generation?, dryRun? }`. Without a generation,
 * the pool's scheduled retirement policy now; with one, every node of that image version (docs/retirement.md).
 * Refused while the pool or its cluster is refreshing or the pool retiring; the run itself refuses a pool
 * whose retirement is off, a CAPZ pool, and the generation new nodes get.
 */
export async function handleRetireRequest(
  request: HttpRequest,
  client: HttpOrchestrationClient,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const resolved = await resolveRoute(request, context, deps, ROUTE_PRELUDES.retire);
  if (!resolved.ok) return resolved.response;
  const { cluster, pool, body } = resolved.value;
  const { generation, dryRun } = body;
  const instanceId =
    dryRun === true ? retireInstanceId(cluster, pool, dryRunSuffix()) : retireInstanceId(cluster, pool);
  return startPoolRun(request, client, context, {
    what: 'retirement',
    start: startRequest(
      orchestrations.retirePool,
      instanceId,
      {
        cluster,
        pool,
        trigger: 'http',
        runSeed: randomUUID(),
        ...definedOnly({ generation }),
        ...(dryRun === true ? { dryRun } : {}),
      },
      dryRun === true ? [] : [poolInstanceId(cluster, pool), clusterInstanceId(cluster)],
    ),
    busy: (runningId) => ({
      code: 'PoolBusy',
      message: `pool ${pool} of cluster ${cluster} is busy (instance ${runningId}); retire once it ends`,
    }),
    logged: { dryRun: dryRun ?? false, ...definedOnly({ generation }) },
  });
}

/** Each cluster route's prelude (resolveRoute): where its pools come from, and its body's schema. */
const ROUTE_PRELUDES = {
  refresh: prelude<RefreshRequest>({ body: (body) => body.pool }, RefreshRequest),
  status: prelude('all'),
  plan: prelude('query'),
  cancel: prelude('path', CancelRequest),
  release: prelude('path', ReleaseRequest),
  rollback: prelude('path', RollbackRequest),
  retire: prelude('path', RetireRequest),
};

/**
 * GET /api/status/page[?cluster=]: the status page, one self-contained HTML document (no script, nothing
 * fetched), with a Content-Security-Policy that allows only its inline styles. A cluster or pool whose
 * status cannot be read says so on the page; the page itself still answers 200.
 */
export async function handleStatusPageRequest(
  request: HttpRequest,
  context: InvocationContext,
  deps: ApiDependencies,
): Promise<HttpResponse> {
  const only = request.query.get('cluster') ?? undefined;
  const known = deps.clusters.map((c) => c.name);
  if (only !== undefined && (!isClusterName(only) || !known.includes(only))) {
    return problem(
      404,
      'ClusterNotFound',
      `cluster ${shown(only)} is not configured; known clusters: ${known.join(', ')}`,
    );
  }
  const clusters: StatusPageCluster[] = await Promise.all(
    (only === undefined ? known : [only]).map(async (cluster): Promise<StatusPageCluster> => {
      try {
        const read = await deps.readClusterStatus(cluster);
        return { cluster, pools: read.pools, unreadable: read.unreadable };
      } catch (error) {
        context.warn('refresh api: reading status for the page failed', {
          cluster,
          error: describeError(error),
        });
        return { cluster, pools: [], error: describeError(error) };
      }
    }),
  );
  return htmlDocument(200, renderStatusPage({ generatedAt: deps.now().toISOString(), clusters }), {
    'content-type': STATUS_PAGE_CONTENT_TYPE,
    'content-security-policy': STATUS_PAGE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
}

/** Any failure not answered above is a 500 without internals (logged with the invocation id). */
async function guarded(context: InvocationContext, run: () => Promise<HttpResponse>): Promise<HttpResponse> {
  try {
    return await run();
  } catch (error) {
    context.error('refresh api: unexpected failure', {
      error: messageOf(error),
    });
    return problem(
      500,
      'InternalError',
      `the request failed; see the logs of invocation ${context.invocationId}`,
    );
  }
}

type ApiHandler = (
  request: HttpRequest,
  client: df.DurableClient,
  context: InvocationContext,
  deps: TriggerDependencies,
) => Promise<HttpResponse>;

/** The API's routes; every one needs a function key (never anonymous). */
export const API_ROUTES: readonly {
  readonly name: string;
  readonly route: string;
  readonly method: 'GET' | 'POST';
  readonly authLevel: 'function';
  readonly handle: ApiHandler;
}[] = [
  {
    name: 'refreshClusterApi',
    route: 'clusters/{cluster}/refresh',
    method: 'POST',
    authLevel: 'function',
    handle: handleRefreshRequest,
  },
  {
    name: 'clusterStatusApi',
    route: 'clusters/{cluster}/status',
    method: 'GET',
    authLevel: 'function',
    handle: handleStatusRequest,
  },
  {
    name: 'cancelPoolRefreshApi',
    route: 'clusters/{cluster}/pools/{pool}/cancel',
    method: 'POST',
    authLevel: 'function',
    handle: handleCancelRequest,
  },
  {
    name: 'releasePoolApi',
    route: 'clusters/{cluster}/pools/{pool}/release',
    method: 'POST',
    authLevel: 'function',
    handle: handleReleaseRequest,
  },
  {
    name: 'rollbackPoolApi',
    route: 'clusters/{cluster}/pools/{pool}/rollback',
    method: 'POST',
    authLevel: 'function',
    handle: handleRollbackRequest,
  },
  {
    name: 'retirePoolApi',
    route: 'clusters/{cluster}/pools/{pool}/retire',
    method: 'POST',
    authLevel: 'function',
    handle: handleRetireRequest,
  },
  {
    name: 'clusterPlanApi',
    route: 'clusters/{cluster}/plan',
    method: 'GET',
    authLevel: 'function',
    handle: (request, _client, context, deps) => handlePlanRequest(request, context, deps),
  },
  {
    name: 'statusPageApi',
    route: 'status/page',
    method: 'GET',
    authLevel: 'function',
    handle: (request, _client, context, deps) => handleStatusPageRequest(request, context, deps),
  },
];

export function registerRefreshApi(): void {
  for (const { name, route, method, authLevel, handle } of API_ROUTES) {
    df.app.client.http(name, {
      route,
      methods: [method],
      authLevel,
      handler: (request: HttpRequest, client: df.DurableClient, context: InvocationContext) =>
        guarded(context, () => handle(request, client, context, workerTriggerDependencies())),
    });
  }
}
