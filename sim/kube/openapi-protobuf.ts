/**
 * The protobuf form of `/openapi/v2`: the same Swagger 2.0 document openapi.ts serves as JSON, encoded
 * as the gnostic `openapi.v2.Document` message, which is what kube-openapi serves for
 * `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (it parses its JSON with
 * gnostic's `ParseDocument` and marshals the result: kubernetes/kube-openapi `pkg/handler/handler.go`,
 * `ToProtoBinary`). kubectl 1.20–1.28 read it for client-side validation, and kubectl 1.32 still does
 * for `kubectl explain --output=plaintext-openapiv2`.
 *
 * Field numbers are those of google/gnostic-models `openapiv2/OpenAPIv2.proto`. Only what the served
 * document uses is encoded; a value gnostic keeps as `Any` (vendor extensions, `default`, `example`,
 * `enum`) carries its YAML text, written here as JSON, which is YAML too (sim/README.md).
 */
import { createHash } from 'node:crypto';

import type { Schema } from './openapi-schemas.js';

// ------------------------------------------------------------------------------------ wire format

function varint(value: number | bigint): Buffer {
  let rest = BigInt(value);
  if (rest < 0n) rest += 1n << 64n; // int64 negatives are ten-byte two's complement
  const bytes: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest === 0n ? low : low | 0x80);
  } while (rest !== 0n);
  return Buffer.from(bytes);
}

function key(field: number, wire: 0 | 1 | 2): Buffer {
  return varint((field << 3) | wire);
}

function bytesField(field: number, value: Buffer): Buffer {
  return Buffer.concat([key(field, 2), varint(value.length), value]);
}

/** A string field; proto3 leaves out the empty string. */
function stringField(field: number, value: unknown): Buffer[] {
  return typeof value === 'string' && value !== '' ? [bytesField(field, Buffer.from(value, 'utf8'))] : [];
}

function stringsField(field: number, value: unknown): Buffer[] {
  return Array.isArray(value) ? value.flatMap((item) => stringField(field, item)) : [];
}

function boolField(field: number, value: unknown): Buffer[] {
  return value === true ? [Buffer.concat([key(field, 0), varint(1)])] : [];
}

function int64Field(field: number, value: unknown): Buffer[] {
  return typeof value === 'number' && Number.isInteger(value) && value !== 0
    ? [Buffer.concat([key(field, 0), varint(value)])]
    : [];
}

function doubleField(field: number, value: unknown): Buffer[] {
  if (typeof value !== 'number' || value === 0) return [];
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleLE(value);
  return [Buffer.concat([key(field, 1), bytes])];
}

function messageField(field: number, parts: Buffer[] | undefined): Buffer[] {
  return parts === undefined ? [] : [bytesField(field, Buffer.concat(parts))];
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ------------------------------------------------------------------------------------ messages

/** `Any`: gnostic keeps the YAML text of the value (field 2). */
function any(value: unknown): Buffer[] {
  return stringField(2, JSON.stringify(value));
}

/** `NamedAny` entries for the `x-…` keys of an object (vendor_extension). */
function vendorExtensions(field: number, object: Schema): Buffer[] {
  return Object.entries(object)
    .filter(([name]) => name.startsWith('x-'))
    .flatMap(([name, value]) =>
      messageField(field, [...stringField(1, name), ...messageField(2, any(value))]),
    );
}

function anyList(field: number, value: unknown): Buffer[] {
  return Array.isArray(value) ? value.flatMap((item) => messageField(field, any(item))) : [];
}

function schema(value: Schema): Buffer[] {
  const items = value.items;
  const additional = value.additionalProperties;
  const type = value.type;
  return [
    ...stringField(1, value.$ref),
    ...stringField(2, value.format),
    ...stringField(3, value.title),
    ...stringField(4, value.description),
    ...(value.default === undefined ? [] : messageField(5, any(value.default))),
    ...doubleField(6, value.multipleOf),
    ...doubleField(7, value.maximum),
    ...boolField(8, value.exclusiveMaximum),
    ...doubleField(9, value.minimum),
    ...boolField(10, value.exclusiveMinimum),
    ...int64Field(11, value.maxLength),
    ...int64Field(12, value.minLength),
    ...stringField(13, value.pattern),
    ...int64Field(14, value.maxItems),
    ...int64Field(15, value.minItems),
    ...boolField(16, value.uniqueItems),
    ...int64Field(17, value.maxProperties),
    ...int64Field(18, value.minProperties),
    ...stringsField(19, value.required),
    ...anyList(20, value.enum),
    // AdditionalPropertiesItem: oneof schema (1) | boolean (2).
    ...(isObject(additional)
      ? messageField(21, messageField(1, schema(additional)))
      : typeof additional === 'boolean'
        ? messageField(21, [Buffer.concat([key(2, 0), varint(additional ? 1 : 0)])])
        : []),
    // TypeItem: repeated string value (1).
    ...(typeof type === 'string' || Array.isArray(type)
      ? messageField(22, stringsField(1, Array.isArray(type) ? type : [type]))
      : []),
    // ItemsItem: repeated Schema schema (1).
    ...(isObject(items)
      ? messageField(23, messageField(1, schema(items)))
      : Array.isArray(items)
        ? messageField(
            23,
            items.filter(isObject).flatMap((item) => messageField(1, schema(item))),
          )
        : []),
    ...(Array.isArray(value.allOf)
      ? value.allOf.filter(isObject).flatMap((item) => messageField(24, schema(item)))
      : []),
    // Properties: repeated NamedSchema additional_properties (1).
    ...(isObject(value.properties) ? messageField(25, namedSchemas(value.properties)) : []),
    ...stringField(26, value.discriminator),
    ...boolField(27, value.readOnly),
    ...(value.example === undefined ? [] : messageField(30, any(value.example))),
    ...vendorExtensions(31, value),
  ];
}

function namedSchemas(map: Schema): Buffer[] {
  return Object.entries(map)
    .filter((entry): entry is [string, Schema] => isObject(entry[1]))
    .flatMap(([name, value]) =>
      messageField(1, [...stringField(1, name), ...messageField(2, schema(value))]),
    );
}

/** A non-body parameter's sub-schema: query (3) and path (4) share their first field numbers. */
function nonBodyParameter(parameter: Schema): Buffer[] {
  const common = [
    ...boolField(1, parameter.required),
    ...stringField(2, parameter.in),
    ...stringField(3, parameter.description),
    ...stringField(4, parameter.name),
  ];
  if (parameter.in === 'query') {
    // QueryParameterSubSchema: allow_empty_value 5, type 6, format 7, unique_items 20, vendor_extension 23.
    return messageField(3, [
      ...common,
      ...boolField(5, parameter.allowEmptyValue),
      ...stringField(6, parameter.type),
      ...stringField(7, parameter.format),
      ...boolField(20, parameter.uniqueItems),
      ...vendorExtensions(23, parameter),
    ]);
  }
  if (parameter.in === 'path') {
    // PathParameterSubSchema: type 5, format 6, unique_items 19, vendor_extension 22.
    return messageField(4, [
      ...common,
      ...stringField(5, parameter.type),
      ...stringField(6, parameter.format),
      ...boolField(19, parameter.uniqueItems),
      ...vendorExtensions(22, parameter),
    ]);
  }
  // HeaderParameterSubSchema: type 5, format 6, unique_items 19, vendor_extension 22.
  return messageField(1, [
    ...common,
    ...stringField(5, parameter.type),
    ...stringField(6, parameter.format),
    ...boolField(19, parameter.uniqueItems),
    ...vendorExtensions(22, parameter),
  ]);
}

/** ParametersItem: oneof Parameter (1) { body_parameter 1 | non_body_parameter 2 } | json_reference (2). */
function parametersItem(parameter: Schema): Buffer[] {
  if (typeof parameter.$ref === 'string') return messageField(2, stringField(1, parameter.$ref));
  if (parameter.in === 'body') {
    return messageField(
      1,
      messageField(1, [
        ...stringField(1, parameter.description),
        ...stringField(2, parameter.name),
        ...stringField(3, parameter.in),
        ...boolField(4, parameter.required),
        ...(isObject(parameter.schema) ? messageField(5, schema(parameter.schema)) : []),
        ...vendorExtensions(6, parameter),
      ]),
    );
  }
  return messageField(1, messageField(2, nonBodyParameter(parameter)));
}

function parameters(field: number, value: unknown): Buffer[] {
  return Array.isArray(value)
    ? value.filter(isObject).flatMap((item) => messageField(field, parametersItem(item)))
    : [];
}

/** Responses: repeated NamedResponseValue response_code (1); ResponseValue.response (1) is a Response. */
function responses(value: Schema): Buffer[] {
  return Object.entries(value)
    .filter((entry): entry is [string, Schema] => isObject(entry[1]))
    .flatMap(([code, response]) =>
      messageField(1, [
        ...stringField(1, code),
        ...messageField(
          2,
          messageField(1, [
            ...stringField(1, response.description),
            // SchemaItem: oneof schema (1) | file_schema (2).
            ...(isObject(response.schema) ? messageField(2, messageField(1, schema(response.schema))) : []),
            ...vendorExtensions(5, response),
          ]),
        ),
      ]),
    );
}

function operation(value: Schema): Buffer[] {
  return [
    ...stringsField(1, value.tags),
    ...stringField(2, value.summary),
    ...stringField(3, value.description),
    ...stringField(5, value.operationId),
    ...stringsField(6, value.produces),
    ...stringsField(7, value.consumes),
    ...parameters(8, value.parameters),
    ...(isObject(value.responses) ? messageField(9, responses(value.responses)) : []),
    ...stringsField(10, value.schemes),
    ...boolField(11, value.deprecated),
    ...vendorExtensions(13, value),
  ];
}

const OPERATION_FIELDS = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 } as const;

function pathItem(value: Schema): Buffer[] {
  return [
    ...stringField(1, value.$ref),
    ...Object.entries(OPERATION_FIELDS).flatMap(([method, field]) => {
      const found = value[method];
      return isObject(found) ? messageField(field, operation(found)) : [];
    }),
    ...parameters(9, value.parameters),
    ...vendorExtensions(10, value),
  ];
}

/** SecurityDefinitions: NamedSecurityDefinitionsItem entries; only apiKey schemes (2) are served. */
function securityDefinitions(value: Schema): Buffer[] {
  return Object.entries(value)
    .filter((entry): entry is [string, Schema] => isObject(entry[1]) && entry[1].type === 'apiKey')
    .flatMap(([name, definition]) =>
      messageField(1, [
        ...stringField(1, name),
        ...messageField(
          2,
          messageField(2, [
            ...stringField(1, definition.type),
            ...stringField(2, definition.name),
            ...stringField(3, definition.in),
            ...stringField(4, definition.description),
            ...vendorExtensions(5, definition),
          ]),
        ),
      ]),
    );
}

/** SecurityRequirement: repeated NamedStringArray (1), each a StringArray of scopes. */
function securityRequirement(value: Schema): Buffer[] {
  return Object.entries(value).flatMap(([name, scopes]) =>
    messageField(1, [...stringField(1, name), ...messageField(2, stringsField(1, scopes))]),
  );
}

/** The `openapi.v2.Document` encoding of a Swagger 2.0 document. */
export function encodeOpenApiV2(document: Schema): Buffer {
  const info = isObject(document.info) ? document.info : {};
  const paths = isObject(document.paths) ? document.paths : {};
  return Buffer.concat([
    ...stringField(1, document.swagger),
    ...messageField(2, [
      ...stringField(1, info.title),
      ...stringField(2, info.version),
      ...stringField(3, info.description),
      ...vendorExtensions(7, info),
    ]),
    ...stringField(3, document.host),
    ...stringField(4, document.basePath),
    ...stringsField(5, document.schemes),
    ...stringsField(6, document.consumes),
    ...stringsField(7, document.produces),
    // Paths: NamedPathItem path (2).
    ...messageField(8, [
      ...vendorExtensions(1, paths),
      ...Object.entries(paths)
        .filter((entry): entry is [string, Schema] => !entry[0].startsWith('x-') && isObject(entry[1]))
        .flatMap(([path, item]) =>
          messageField(2, [...stringField(1, path), ...messageField(2, pathItem(item))]),
        ),
    ]),
    ...(isObject(document.definitions) ? messageField(9, namedSchemas(document.definitions)) : []),
    ...(Array.isArray(document.security)
      ? document.security.filter(isObject).flatMap((item) => messageField(12, securityRequirement(item)))
      : []),
    ...(isObject(document.securityDefinitions)
      ? messageField(13, securityDefinitions(document.securityDefinitions))
      : []),
    ...vendorExtensions(16, document),
  ]);
}

// ------------------------------------------------------------------------------------ negotiation

/** What kube-openapi answers with for the protobuf form, whichever of its two names was asked for. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PROTOBUF_SUBTYPES = [
  'com.github.proto-openapi.spec.v2@v1.0+protobuf',
  'com.github.proto-openapi.spec.v2.v1.0+protobuf',
];

/**
 * The form of `/openapi/v2` an Accept header asks for, like kube-openapi's handler: the clauses in
 * order of preference (q, then the more specific; goautoneg), the first that names JSON or a protobuf
 * form (or a wildcard) wins; undefined (406) when none does. An empty header means any.
 */
export function negotiateOpenApiV2(accept: string): 'json' | 'protobuf' | undefined {
  const clauses = (accept.trim() === '' ? '*/*' : accept)
    .split(',')
    .map((part, index) => {
      const [media = '', ...parameters] = part.split(';').map((piece) => piece.trim());
      const q = parameters.find((parameter) => parameter.startsWith('q='));
      const [type = '', subtype = ''] = media.toLowerCase().split('/');
      return { type, subtype, q: q === undefined ? 1 : Number(q.slice(2)), index };
    })
    .filter((clause) => clause.type !== '' && Number.isFinite(clause.q) && clause.q > 0)
    .sort(
      (a, b) =>
        b.q - a.q ||
        Number(a.subtype === '*') - Number(b.subtype === '*') ||
        Number(a.type === '*') - Number(b.type === '*') ||
        a.index - b.index,
    );
  for (const { type, subtype } of clauses) {
    if (type !== 'application' && type !== '*') continue;
    if (subtype === '*' || subtype === 'json') return 'json';
    if (PROTOBUF_SUBTYPES.includes(subtype)) return 'protobuf';
  }
  return undefined;
}

const cache = new Map<string, { json: string; protobuf: Buffer; etag: string }>();

/** The JSON text, its protobuf encoding and the ETag kube-openapi sends (SHA-512 of the JSON, hex). */
export function openApiV2Forms(
  kubernetesVersion: string,
  build: () => Schema,
): { json: string; protobuf: Buffer; etag: string } {
  const found = cache.get(kubernetesVersion);
  if (found) return found;
  const document = build();
  const json = JSON.stringify(document);
  const forms = {
    json,
    protobuf: encodeOpenApiV2(document),
    etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"`,
  };
  // Keys change with the served custom resources (`<version>#<revision>`): keep the cache small.
  if (cache.size >= 16) cache.delete(cache.keys().next().value ?? '');
  cache.set(kubernetesVersion, forms);
  return forms;
}
