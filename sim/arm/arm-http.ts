/**
 * The HTTP vocabulary of the simulated ARM: request context, replies, routes, ARM error bodies
 * (`HttpError`) and the parsing/validation helpers every route group shares.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

import { z } from 'zod';

import { messageOf } from '../errors.js';
import type { ApiSurface } from './api-versions.js';
import {
  type ArmErrorBody,
  ComputeError,
  deepCopy,
  isObject,
  type JsonObject,
  textOr,
} from './compute-state.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: ArmErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

export interface Principal {
  clientId: string;
  objectId: string;
}

export interface RequestContext {
  method: string;
  url: URL;
  path: string;
  baseUrl: string;
  apiVersion: string;
  subscriptionId: string;
  resourceGroup: string;
  params: Record<string, string>;
  body: unknown;
  rawBody: string;
  /** The request headers (lower-cased names), e.g. `if-match`. */
  headers: IncomingHttpHeaders;
  route: Route;
  principal: Principal;
  /** The RBAC scope the route's action was authorized on. */
  scope: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  method: string;
  /** Segments after `providers/Microsoft.Compute/`; `:name` captures. */
  pattern: string[];
  surface: ApiSurface;
  action: string;
  /** The route starts a long-running operation (its failure can be injected). */
  lro?: boolean;
  /** The request path ends in an action verb; the RBAC scope is the resource before it. */
  verb?: boolean;
  /** Any authenticated caller may call it (reading its own permissions): no role action is checked. */
  anyCaller?: boolean;
  resourceType: string;
  handle: (context: RequestContext) => Reply;
}

export const Tags = z.record(z.string(), z.string());

export function matchPattern(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of pattern.entries()) {
    const segment = segments[index] ?? '';
    if (part.startsWith(':')) {
      if (segment === '') return undefined;
      params[part.slice(1)] = segment;
    } else if (part.toLowerCase() !== segment.toLowerCase()) {
      return undefined;
    }
  }
  return params;
}

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function authenticate(header: string | undefined): Principal {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!match?.[1]) {
    throw new HttpError(
      401,
      {
        code: 'AuthenticationFailed',
        message: "Authentication failed. The 'Authorization' header is missing.",
      },
      {
        'WWW-Authenticate':
          'Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="The authentication failed because of missing \'Authorization\' header."',
      },
    );
  }
  return principalOf(match[1]);
}

/** Reads `appid`/`oid` from a JWT-shaped token, so 403 messages name the caller like ARM does. */
function principalOf(token: string): Principal {
  const payload = token.split('.')[1];
  if (payload) {
    try {
      const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (isObject(claims)) {
        return {
          clientId: textOr(claims.appid, textOr(claims.azp, 'unknown-client')),
          objectId: textOr(claims.oid, 'unknown-object'),
        };
      }
    } catch {
      // Opaque tokens are fine; the caller just stays anonymous in messages.
    }
  }
  return { clientId: 'unknown-client', objectId: 'unknown-object' };
}

export function notFoundRoute(path: string): HttpError {
  const type = /\/providers\/(Microsoft\.Compute\/[^/]+)/i.exec(path)?.[1] ?? path;
  return new HttpError(404, {
    code: 'InvalidResourceType',
    message: `The resource type '${type.split('/').slice(1).join('/')}' could not be found in the namespace 'Microsoft.Compute' for this simulated region.`,
  });
}

export function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new HttpError(400, {
      code: 'InvalidRequestContent',
      message: `The request content was invalid and could not be deserialized: '${messageOf(error)}'.`,
    });
  }
}

/** Validates a body; a missing field is ARM's "Required parameter … is missing (null)", other issues InvalidRequestContent. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, prefix?: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [...(prefix ? [prefix] : []), ...(issue?.path ?? []).map(String)].join('.');
  const value = issue ? valueAt(body, issue.path) : undefined;
  if (issue && (value === undefined || value === null)) {
    throw invalidParameter(`Required parameter '${path}' is missing (null).`, path);
  }
  throw new HttpError(400, {
    code: 'InvalidRequestContent',
    message: `The request content was invalid and could not be deserialized: '${path}: ${issue?.message ?? 'invalid'}'.`,
  });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (!isObject(current) && !Array.isArray(current)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

export function invalidParameter(message: string, target: string): HttpError {
  return new HttpError(400, { code: 'InvalidParameter', message, target });
}

export function propertyChange(property: string): HttpError {
  const message = `Changing property '${property}' is not allowed.`;
  return new HttpError(409, {
    code: 'PropertyChangeNotAllowed',
    message,
    target: property,
    details: [{ code: 'PropertyChangeNotAllowed', message, target: property }],
  });
}

export function errorReply(error: unknown): Reply {
  if (error instanceof HttpError)
    return { status: error.status, body: { error: error.body }, headers: error.headers };
  if (error instanceof ComputeError) return { status: error.status, body: { error: error.toArmError() } };
  return {
    status: 500,
    body: { error: { code: 'InternalServerError', message: `serving request: ${String(error)}` } },
  };
}

export function expandIncludes(url: URL, value: string): boolean {
  const expand = url.searchParams.get('$expand') ?? '';
  return expand
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .includes(value.toLowerCase());
}

export function objectPath(root: JsonObject, ...path: string[]): JsonObject | undefined {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return isObject(current) ? current : undefined;
}

const READ_ONLY_SCALE_SET = ['provisioningState', 'uniqueId', 'timeCreated'];

export function withoutReadOnly(properties: JsonObject): JsonObject {
  const copy = deepCopy(properties);
  for (const key of READ_ONLY_SCALE_SET) delete copy[key];
  delete copy.replicationStatus;
  return copy;
}

export function readOnlyOf(properties: JsonObject): JsonObject {
  return Object.fromEntries(
    READ_ONLY_SCALE_SET.filter((key) => key in properties).map((key) => [key, properties[key]]),
  );
}
