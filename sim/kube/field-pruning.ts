/**
 * Server-side field validation and pruning of the objects a client writes (KEP-2885, GA in 1.27):
 * a real API server decodes a body into its Go types, so a field the schema does not know is never
 * stored. With `fieldValidation=Warn` (the default) each dropped field comes back as a
 * `Warning: 299 - "unknown field \"spec.foo\""` header, with `Strict` the write is refused, with
 * `Ignore` the field is dropped silently.
 *
 * Upstream: kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go` and
 * `update.go` (a strict decoding error becomes `errors.NewBadRequest`, 400, or warnings through
 * `addStrictDecodingWarnings` under Warn), `patch.go` (the patched object is decoded strictly; the
 * error is `errors.NewInvalid(schema.GroupKind{}, "", field.Invalid(field.NewPath("patch"), …))`, 422),
 * `staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go` (`ValidateFieldValidation`),
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation and
 * https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/2885-server-side-unknown-field-validation.
 *
 * Which fields exist comes from the simulator's OpenAPI schemas (openapi-schemas.ts); the parts they
 * keep open (`x-kubernetes-preserve-unknown-fields`, maps with `additionalProperties`) are kept as
 * written.
 */
import type { KubeObject } from '../contracts.js';
import { definitionOf, DEFINITIONS, type Schema } from './openapi-schemas.js';
import { KubeApiError } from './status.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const SUPPORTED = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The request's `fieldValidation` (empty or absent means Warn); another value is refused the way
 * `ValidateFieldValidation` does: 422 on the request's options.
 */
export function parseFieldValidation(url: URL, optionsKind: string): FieldValidation {
  const value = url.searchParams.get('fieldValidation') ?? '';
  if (!SUPPORTED.includes(value)) {
    const detail = `Unsupported value: "${value}": supported values: ${SUPPORTED.map((s) => `"${s}"`).join(', ')}`;
    throw new KubeApiError(
      'Invalid',
      `${optionsKind}.meta.k8s.io "" is invalid: fieldValidation: ${detail}`,
      {
        group: 'meta.k8s.io',
        kind: optionsKind,
        causes: [{ reason: 'FieldValueNotSupported', message: detail, field: 'fieldValidation' }],
      },
    );
  }
  return value === '' ? 'Warn' : (value as FieldValidation);
}

function resolve(schema: Schema): Schema {
  const direct = schema.$ref;
  const viaAllOf = Array.isArray(schema.allOf) ? (schema.allOf[0] as Schema | undefined)?.$ref : undefined;
  const target = typeof direct === 'string' ? direct : typeof viaAllOf === 'string' ? viaAllOf : undefined;
  if (target === undefined) return schema;
  return DEFINITIONS[target.replace('#/definitions/', '')] ?? {};
}

interface Unknown {
  path: string;
  /** The object holding the field, and its key (to prune it). */
  holder: Record<string, unknown>;
  key: string;
}

function walk(value: unknown, schema: Schema, path: string, found: Unknown[]): void {
  const resolved = resolve(schema);
  if (Array.isArray(value)) {
    const items = resolved.items as Schema | undefined;
    if (items) value.forEach((item, index) => walk(item, items, `${path}[${index}]`, found));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (
    resolved['x-kubernetes-preserve-unknown-fields'] === true ||
    resolved.additionalProperties !== undefined
  )
    return;
  const properties = resolved.properties as Record<string, Schema> | undefined;
  if (!properties) return;
  const holder = value as Record<string, unknown>;
  for (const [key, child] of Object.entries(holder)) {
    // Strategic-merge-patch directives ($patch, $retainKeys, $setElementOrder/…) are not fields.
    if (key.startsWith('$')) continue;
    const childPath = path === '' ? key : `${path}.${key}`;
    const childSchema = properties[key];
    if (!childSchema) found.push({ path: childPath, holder, key });
    else walk(child, childSchema, childPath, found);
  }
}

function unknownOf(group: string, kind: string, object: unknown): Unknown[] {
  const schema = DEFINITIONS[definitionOf(group, kind)];
  if (!schema) return [];
  const found: Unknown[] = [];
  walk(object, schema, '', found);
  return found;
}

/** The `Warning` header value for dropped fields, one `299 - "…"` per field as the server sends it. */
export function warningHeader(fields: readonly string[]): Record<string, string> {
  if (fields.length === 0) return {};
  return {
    Warning: fields.map((field) => `299 - ${JSON.stringify(`unknown field "${field}"`)}`).join(', '),
  };
}

export interface PruneRequest {
  group: string;
  kind: string;
  mode: FieldValidation;
  /** How a Strict refusal is worded: a create/update body (400) or a patched object (422). */
  verb: 'create' | 'update' | 'patch';
  /** The stored object a PUT or PATCH replaces: fields it already has are not the client's doing. */
  existing?: KubeObject;
  /**
   * A custom resource's structural pruning (crd-schema.ts) in place of the built-in schemas: drops
   * what the CRD's schema does not specify from the object it is given and returns those paths.
   */
  prune?: (object: KubeObject) => string[];
}

/**
 * Drops from `object` (in place) the fields its kind's schema does not know and returns their paths
 * for the Warning header (empty under Ignore); under Strict refuses the write instead. Fields the
 * stored object already had are left alone: a real server never stored them, only the simulator's own
 * world seeds objects that way, and a client's PUT of what it read must not lose them.
 */
export function pruneUnknownFields(object: KubeObject, request: PruneRequest): string[] {
  if (request.prune) {
    const paths = request.prune(structuredClone(object));
    if (paths.length === 0) return [];
    if (request.mode === 'Strict') throw strictError(object, paths, request.verb);
    request.prune(object);
    return request.mode === 'Warn' ? paths : [];
  }
  const before = new Set(
    request.existing === undefined
      ? []
      : unknownOf(request.group, request.kind, request.existing).map((field) => field.path),
  );
  const found = unknownOf(request.group, request.kind, object).filter((field) => !before.has(field.path));
  if (found.length === 0) return [];
  const paths = found.map((field) => field.path);
  if (request.mode === 'Strict') throw strictError(object, paths, request.verb);
  for (const field of found) delete field.holder[field.key];
  return request.mode === 'Warn' ? paths : [];
}

/** The Strict refusal: 400 for a create or update body, 422 naming the patched object for a patch. */
function strictError(object: KubeObject, paths: readonly string[], verb: PruneRequest['verb']): KubeApiError {
  const detail = `strict decoding error: ${paths.map((path) => `unknown field "${path}"`).join(', ')}`;
  if (verb !== 'patch') return new KubeApiError('BadRequest', detail);
  const value = JSON.stringify(JSON.stringify(object));
  return new KubeApiError('Invalid', ` "" is invalid: patch: Invalid value: ${value}: ${detail}`, {
    causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${detail}`, field: 'patch' }],
  });
}
