/**
 * The OpenAPI documents of the simulated API server: `/openapi/v3` (an index of group-version
 * documents, what kubectl 1.32 reads for `explain`, for validation and to learn which query parameters
 * — `fieldValidation`, `dryRun` — each operation takes) and `/openapi/v2` (one document; its protobuf
 * form, which client-go's v2 reader asks for, is in openapi-protobuf.ts). Paths are generated from the served
 * resources, schemas come from openapi-schemas.ts. Also strict field validation (`fieldValidation`)
 * over the same schemas.
 */
import { createHash } from 'node:crypto';

import { definitionOf, DEFINITIONS, type Schema } from './openapi-schemas.js';
import type { OpenApiExtension } from './resources.js';
import { API_GROUPS, RESOURCES, restNameOf, REVIEW_RESOURCES } from './resources.js';

interface Operation {
  method: 'get' | 'put' | 'post' | 'patch' | 'delete';
  action: 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';
  /** Definition name of the request/response body. */
  body?: string;
  response: string;
  kind: { group: string; version: string; kind: string };
  summary: string;
}

interface PathEntry {
  path: string;
  pathParameters: string[];
  operations: Operation[];
  /** A custom resource's path: its PATCH takes no strategic merge patch. */
  custom?: boolean;
}

/**
 * The media types a PATCH takes. A custom resource has no Go type to merge by, so the real server neither
 * takes nor advertises a strategic merge patch for it (apiextensions-apiserver
 * pkg/controller/openapi/builder/builder.go); kubectl apply reads this to choose a JSON merge patch.
 */
function patchMediaTypes(custom: boolean | undefined): string[] {
  return [
    'application/json-patch+json',
    'application/merge-patch+json',
    ...(custom === true ? [] : ['application/strategic-merge-patch+json']),
    'application/apply-patch+yaml',
  ];
}

const WRITE_PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation', 'pretty'];
const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  dryRun:
    'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
  fieldManager: 'fieldManager is a name associated with the actor or entity that is making these changes.',
  fieldValidation:
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict',
  pretty: "If 'true', then the output is pretty printed.",
  name: 'name of the resource',
  namespace: 'object name and auth scope, such as for teams and projects',
  gracePeriodSeconds: 'The duration in seconds before the object should be deleted.',
  labelSelector: 'A selector to restrict the list of returned objects by their labels.',
  fieldSelector: 'A selector to restrict the list of returned objects by their fields.',
  limit: 'limit is a maximum number of responses to return for a list call.',
  continue: 'The continue option should be set when retrieving more results from the server.',
  resourceVersion:
    'resourceVersion sets a constraint on what resource versions a request may be served from.',
  watch:
    'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.',
};

function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** Every path of a group version, with its operations. */
function pathsOf(group: string, version: string, extension?: OpenApiExtension): PathEntry[] {
  const base = `/${groupVersionPath(group, version)}`;
  const entries: PathEntry[] = [];
  for (const info of [...RESOURCES, ...(extension?.resources ?? [])].filter(
    (candidate) => candidate.group === group && candidate.version === version,
  )) {
    const firstEntry = entries.length;
    const gvk = { group, version, kind: info.kind };
    const definition = info.custom?.definition ?? definitionOf(group, info.kind);
    const listDefinition = info.custom?.listDefinition ?? definitionOf(group, `${info.kind}List`);
    const collection = info.namespaced
      ? `${base}/namespaces/{namespace}/${restNameOf(info)}`
      : `${base}/${restNameOf(info)}`;
    const scope = info.namespaced ? ['namespace'] : [];
    entries.push({
      path: collection,
      pathParameters: scope,
      operations: [
        {
          method: 'get',
          action: 'list',
          response: listDefinition,
          kind: gvk,
          summary: `list or watch objects of kind ${info.kind}`,
        },
        {
          method: 'post',
          action: 'post',
          body: definition,
          response: definition,
          kind: gvk,
          summary: `create a ${info.kind}`,
        },
        // Only where discovery advertises it (a Namespace has no deletecollection).
        ...(info.verbs.includes('deletecollection')
          ? [
              {
                method: 'delete' as const,
                action: 'deletecollection' as const,
                response: 'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
                kind: gvk,
                summary: `delete collection of ${info.kind}`,
              },
            ]
          : []),
      ],
    });
    if (info.namespaced) {
      entries.push({
        path: `${base}/${restNameOf(info)}`,
        pathParameters: [],
        operations: [
          {
            method: 'get',
            action: 'list',
            response: listDefinition,
            kind: gvk,
            summary: `list or watch objects of kind ${info.kind}`,
          },
        ],
      });
    }
    entries.push({
      path: `${collection}/{name}`,
      pathParameters: [...scope, 'name'],
      operations: [
        {
          method: 'get',
          action: 'get',
          response: definition,
          kind: gvk,
          summary: `read the specified ${info.kind}`,
        },
        {
          method: 'put',
          action: 'put',
          body: definition,
          response: definition,
          kind: gvk,
          summary: `replace the specified ${info.kind}`,
        },
        {
          method: 'patch',
          action: 'patch',
          body: 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
          response: definition,
          kind: gvk,
          summary: `partially update the specified ${info.kind}`,
        },
        {
          method: 'delete',
          action: 'delete',
          body: 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
          response: 'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
          kind: gvk,
          summary: `delete a ${info.kind}`,
        },
      ],
    });
    for (const [sub, subInfo] of Object.entries(info.subresources ?? {})) {
      if (sub === 'eviction') {
        const eviction = {
          group: subInfo.group ?? 'policy',
          version: subInfo.version ?? 'v1',
          kind: subInfo.kind,
        };
        entries.push({
          path: `${collection}/{name}/eviction`,
          pathParameters: [...scope, 'name'],
          operations: [
            {
              method: 'post',
              action: 'post',
              body: definitionOf(eviction.group, 'Eviction'),
              response: definitionOf(eviction.group, 'Eviction'),
              kind: eviction,
              summary: `create eviction of a ${info.kind}`,
            },
          ],
        });
      } else {
        entries.push({
          path: `${collection}/{name}/${sub}`,
          pathParameters: [...scope, 'name'],
          operations: [
            {
              method: 'get',
              action: 'get',
              response: definition,
              kind: gvk,
              summary: `read ${sub} of the specified ${info.kind}`,
            },
            {
              method: 'put',
              action: 'put',
              body: definition,
              response: definition,
              kind: gvk,
              summary: `replace ${sub} of the specified ${info.kind}`,
            },
            {
              method: 'patch',
              action: 'patch',
              body: 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
              response: definition,
              kind: gvk,
              summary: `partially update ${sub} of the specified ${info.kind}`,
            },
          ],
        });
      }
    }
    if (info.custom !== undefined) for (const entry of entries.slice(firstEntry)) entry.custom = true;
  }
  for (const review of REVIEW_RESOURCES.filter(
    (candidate) => candidate.group === group && candidate.version === version,
  )) {
    const definition = definitionOf(group, review.kind);
    entries.push({
      path: `${base}/${review.resource}`,
      pathParameters: [],
      operations: [
        {
          method: 'post',
          action: 'post',
          body: definition,
          response: definition,
          kind: { group, version, kind: review.kind },
          summary: `create a ${review.kind}`,
        },
      ],
    });
  }
  return entries;
}

/** Every group version the server documents. */
function groupVersions(extension?: OpenApiExtension): { group: string; version: string }[] {
  return [{ group: '', version: 'v1' }, ...API_GROUPS, ...(extension?.groupVersions ?? [])];
}

function queryParameters(operation: Operation): string[] {
  if (operation.action === 'list')
    return ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'watch', 'pretty'];
  if (operation.action === 'delete' || operation.action === 'deletecollection')
    return ['dryRun', 'gracePeriodSeconds', 'pretty'];
  if (operation.action === 'get') return ['pretty'];
  return WRITE_PARAMETERS;
}

function operationId(operation: Operation, path: string): string {
  const verb = {
    get: 'read',
    list: 'list',
    post: 'create',
    put: 'replace',
    patch: 'patch',
    delete: 'delete',
    deletecollection: 'deleteCollection',
  }[operation.action];
  const namespaced = path.includes('{namespace}') ? 'Namespaced' : '';
  const tail =
    path
      .split('/')
      .filter((part) => !part.startsWith('{'))
      .pop() ?? '';
  return `${verb}${namespaced}${operation.kind.kind}${tail === 'status' ? 'Status' : ''}`;
}

// ------------------------------------------------------------------------------------- v3

function v3Refs(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replaceAll('#/definitions/', '#/components/schemas/')) as unknown;
}

/**
 * The v3 documents already built, per served state: the extension object (the CRD registry hands out
 * the same one until what it serves changes, then a new one) or BUILT_IN, then by key. A document is a
 * pure function of its group version, the Kubernetes version and that state, and is only serialised
 * (never changed) once built, so it is built once: kubectl reads the index on every apply and wait, and
 * the index builds and hashes every group version's document, each with every schema rewritten.
 */
const BUILT_IN: object = {};
const v3Built = new WeakMap<object, Map<string, Schema>>();

function builtOnce(extension: OpenApiExtension | undefined, key: string, build: () => Schema): Schema {
  const state = extension ?? BUILT_IN;
  let built = v3Built.get(state);
  if (built === undefined) {
    built = new Map();
    v3Built.set(state, built);
  }
  let found = built.get(key);
  if (found === undefined) {
    found = build();
    built.set(key, found);
  }
  return found;
}

/** Every schema, references in the v3 form: the same for each group version of one served state. */
function v3Schemas(extension?: OpenApiExtension): Schema {
  return builtOnce(
    extension,
    'schemas',
    () => v3Refs({ ...DEFINITIONS, ...extension?.definitions }) as Schema,
  );
}

function v3Document(
  group: string,
  version: string,
  kubernetesVersion: string,
  extension?: OpenApiExtension,
): Schema {
  return builtOnce(extension, `document ${kubernetesVersion} ${group}/${version}`, () =>
    buildV3Document(group, version, kubernetesVersion, extension),
  );
}

function buildV3Document(
  group: string,
  version: string,
  kubernetesVersion: string,
  extension?: OpenApiExtension,
): Schema {
  const paths: Record<string, Schema> = {};
  for (const entry of pathsOf(group, version, extension)) {
    const item: Schema = {
      parameters: entry.pathParameters.map((name) => ({
        name,
        in: 'path',
        description: PARAMETER_DESCRIPTIONS[name] ?? name,
        required: true,
        schema: { type: 'string', uniqueItems: true },
      })),
    };
    for (const operation of entry.operations) {
      const content = (name: string): Schema => ({
        'application/json': { schema: { $ref: `#/components/schemas/${name}` } },
      });
      item[operation.method] = {
        tags: [groupVersionPath(group, version).replaceAll('/', '_')],
        description: operation.summary,
        operationId: operationId(operation, entry.path),
        parameters: queryParameters(operation).map((name) => ({
          name,
          in: 'query',
          description: PARAMETER_DESCRIPTIONS[name] ?? name,
          schema: {
            type:
              name === 'limit' || name === 'gracePeriodSeconds'
                ? 'integer'
                : name === 'watch'
                  ? 'boolean'
                  : 'string',
            uniqueItems: true,
          },
        })),
        ...(operation.body === undefined
          ? {}
          : {
              requestBody: {
                content:
                  operation.action === 'patch'
                    ? Object.fromEntries(
                        patchMediaTypes(entry.custom).map((type) => [
                          type,
                          { schema: { $ref: `#/components/schemas/${operation.body ?? ''}` } },
                        ]),
                      )
                    : content(operation.body),
                required: true,
              },
            }),
        responses: {
          '200': { description: 'OK', content: content(operation.response) },
          ...(operation.method === 'post'
            ? { '201': { description: 'Created', content: content(operation.response) } }
            : {}),
          '401': { description: 'Unauthorized' },
        },
        'x-kubernetes-action': operation.action,
        'x-kubernetes-group-version-kind': operation.kind,
      };
    }
    paths[entry.path] = item;
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: kubernetesVersion },
    paths,
    components: {
      schemas: v3Schemas(extension),
      securitySchemes: {
        BearerToken: {
          type: 'apiKey',
          description: 'Bearer Token authentication',
          name: 'authorization',
          in: 'header',
        },
      },
    },
  };
}

/** `/openapi/v3`: one entry per group version, its URL carrying a content hash (kubectl caches by it). */
export function openApiV3Index(kubernetesVersion: string, extension?: OpenApiExtension): Schema {
  return builtOnce(extension, `index ${kubernetesVersion}`, () => buildV3Index(kubernetesVersion, extension));
}

function buildV3Index(kubernetesVersion: string, extension?: OpenApiExtension): Schema {
  const paths: Record<string, Schema> = {};
  for (const { group, version } of groupVersions(extension)) {
    const key = groupVersionPath(group, version);
    const hash = createHash('sha512')
      .update(JSON.stringify(v3Document(group, version, kubernetesVersion, extension)))
      .digest('hex')
      .toUpperCase();
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { paths };
}

/** `/openapi/v3/api/v1`, `/openapi/v3/apis/apps/v1`…; undefined for a group version not served. */
export function openApiV3Document(
  path: string,
  kubernetesVersion: string,
  extension?: OpenApiExtension,
): Schema | undefined {
  const found = groupVersions(extension).find(
    ({ group, version }) => groupVersionPath(group, version) === path,
  );
  return found ? v3Document(found.group, found.version, kubernetesVersion, extension) : undefined;
}

// ------------------------------------------------------------------------------------- v2

/**
 * The v2 form of the schemas: a reference is a plain `$ref` next to its description, where v3 wraps it
 * in `allOf` with a `default` (kubernetes/kubernetes `api/openapi-spec/swagger.json` against
 * `api/openapi-spec/v3/*.json`). client-go's v2 reader (kube-openapi `pkg/util/proto`) follows only
 * the plain form: behind an `allOf` kubectl explain and validation see an arbitrary value.
 */
function v2Refs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(v2Refs);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { allOf, ...rest } = schema as Schema;
  const only = Array.isArray(allOf) && allOf.length === 1 ? (allOf[0] as Schema | undefined) : undefined;
  if (only && typeof only.$ref === 'string' && Object.keys(only).length === 1) {
    const { default: _default, ...kept } = rest;
    return {
      ...Object.fromEntries(Object.entries(kept).map(([key, value]) => [key, v2Refs(value)])),
      $ref: only.$ref,
    };
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, v2Refs(value)]));
}

/** `/openapi/v2` as JSON (Swagger 2.0), every path and definition in one document. */
export function openApiV2Document(kubernetesVersion: string, extension?: OpenApiExtension): Schema {
  const paths: Record<string, Schema> = {};
  for (const { group, version } of groupVersions(extension)) {
    for (const entry of pathsOf(group, version, extension)) {
      const item: Schema = {
        parameters: entry.pathParameters.map((name) => ({
          name,
          in: 'path',
          description: PARAMETER_DESCRIPTIONS[name] ?? name,
          required: true,
          type: 'string',
          uniqueItems: true,
        })),
      };
      for (const operation of entry.operations) {
        item[operation.method] = {
          description: operation.summary,
          operationId: operationId(operation, entry.path),
          consumes: operation.action === 'patch' ? patchMediaTypes(entry.custom) : ['*/*'],
          produces: ['application/json'],
          parameters: [
            ...queryParameters(operation).map((name) => ({
              name,
              in: 'query',
              description: PARAMETER_DESCRIPTIONS[name] ?? name,
              type: 'string',
              uniqueItems: true,
            })),
            ...(operation.body === undefined
              ? []
              : [
                  {
                    name: 'body',
                    in: 'body',
                    required: true,
                    schema: { $ref: `#/definitions/${operation.body}` },
                  },
                ]),
          ],
          responses: {
            '200': { description: 'OK', schema: { $ref: `#/definitions/${operation.response}` } },
            '401': { description: 'Unauthorized' },
          },
          'x-kubernetes-action': operation.action,
          'x-kubernetes-group-version-kind': operation.kind,
        };
      }
      paths[entry.path] = item;
    }
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: kubernetesVersion },
    paths,
    definitions: v2Refs({ ...DEFINITIONS, ...extension?.definitionsV2 }),
    securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  };
}
