/**
 * Request routing of the simulated Kubernetes API server: a URL and method become either a resource
 * request (group/version/resource, namespace, name, subresource, verb) or a discovery/health reply,
 * plus the reply type the verb handlers return.
 */
import { type CoreVersion, servesClusterApiResource } from './cluster-api-resources.js';
import { openApiV2Document, openApiV3Document, openApiV3Index } from './openapi.js';
import { negotiateOpenApiV2, OPENAPI_V2_PROTOBUF, openApiV2Forms } from './openapi-protobuf.js';
import type { OpenApiExtension, ResourceInfo, ReviewKind, ServedCustomResources } from './resources.js';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  findResource,
  isClusterApiGroup,
  restNameOf,
  REVIEW_RESOURCES,
  servedGroups,
  servedGroupVersions,
} from './resources.js';
import { KubeApiError, type ObjectRef } from './status.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRoute {
  type: 'resource';
  info: ResourceInfo;
  verb: Verb;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface OtherRoute {
  type: 'discovery' | 'health' | 'missing';
  /** Served to anonymous callers too, like the system:public-info-viewer role allows. */
  public?: boolean;
  respond: () => OtherReply;
}

/** A reply outside the resource verbs; a Buffer body is sent as it is, with its content type. */
export interface OtherReply {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** A self review (`POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`…): answered, never stored. */
export interface ReviewRoute {
  type: 'review';
  kind: ReviewKind;
  group: string;
  resource: string;
}

type Route = ResourceRoute | OtherRoute | ReviewRoute;

export class HttpReply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    /** Extra response headers, e.g. the `Warning` of fields a write dropped. */
    readonly headers: Record<string, string> = {},
  ) {}
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function successStatus(code: number, details?: Record<string, unknown>): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    ...(details ? { details } : {}),
    code,
  };
}

export function routeRequest(
  method: string,
  url: URL,
  serverVersion: Record<string, string>,
  accept = 'application/json',
  /** The cluster.x-k8s.io versions a management cluster serves; undefined on a workload cluster. */
  clusterApi?: readonly CoreVersion[],
  custom?: ServedCustomResources,
): Route {
  const groups = servedGroups(clusterApi);
  const segments = url.pathname
    .split('/')
    .filter((segment) => segment !== '')
    .map(decodeURIComponent);
  const path = segments.join('/');
  const discovery = (body: unknown, anonymous = false): Route => ({
    type: 'discovery',
    public: anonymous,
    respond: () => ({ status: 200, body }),
  });
  if (method === 'GET') {
    if (path === 'version') return discovery(serverVersion, true);
    if (path === 'api') return discovery(apiVersions(url.host));
    if (path === 'apis') return discovery(apiGroupList(clusterApi, custom));
    if (path === 'api/v1') return discovery(apiResourceList('', 'v1'));
    if (segments[0] === 'apis' && segments.length === 3) {
      const [, group = '', version = ''] = segments;
      if (groups.some((entry) => entry.group === group && entry.version === version)) {
        return discovery(apiResourceList(group, version, undefined, clusterApi));
      }
      if (custom?.groups().some((entry) => entry.group === group && entry.versions.includes(version)))
        return discovery(apiResourceList(group, version, custom));
    }
    if (segments[0] === 'apis' && segments.length === 2) {
      const served = servedGroupVersions(clusterApi).find((entry) => entry.group === segments[1]);
      if (served)
        return discovery({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(served.group, served.versions) });
      const customGroup = custom?.groups().find((entry) => entry.group === segments[1]);
      if (customGroup)
        return discovery({
          kind: 'APIGroup',
          apiVersion: 'v1',
          ...apiGroup(customGroup.group, customGroup.versions),
        });
    }
    const gitVersion = serverVersion.gitVersion ?? '';
    const extension = custom?.openApi();
    if (path === 'openapi/v2') return openApiV2(accept, gitVersion, extension);
    if (path === 'openapi/v3') {
      return {
        type: 'discovery',
        respond: () => ({ status: 200, body: openApiV3Index(gitVersion, extension) }),
      };
    }
    if (segments[0] === 'openapi' && segments[1] === 'v3') {
      const document = openApiV3Document(segments.slice(2).join('/'), gitVersion, extension);
      if (document) return discovery(document);
    }
    if (['healthz', 'livez', 'readyz'].includes(path)) {
      return {
        type: 'health',
        public: true,
        respond: () => ({ status: 200, body: 'ok', contentType: 'text/plain; charset=utf-8' }),
      };
    }
  }
  const review = REVIEW_RESOURCES.find(
    (candidate) =>
      segments.length === 4 &&
      segments[0] === 'apis' &&
      segments[1] === candidate.group &&
      segments[2] === candidate.version &&
      segments[3] === candidate.resource,
  );
  if (review) {
    if (method !== 'POST') return methodNotAllowed();
    return { type: 'review', kind: review.kind, group: review.group, resource: review.resource };
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments[1] === 'v1') {
    group = '';
    version = 'v1';
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    group = segments[1] ?? '';
    version = segments[2] ?? '';
    rest = segments.slice(3);
  } else {
    return missing(url.pathname);
  }
  let namespace: string | undefined;
  // `/namespaces/<ns>/<resource>/…` is namespaced; `/namespaces/<ns>` alone is the Namespace object.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !['status', 'finalize'].includes(rest[2] ?? '')) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural = '', name, subresource, ...extra] = rest;
  const info = findResource(group, version, plural) ?? custom?.find(group, version, plural);
  if (!info || extra.length > 0) return missing(url.pathname);
  if (isClusterApiGroup(info.group) && (!clusterApi || !servesClusterApiResource(info, clusterApi)))
    return missing(url.pathname);
  if (namespace !== undefined && !info.namespaced) return missing(url.pathname);
  if (namespace === undefined && info.namespaced && name !== undefined) return missing(url.pathname);
  if (subresource !== undefined && !(info.subresources && subresource in info.subresources)) {
    return missing(url.pathname);
  }
  const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
  let verb: Verb;
  switch (method) {
    case 'GET':
      verb = name === undefined ? (watch ? 'watch' : 'list') : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      return missing(url.pathname);
  }
  return {
    type: 'resource',
    info,
    verb,
    ...(namespace === undefined ? {} : { namespace }),
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
  };
}

/**
 * `/openapi/v2` as JSON or as the gnostic protobuf message, whichever the Accept header prefers, with
 * the ETag and `Vary: Accept` kube-openapi sends (kubernetes/kube-openapi `pkg/handler/handler.go`);
 * 406 when it names neither.
 */
function openApiV2(accept: string, gitVersion: string, extension?: OpenApiExtension): OtherRoute {
  const form = negotiateOpenApiV2(accept);
  if (form === undefined) {
    return {
      type: 'missing',
      respond: () => ({
        status: 406,
        body: new KubeApiError(
          'NotAcceptable',
          `only the following media types are accepted: application/json, ${OPENAPI_V2_PROTOBUF}`,
        ).toStatus(),
      }),
    };
  }
  return {
    type: 'discovery',
    respond: () => {
      const key = extension === undefined ? gitVersion : `${gitVersion}#${extension.revision}`;
      const forms = openApiV2Forms(key, () => openApiV2Document(gitVersion, extension));
      const headers = { ETag: forms.etag, Vary: 'Accept' };
      return form === 'protobuf'
        ? { status: 200, body: forms.protobuf, contentType: OPENAPI_V2_PROTOBUF, headers }
        : { status: 200, body: forms.json, contentType: 'application/json', headers };
    },
  };
}

function methodNotAllowed(): OtherRoute {
  return {
    type: 'missing',
    respond: () => ({
      status: 405,
      body: new KubeApiError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      ).toStatus(),
    }),
  };
}

export function missing(path: string): OtherRoute {
  return {
    type: 'missing',
    respond: () => ({
      status: 404,
      body: new KubeApiError('NotFound', 'the server could not find the requested resource', {
        causes: [{ reason: 'UnexpectedServerResponse', message: `404 page not found: ${path}` }],
      }).toStatus(),
    }),
  };
}

export function operationOf(target: Route): string {
  if (target.type === 'review') return `${target.resource}:create`;
  if (target.type !== 'resource') return `${target.type}:get`;
  const name = restNameOf(target.info);
  const resource = target.subresource === undefined ? name : `${name}/${target.subresource}`;
  return `${resource}:${target.verb}`;
}

export function refOf(target: ResourceRoute, name?: string): ObjectRef {
  return { resource: restNameOf(target.info), group: target.info.group, name: name ?? target.name ?? '' };
}
