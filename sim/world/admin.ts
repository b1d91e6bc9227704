/**
 * The simulator's admin API under `/_sim/` (mounted on the ARM server): move time, add and clear faults,
 * read request counts, trigger the kured and autoscaler stand-ins, delete nodes, dump the world.
 * Requests need `Authorization: Bearer <admin token>`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { z } from 'zod';

import { messageOf } from '../errors.js';
import { FaultEntry, formatPath } from './scenario.js';
import type { World } from './world.js';

export const ADMIN_PREFIX = '/_sim';

const Advance = z.union([
  z.strictObject({ seconds: z.number().nonnegative() }),
  z.strictObject({ to: z.iso.datetime({ offset: true }) }),
  z.strictObject({ toNextEvent: z.literal(true) }),
]);
const KuredRequest = z.strictObject({ cluster: z.string().optional(), nodes: z.array(z.string()).min(1) });
const ClusterRequest = z.strictObject({ cluster: z.string().optional() });
const AutoscalerSettings = z.strictObject({
  cluster: z.string().optional(),
  enabled: z.boolean(),
  intervalSeconds: z.number().positive().optional(),
});

class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parse<T>(schema: z.ZodType<T>, text: string, what: string): T {
  let data: unknown;
  try {
    data = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new AdminError(400, `reading ${what}: the body is not JSON (${messageOf(error)})`);
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
    throw new AdminError(400, `reading ${what}: ${problems.join('; ')}`);
  }
  return result.data;
}

export interface AdminHandlerOptions {
  world: World;
  /** Tokens accepted as `Authorization: Bearer <token>`. */
  adminTokens: readonly string[];
}

export type AdminHandler = (request: IncomingMessage, response: ServerResponse) => void;

export function createAdminHandler(options: AdminHandlerOptions): AdminHandler {
  const { world } = options;
  const tokens = new Set(options.adminTokens);

  function route(method: string, path: string, body: string): { status: number; body: unknown } {
    const clock = world.clock;
    const cluster = (name: string | undefined) => {
      try {
        return world.cluster(name);
      } catch (error) {
        throw new AdminError(404, messageOf(error));
      }
    };
    switch (`${method} ${path}`) {
      case 'GET /state':
        return { status: 200, body: world.dump() };
      case 'GET /capz':
        return { status: 200, body: world.capzEvents() };
      case 'GET /identity':
        return { status: 200, body: world.identity() };
      case 'GET /time':
        return { status: 200, body: timeBody() };
      case 'POST /time/advance': {
        const advance = parse(Advance, body, 'time advance');
        if ('seconds' in advance) clock.advanceBy(advance.seconds);
        else if ('to' in advance) clock.advanceTo(Date.parse(advance.to));
        else {
          const next = clock.nextEventAt();
          if (next !== undefined) clock.advanceTo(next);
        }
        return { status: 200, body: timeBody() };
      }
      case 'GET /requests':
        return { status: 200, body: world.log.snapshot() };
      case 'DELETE /requests':
        world.log.reset();
        return { status: 200, body: world.log.snapshot() };
      case 'GET /faults':
        return { status: 200, body: world.faults.rules() };
      case 'POST /faults': {
        const entry = parse(FaultEntry, body, 'fault');
        try {
          return { status: 201, body: world.applyFault(entry) };
        } catch (error) {
          throw new AdminError(400, messageOf(error));
        }
      }
      case 'DELETE /faults':
        world.faults.clear();
        return { status: 200, body: [] };
      case 'POST /kured': {
        const request = parse(KuredRequest, body, 'kured request');
        try {
          const run = cluster(request.cluster).kured.patchAndReboot(request.nodes);
          return { status: 202, body: { nodes: run.nodes, state: run.state } };
        } catch (error) {
          if (error instanceof AdminError) throw error;
          throw new AdminError(400, messageOf(error));
        }
      }
      case 'GET /kured':
        return { status: 200, body: cluster(undefined).kured.events };
      case 'POST /autoscaler/scale-down': {
        const request = parse(ClusterRequest, body, 'scale-down request');
        return {
          status: 200,
          body: { removed: cluster(request.cluster).autoscaler.scaleDownIdle() ?? null },
        };
      }
      case 'POST /autoscaler': {
        const settings = parse(AutoscalerSettings, body, 'autoscaler settings');
        const handle = cluster(settings.cluster);
        if (settings.enabled) handle.autoscaler.enable(settings.intervalSeconds);
        else handle.autoscaler.disable();
        return { status: 200, body: { enabled: handle.autoscaler.isEnabled() } };
      }
      default:
        break;
    }
    const fault = /^\/faults\/([^/]+)$/.exec(path);
    if (fault?.[1] && method === 'DELETE') {
      const removed = world.faults.remove(decodeURIComponent(fault[1]));
      if (!removed) throw new AdminError(404, `removing fault ${fault[1]}: no such rule`);
      return { status: 200, body: { removed: fault[1] } };
    }
    const node = /^\/nodes\/([^/]+)$/.exec(path);
    if (node?.[1] && method === 'DELETE') {
      try {
        world.deleteNode(decodeURIComponent(node[1]));
      } catch (error) {
        throw new AdminError(404, messageOf(error));
      }
      return { status: 200, body: { deleted: node[1] } };
    }
    throw new AdminError(404, `no admin endpoint ${method} ${ADMIN_PREFIX}${path}`);

    function timeBody(): unknown {
      const next = clock.nextEventAt();
      return {
        now: new Date(clock.nowMs()).toISOString(),
        mode: clock.mode,
        timeFactor: clock.timeFactor,
        nextEventAt: next === undefined ? null : new Date(next).toISOString(),
      };
    }
  }

  return (request, response) => {
    const reply = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body, null, 2));
    };
    void (async () => {
      try {
        const body = await readBody(request);
        const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        if (!match?.[1] || !tokens.has(match[1])) {
          throw new AdminError(
            401,
            'calling the simulator admin API: send Authorization: Bearer <admin token>',
          );
        }
        world.clock.runDue();
        const url = new URL(request.url ?? '/', 'https://127.0.0.1');
        const path = url.pathname.slice(ADMIN_PREFIX.length).replace(/\/+$/, '') || '/';
        const result = route((request.method ?? 'GET').toUpperCase(), path, body);
        reply(result.status, result.body);
      } catch (error) {
        const status = error instanceof AdminError ? error.status : 500;
        reply(status, { error: { message: messageOf(error) } });
      }
    })();
  };
}
